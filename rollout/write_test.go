package rollout

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestConvertRoundTrip(t *testing.T) {
	res, err := LoadResults([]string{"testdata/report.json"})
	if err != nil {
		t.Fatal(err)
	}
	o := &Options{Results: res}
	srcs, err := o.Expand([]string{"testdata/mini1", "testdata/mini2", "testdata/harbor", "testdata/openhands/trajectory.json"})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "rollouts.jsonl")
	sum, err := Convert(context.Background(), srcs, out, ConvertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantSum := Summary{Files: 10, Trajectories: 6, Formats: map[string]int{"mini-swe-agent": 3, "atif": 2, "openhands": 1},
		Outcomes: map[Outcome]int{OutcomeResults: 5, OutcomeNone: 1},
		Turns:    13, UsageTurns: 13, Usage: APITokens{Input: 30060, Output: 2775, Reasoning: 1588, Cached: 23324}}
	if diff := cmp.Diff(wantSum, sum); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	want := mustReadAll(t, o, "testdata/mini1", "testdata/mini2", "testdata/harbor", "testdata/openhands/trajectory.json")
	var direct APITokens
	for _, tr := range want {
		for _, a := range tr.API {
			direct.Input, direct.Output, direct.Reasoning, direct.Cached = direct.Input+a.Input, direct.Output+a.Output, direct.Reasoning+a.Reasoning, direct.Cached+a.Cached
		}
	}
	if direct != sum.Usage {
		t.Errorf("summary usage %+v, the trajectories' own sum %+v", sum.Usage, direct)
	}
	got := mustReadAll(t, nil, out)
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Trajectory{}, "Pos", "BySuccessRule")); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
	data, _ := os.ReadFile(out)
	first := `{"custom_id":"django__django-11099","messages":[{"role":"system","content":"You are a helpful assistant that can interact with a computer."},`
	if string(data[:len(first)]) != first {
		t.Errorf("first line starts %q, want %q", data[:len(first)], first)
	}
}

func TestConvertFailureLeavesNoFile(t *testing.T) {
	dir := write(t, map[string]string{"a.jsonl": `{"custom_id":"a","messages":[{"role":"user","content":"x"}]}` + "\n" + `{"custom_id":"a","messages":[{"role":"user","content":"y"}]}`})
	out := filepath.Join(dir, "out.jsonl")
	srcs, _ := Expand([]string{filepath.Join(dir, "a.jsonl")})
	_, err := Convert(context.Background(), srcs, out, ConvertOptions{})
	if want := filepath.Join(dir, "a.jsonl") + `:2: custom_id "a" already used at ` + filepath.Join(dir, "a.jsonl") + ":1"; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output exists after a failed convert: %v", err)
	}
}

// TestConvertOmitsAbsentUsage: a log that records no usage (SWE-agent's
// .traj) gets no per_turn_api_tokens, and reads back without any.
func TestConvertOmitsAbsentUsage(t *testing.T) {
	srcs, err := Expand([]string{"testdata/sweagent"})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "rollouts.jsonl")
	sum, err := Convert(context.Background(), srcs, out, ConvertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(out)
	if strings.Contains(string(data), "per_turn_api_tokens") || sum.UsageTurns != 0 || sum.Turns == 0 {
		t.Errorf("usage written for a log without any (turns %d, with usage %d):\n%.300s", sum.Turns, sum.UsageTurns, data)
	}
	if got := mustReadAll(t, nil, out); got[0].API != nil {
		t.Errorf("read back API %v, want nil", got[0].API)
	}
}

// TestConvertPrefixIDs: --prefix-ids converts files that reuse ids.
func TestConvertPrefixIDs(t *testing.T) {
	dir := write(t, map[string]string{
		"a.jsonl": `{"custom_id":"x","messages":[{"role":"user","content":"u"},{"role":"assistant","content":"a"}]}`,
		"b.jsonl": `{"custom_id":"x","messages":[{"role":"user","content":"u"},{"role":"assistant","content":"b"}]}`,
	})
	srcs, _ := Expand([]string{filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")})
	out := filepath.Join(dir, "out.jsonl")
	if _, err := Convert(context.Background(), srcs, out, ConvertOptions{}); !errors.Is(err, ErrDuplicateID) {
		t.Fatalf("without prefixes: %v, want a duplicate id", err)
	}
	if _, err := Convert(context.Background(), srcs, out, ConvertOptions{PrefixIDs: true}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tr := range mustReadAll(t, nil, out) {
		ids = append(ids, tr.ID)
	}
	if want := []string{"a:x", "b:x"}; !cmp.Equal(ids, want) {
		t.Errorf("ids %q, want %q", ids, want)
	}
}
