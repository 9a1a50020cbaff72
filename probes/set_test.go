package probes

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/rollout"
)

// TestNewSetTokens checks a token family's set against the definitions: a
// probe after each turn k = 1 … T−1 of every rollout, possible exactly
// when its rollout succeeded within the budget.
func TestNewSetTokens(t *testing.T) {
	rs, err := ReadReplays(context.Background(), []rollout.Source{rollout.FileSource(filepath.Join("testdata", "replay", "swebench.jsonl"))}, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const budget = 20000
	var want SetStats
	var ids []string
	for _, r := range rs {
		ids = append(ids, r.Traj.ID)
		want.Rollouts++
		want.Candidates += r.Turns() - 1
		if !r.Traj.Success {
			want.Impossible += r.Turns() - 1
			continue
		}
		want.Succeeded++
		if r.Total() <= budget {
			want.Feasible++
			want.Possible += r.Turns() - 1
		} else {
			want.Impossible += r.Turns() - 1
		}
	}
	if want.Possible == 0 || want.Impossible == 0 {
		t.Fatalf("the fixture under budget %d gives %d possible and %d impossible probes; the test needs both", budget, want.Possible, want.Impossible)
	}
	set, err := NewSet(rs, SetConfig{Task: Tasks["swebench"], Budget: Budget{Tokens: budget}})
	if err != nil {
		t.Fatal(err)
	}
	got := set.Stats
	got.Inputs, got.Bases = nil, nil
	want.Setting = "budget 20000 tokens"
	if !cmp.Equal(got, want) || len(set.Bench) != want.Candidates || !slices.Equal(set.IDs, ids) {
		t.Errorf("got %+v, %d probes, ids %v\nwant %+v, %d probes, ids %v", got, len(set.Bench), set.IDs, want, want.Candidates, ids)
	}
}
