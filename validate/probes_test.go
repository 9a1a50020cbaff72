package validate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/dataset"
	"bagen-data/probes"
)

// The probe sets in testdata/probes were written by `bagen-data probes`
// from the synthetic families of probes/testdata/replay:
//
//	bagen-data probes --task warehouse --input probes/testdata/replay/warehouse.jsonl --out warehouse.parquet
//	bagen-data probes --task swebench --input probes/testdata/replay/swebench.jsonl --budget median --max-samples 32 --out swebench.parquet
const (
	warehouseProbes = "testdata/probes/warehouse.parquet" // 16 probes, 4 possible
	swebenchProbes  = "testdata/probes/swebench.parquet"  // 32 probes, 9 possible
)

// probeCopy copies a probe set into a fresh directory, next to a manifest
// whose budget and width would fail every row if it applied to a probe
// set, after applying edit to its rows.
func probeCopy(t *testing.T, src string, edit func([]dataset.RLRow) []dataset.RLRow) string {
	t.Helper()
	dir := t.TempDir()
	manifest := `{"config":{"budget":2500,"width":"fix5","labels":"bagen-v1"},"splits":{"probes":{"rows":{"possible":1,"impossible":1}}}}`
	if err := os.WriteFile(filepath.Join(dir, dataset.ManifestFile), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, filepath.Base(src))
	rows := readRows[dataset.RLRow](t, src)
	if edit != nil {
		rows = edit(rows)
	}
	writeRows(t, path, rows)
	return path
}

func TestProbeSetsPass(t *testing.T) {
	wh, swe := probeCopy(t, warehouseProbes, nil), probeCopy(t, swebenchProbes, nil)
	r := run(t, Config{}, wh, swe)
	if got := problems(r); len(got) != 0 || !r.OK() {
		t.Errorf("clean probe sets: got findings %v", got)
	}
	want := []FileSummary{
		{Path: wh, Kind: kindRL, Split: "probes", Rows: 16, Possible: 4, Impossible: 12, Checked: true},
		{Path: swe, Kind: kindRL, Split: "probes", Rows: 32, Possible: 9, Impossible: 23, Checked: true},
	}
	if d := cmp.Diff(want, r.Files); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	// The manifest next to the files describes no probe set: not used.
	if r.Width != "pct30" || r.WidthSource != "inferred" || r.Manifest != "" {
		t.Errorf("width %q (%s), manifest %q; want pct30 inferred from the rows and no manifest", r.Width, r.WidthSource, r.Manifest)
	}
}

// nth returns the index of the n-th row (0-based) of the first trajectory
// with more than n rows matching ok.
func nth(t *testing.T, rows []dataset.RLRow, n int, ok func(dataset.RLRow) bool) int {
	t.Helper()
	seen := map[string]int{}
	for i, r := range rows {
		if !ok(r) {
			continue
		}
		if seen[r.ExtraInfo.TrajectoryID] == n {
			return i
		}
		seen[r.ExtraInfo.TrajectoryID]++
	}
	t.Fatalf("no trajectory has %d matching rows", n+1)
	return -1
}

// setLabelGroundTruth rewrites a Warehouse label's ground_truth.
func setLabelGroundTruth(t *testing.T, row *dataset.RLRow, gt string) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(row.Label), &m); err != nil {
		t.Fatal(err)
	}
	m["ground_truth"] = gt
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	row.Label = string(b)
}

