package dataset

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/probes"
	"bagen-data/rollout"
)

// fields counts whitespace-separated words, the tokenizer
// testdata/bagen-v1/reference.py gives the authors' script.
type fields struct{}

func (fields) Count(s string) int { return len(strings.Fields(s)) }

// reference is testdata/bagen-v1/reference.json: the splits and rows the
// authors' pipeline (prepare_all_ablations.sh, prepare_budget_probe.py at
// mll-lab-nu/BAGEN 58bef4c) makes of testdata/bagen-v1/rollouts.jsonl with
// that tokenizer; reference.py says how it was written.
type reference struct {
	Splits map[string][]string `json:"splits"`
	Budget int64               `json:"budget"`
	RL     []refRL             `json:"rl"`
	Eval   []refRL             `json:"eval_test"`
	SFT    map[string][]refSFT `json:"-"`
}

type refRL struct {
	DataSource  string            `json:"data_source"`
	Prompt      []rollout.Message `json:"prompt"`
	RewardModel RewardModel       `json:"reward_model"`
	ExtraInfo   struct {
		CustomID        string       `json:"custom_id"`
		RemainingTokens int64        `json:"remaining_tokens"`
		IsPossible      bool         `json:"is_possible"`
		PerTurnTokens   []TurnTokens `json:"per_turn_tokens"`
	} `json:"extra_info"`
}

type refSFT struct {
	Messages      []rollout.Message `json:"messages"`
	PerTurnTokens []TurnTokens      `json:"per_turn_tokens"`
}

func loadReference(t *testing.T) reference {
	t.Helper()
	b, err := os.ReadFile("testdata/bagen-v1/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	ref.SFT = map[string][]refSFT{}
	for _, name := range []string{"sft_point", "sft_interval_pct10", "sft_interval_fix100", "sft_interval_pct10_think"} {
		var rows []refSFT
		if err := json.Unmarshal(all[name], &rows); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ref.SFT[name] = rows
	}
	return ref
}

func TestAssignBagenV1MatchesReference(t *testing.T) {
	ref := loadReference(t)
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, "testdata/bagen-v1/rollouts.jsonl")), "\n") {
		var rec struct {
			ID string `json:"custom_id"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.ID)
	}
	got := map[string][]string{}
	for i, s := range AssignBagenV1(len(ids), Ratio{40, 50, 10}, 42) {
		name := [...]string{"sft", "rl", "test"}[s]
		got[name] = append(got[name], ids[i])
	}
	want := map[string][]string{}
	for name, list := range ref.Splits {
		want[name] = sortedCopy(list)
	}
	for name := range got {
		got[name] = sortedCopy(got[name])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("split membership (-reference +go):\n%s", diff)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// buildBagenV1 builds testdata/bagen-v1/rollouts.jsonl as
// prepare_all_ablations.sh does, with --compat bagen-v1.
func buildBagenV1(t *testing.T, width string, think bool) string {
	t.Helper()
	ref := loadReference(t)
	w, err := probes.ParseWidth(width)
	if err != nil {
		t.Fatal(err)
	}
	task, err := probes.BagenV1Compat.Preset("sokoban")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Task: task, Compat: probes.BagenV1Compat, Budget: ref.Budget, Width: w, Think: think, Seed: 42,
		Probes:  probes.Options{Every: 1},
		Balance: Balance{Oversample: 2, Ratio: new(1.0)}, Counter: fields{}, Version: "test",
	}
	out := filepath.Join(t.TempDir(), "out")
	src := rollout.FileSource("testdata/bagen-v1/rollouts.jsonl")
	if _, err := Build(context.Background(), []rollout.Source{src}, out, cfg); err != nil {
		t.Fatal(err)
	}
	return out
}

func rlView(rows []RLRow) []refRL {
	out := make([]refRL, len(rows))
	for i, r := range rows {
		v := refRL{DataSource: r.DataSource, Prompt: r.Prompt, RewardModel: r.RewardModel}
		v.ExtraInfo.CustomID, v.ExtraInfo.RemainingTokens = r.ExtraInfo.CustomID, r.ExtraInfo.RemainingTokens
		v.ExtraInfo.IsPossible, v.ExtraInfo.PerTurnTokens = r.ExtraInfo.IsPossible, r.ExtraInfo.PerTurnTokens
		out[i] = v
	}
	return out
}

func sftView(rows []SFTRow) []refSFT {
	out := make([]refSFT, len(rows))
	for i, r := range rows {
		out[i] = refSFT{Messages: r.Messages, PerTurnTokens: r.PerTurnTokens}
	}
	return out
}

// TestBuildBagenV1MatchesReference compares every row of a --compat
// bagen-v1 build, in order, with the authors' pipeline: the RL split
// (balanced, oversampled, shuffled), the held-out eval split and the SFT
// split for four of the ablation variants.
func TestBuildBagenV1MatchesReference(t *testing.T) {
	ref := loadReference(t)
	empty := cmp.Transformer("nilToEmpty", func(v []TurnTokens) []TurnTokens {
		if v == nil {
			return []TurnTokens{}
		}
		return v
	})
	out := buildBagenV1(t, "pct10", false)
	rl, err := ReadRL(filepath.Join(out, RLFile))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ref.RL, rlView(rl), empty); diff != "" {
		t.Errorf("rl rows (-reference +go):\n%s", diff)
	}
	eval, err := ReadRL(filepath.Join(out, EvalFile))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ref.Eval, rlView(eval), empty); diff != "" {
		t.Errorf("eval rows (-reference +go):\n%s", diff)
	}
	for _, v := range []struct {
		name, width string
		think       bool
	}{
		{"sft_interval_pct10", "pct10", false},
		{"sft_point", "point", false},
		{"sft_interval_fix100", "fix100", false},
		{"sft_interval_pct10_think", "pct10", true},
	} {
		dir := out
		if v.width != "pct10" || v.think {
			dir = buildBagenV1(t, v.width, v.think)
		}
		sft, err := ReadSFT(filepath.Join(dir, SFTFile))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(ref.SFT[v.name], sftView(sft), empty); diff != "" {
			t.Errorf("%s rows (-reference +go):\n%s", v.name, diff)
		}
	}
	if len(ref.RL) != 16 || len(ref.Eval) == 0 || len(ref.SFT["sft_point"]) == 0 {
		t.Errorf("reference has %d rl, %d eval, %d sft rows: the fixture no longer exercises the pipeline", len(ref.RL), len(ref.Eval), len(ref.SFT["sft_point"]))
	}
}
