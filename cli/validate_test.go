package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bagen-data/dataset"
	"bagen-data/reward"
	"bagen-data/rollout"
	"bagen-data/validate"
)

// validateFixture writes a small dataset directory in build's layout whose
// eval split repeats a trajectory of the RL split.
func validateFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	row := func(split, traj string, p int64) dataset.RLRow {
		id := traj + dataset.ProbeSuffix + "0"
		usage := "(no turns completed yet)"
		return dataset.RLRow{
			DataSource: "budget_probe_sokoban", Ability: "budget_estimation",
			Prompt:      []rollout.Message{{Role: "system", Content: "sys"}, {Role: "user", Content: "grid of " + traj + "\n\n" + usage + " Finish within 2500 tokens."}},
			RewardModel: dataset.RewardModel{Style: "rule", GroundTruth: "[70, 130]"},
			ExtraInfo: dataset.ExtraInfo{CustomID: id, TrajectoryID: traj, Split: split, TotalTurns: 2,
				TokensUsed: 50, RemainingTokens: 100, IsPossible: true, Budget: 2500, Margin: float64(2500-150) / 2500},
			Label: reward.TokenTarget(reward.Truth{Remaining: 100, Possible: true}, "[70, 130]").Label(),
		}
	}
	for _, f := range []struct {
		name string
		rows []dataset.RLRow
	}{
		{dataset.RLFile, []dataset.RLRow{row("rl", "t1", 0), row("rl", "t2", 0)}},
		{dataset.EvalFile, []dataset.RLRow{row("eval", "t2", 0), row("eval", "t3", 0)}},
	} {
		path := filepath.Join(dir, filepath.FromSlash(f.name))
		os.MkdirAll(filepath.Dir(path), 0o755)
		writeEvalParquet(t, path, f.rows)
	}
	return dir
}

func TestValidateCommand(t *testing.T) {
	dir := validateFixture(t)
	stdout, _, err := runReward(context.Background(), "validate", dir)
	if !errors.Is(err, validate.ErrInvalid) || err.Error() != "validate: 2 error findings: dataset failed validation" {
		t.Fatalf("got %v, want the validation failure", err)
	}
	eval := filepath.Join(dir, "eval", "test.parquet")
	for _, want := range []string{
		"\nERROR [leakage/trajectory-leak] trajectories with probes in both rl and eval (split by trajectory, never by probe) (1)\n",
		"  " + eval + ": row 0 (t2_probe_after_turn_0): trajectory \"t2\" is also in rl at " + filepath.Join(dir, "rl", "train.parquet") + " row 1\n",
		"\nERROR [leakage/prompt-leak] eval probes whose very prompt is in training data (1)\n",
		"\nWARNING [balance/class-missing] splits without one of the classes (F1 and recall of the absent class are undefined) (2)\n",
		"\n2 errors, 1 warning\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}

	report := filepath.Join(t.TempDir(), "report.json")
	_, _, err = runReward(context.Background(), "validate", "--json", report, "--max-examples", "1", dir)
	var r validate.Report
	raw, _ := os.ReadFile(report)
	if jerr := json.Unmarshal(raw, &r); jerr != nil || err == nil || r.Errors != 2 || len(r.Findings[0].Examples) != 1 {
		t.Errorf("--json: %v, %v; report %+v", err, jerr, r)
	}

	// Without the eval split nothing leaks: exit status 0.
	os.Remove(eval)
	if _, _, err := runReward(context.Background(), "validate", dir); err != nil {
		t.Errorf("rl only: got %v, want success", err)
	}
	if _, _, err := runReward(context.Background(), "validate"); err == nil || err.Error() != "validate: give a dataset directory or parquet files" {
		t.Errorf("no paths: got %v", err)
	}
}

// TestValidateProbeSets validates what bagen-data probes writes for every
// task: the embedded fixtures of sokoban, searchr1 and warehouse and the
// synthetic SWE-bench family of probes/testdata/replay. Each is a probe set
// (split "probes") and passes with no error or warning.
func TestValidateProbeSets(t *testing.T) {
	tests := []struct {
		task  string
		args  []string
		first string // the file line of the report
	}{
		{"sokoban", nil, "probes, 2146 rows (824 possible, 1322 impossible)"},
		{"searchr1", nil, "probes, 272 rows (101 possible, 171 impossible)"},
		{"warehouse", nil, "probes, 633 rows (319 possible, 314 impossible)"},
		{"swebench", []string{"--input", filepath.Join("..", "probes", "testdata", "replay", "swebench.jsonl"), "--budget", "median", "--max-samples", "128"},
			"probes, 128 rows (26 possible, 102 impossible)"},
	}
	for _, tt := range tests {
		t.Run(tt.task, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), tt.task+"-probes.parquet")
			args := append([]string{"probes", "--task", tt.task, "--out", out}, tt.args...)
			if _, stderr, err := runReward(t.Context(), args...); err != nil {
				t.Fatalf("probes: %v\n%s", err, stderr)
			}
			stdout, _, err := runReward(t.Context(), "validate", out)
			if err != nil {
				t.Fatalf("validate: %v\n%s", err, stdout)
			}
			for _, want := range []string{out + ": " + tt.first + "\n", "\n0 errors, 0 warnings\n"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("output lacks %q:\n%s", want, stdout)
				}
			}
		})
	}
}