func TestBrokenProbeSets(t *testing.T) {
	tests := []struct {
		name string
		src  string
		// edit breaks the rows and returns the message the first example of
		// finding code must carry.
		edit  func(t *testing.T, rows []dataset.RLRow) string
		code  string
		level Level
		want  map[string]int
	}{
		{
			name: "terminal prefix probed", src: swebenchProbes, code: "probe-position", level: Error,
			edit: func(t *testing.T, rows []dataset.RLRow) string {
				x := &rows[3].ExtraInfo
				x.TotalTurns = x.ProbeAfterTurn
				return fmt.Sprintf("probe_after_turn %d, total_turns %d", x.ProbeAfterTurn, x.TotalTurns)
			},
			want: map[string]int{"probe-position": 1},
		},
		{
			// remaining must be total − used with one total per rollout: an
			// error in a probe set, whatever a nearby manifest says.
			name: "remaining not total minus used", src: swebenchProbes, code: "trajectory-total", level: Error,
			edit: func(t *testing.T, rows []dataset.RLRow) string {
				i := nth(t, rows, 1, impossible)
				x := &rows[i].ExtraInfo
				first := rows[nth(t, rows, 0, impossible)].ExtraInfo
				x.RemainingTokens += 7
				x.Margin = float64(x.Budget-x.TokensUsed-x.RemainingTokens) / float64(x.Budget)
				return fmt.Sprintf("tokens_used + remaining_tokens = %d, %d at", x.TokensUsed+x.RemainingTokens, first.TokensUsed+first.RemainingTokens)
			},
			// the label still has the remaining tokens before the edit
			want: map[string]int{"trajectory-total": 1, "label-remaining": 1},
		},
		{
			name: "split field", src: swebenchProbes, code: "split-field", level: Error,
			edit: func(t *testing.T, rows []dataset.RLRow) string {
				rows[0].ExtraInfo.Split = dataset.SplitEval
				return `split "eval" in the probes file`
			},
			want: map[string]int{"split-field": 1},
		},
		{
			name: "warehouse ground truth not the label's", src: warehouseProbes, code: "warehouse-ground-truth", level: Error,
			edit: func(t *testing.T, rows []dataset.RLRow) string {
				i := index(t, rows, possible)
				gt := "time_weeks:[0, 0], warehouse_item_weeks:[0, 0], cumulative_cost_usd:[0, 0]"
				rows[i].RewardModel.GroundTruth = gt
				setLabelGroundTruth(t, &rows[i], gt)
				return fmt.Sprintf("ground_truth %q scores 0 against the label (want 1)", gt)
			},
			want: map[string]int{"warehouse-ground-truth": 1},
		},
		{
			name: "warehouse impossible row with intervals", src: warehouseProbes, code: "impossible-ground-truth", level: Error,
			edit: func(t *testing.T, rows []dataset.RLRow) string {
				rows[index(t, rows, impossible)].RewardModel.GroundTruth = "time_weeks:[1, 2]"
				return `ground_truth "time_weeks:[1, 2]"`
			},
			// the label's ground_truth still says "impossible"
			want: map[string]int{"impossible-ground-truth": 1, "label-column": 1},
		},
		{
			name: "warehouse label disagrees with extra_info", src: warehouseProbes, code: "label-column", level: Error,
			edit: func(t *testing.T, rows []dataset.RLRow) string {
				rows[nth(t, rows, 1, impossible)].ExtraInfo.IsPossible = true
				return "label reads as possible false; extra_info has true"
			},
			want: map[string]int{"label-column": 1, "trajectory-label": 1},
		},
		{
			name: "warehouse token fields", src: warehouseProbes, code: "warehouse-token-fields", level: Warning,
			edit: func(t *testing.T, rows []dataset.RLRow) string {
				rows[2].ExtraInfo.TokensUsed = 1200
				return "tokens_used 1200, remaining_tokens 0, budget 0, margin 0, 0 per_turn_tokens"
			},
			want: map[string]int{"warehouse-token-fields": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var msg string
			path := probeCopy(t, tt.src, func(rows []dataset.RLRow) []dataset.RLRow {
				msg = tt.edit(t, rows)
				return rows
			})
			r := run(t, Config{}, path)
			if d := cmp.Diff(tt.want, problems(r)); d != "" {
				t.Errorf("findings (-want +got):\n%s", d)
			}
			fs := r.Find(tt.code)
			if len(fs) == 0 {
				t.Fatalf("no %s finding", tt.code)
			}
			if fs[0].Level != tt.level || !strings.Contains(fs[0].Examples[0].Message, msg) {
				t.Errorf("%s: got %s %q, want %s containing %q", tt.code, fs[0].Level, fs[0].Examples[0].Message, tt.level, msg)
			}
		})
	}
}

// TestProbeSetRecognition: a file is a probe set when it sits outside
// build's sft/, rl/ and eval/ directories and its rows say split "probes";
// probe sets take no part in the leakage checks.
func TestProbeSetRecognition(t *testing.T) {
	t.Run("in an eval directory", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), dataset.SplitEval, "test.parquet")
		writeRows(t, path, readRows[dataset.RLRow](t, swebenchProbes))
		r := run(t, Config{}, path)
		if r.Files[0].Split != dataset.SplitEval || problems(r)["split-field"] != 32 {
			t.Errorf("got split %q and %d split-field rows; want eval and 32", r.Files[0].Split, problems(r)["split-field"])
		}
	})
	t.Run("rows of another split", func(t *testing.T) {
		path := probeCopy(t, swebenchProbes, func(rows []dataset.RLRow) []dataset.RLRow {
			for i := range rows[:16] {
				rows[i].ExtraInfo.Split = dataset.SplitRL
			}
			return rows
		})
		r := run(t, Config{}, path)
		if r.Files[0].Split != dataset.SplitRL || problems(r)["split-field"] != 16 {
			t.Errorf("half rl: got split %q and %d split-field rows; want rl and 16", r.Files[0].Split, problems(r)["split-field"])
		}
	})
	t.Run("no leakage with a build", func(t *testing.T) {
		// The build's own eval probes after turn 1, as a probe set beside
		// the build: the same trajectories and prompts, no leakage.
		dir := buildDataset(t, nil)
		var set []dataset.RLRow
		for _, row := range readRows[dataset.RLRow](t, filepath.Join(dir, filepath.FromSlash(dataset.EvalFile))) {
			if row.ExtraInfo.ProbeAfterTurn >= 1 {
				row.ExtraInfo.Split = "probes"
				row.ExtraInfo.Accounting = probes.AccountingReplay // as probes writes them
				set = append(set, row)
			}
		}
		path := filepath.Join(dir, "probes.parquet")
		writeRows(t, path, set)
		r := run(t, Config{}, dir, path)
		if got := problems(r); len(got) != 0 {
			t.Errorf("build + probe set: got findings %v", got)
		}
		if f := r.Files[len(r.Files)-1]; f.Split != "probes" || f.Rows != len(set) || len(set) == 0 {
			t.Errorf("probe set: got %+v, want split probes and %d rows", f, len(set))
		}
	})
}
