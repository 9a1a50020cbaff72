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
		// 2 + 4 mini-swe-agent calls, 1 + 3 ATIF, 3 OpenHands; reasoning
		// recorded on 2 + 3 + 1 + 1 of them.
		Turns: 13, UsageTurns: 13, Usage: UsageSum{Input: 30060, Output: 2775, Reasoning: 1588, Cached: 23324},
		ReasoningTurns: 7}
	if diff := cmp.Diff(wantSum, sum); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	want := mustReadAll(t, o, "testdata/mini1", "testdata/mini2", "testdata/harbor", "testdata/openhands/trajectory.json")
	var direct UsageSum
	for _, tr := range want {
		for _, a := range tr.API {
			direct.Input, direct.Output, direct.Cached = direct.Input+a.Input, direct.Output+a.Output, direct.Cached+a.Cached
			if a.Reasoning != nil {
				direct.Reasoning += *a.Reasoning
			}
		}
	}
	if direct != sum.Usage {
		t.Errorf("summary usage %+v, the trajectories' own sum %+v", sum.Usage, direct)
	}
	got := mustReadAll(t, nil, out)
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Trajectory{}, "Pos", "Extra.BySuccessRule")); diff != "" {
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

// TestCanonicalReasoningNullAndZero: an unrecorded reasoning count is
// written null and a recorded 0 as 0, and each reads back as it was; a
// retried call's usage is written and read back too.
func TestCanonicalReasoningNullAndZero(t *testing.T) {
	tr := Trajectory{ID: "r", Outcome: OutcomeNone, Messages: []Message{user("u"), assistant("a"), user("v"), assistant("b")},
		API: []APITokens{{Input: 10, Output: 5}, {Input: 20, Output: 6, Reasoning: Tokens(0), Retried: Retry{Calls: 2, Output: 9}}}, Inputs: InputsRequest}
	line, err := MarshalCanonical(tr)
	if err != nil {
		t.Fatal(err)
	}
	want := `"per_turn_api_tokens":[{"input":10,"output":5,"reasoning":null,"cached":0},{"input":20,"output":6,"reasoning":0,"cached":0,"retried":{"calls":2,"output":9}}]`
	if !strings.Contains(string(line), want) {
		t.Errorf("canonical line %s\nwant it to contain %s", line, want)
	}
	got, err := Decode(Record{Pos: Position{File: "c.jsonl", Line: 1, Index: -1}, Data: line})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tr.API, got.API); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
}
