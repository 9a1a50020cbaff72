package eval

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/dataset"
	"bagen-data/eval/prediction"
)

// TestWriteRunReadRun pins the saved form's start (two-space indent, names
// unescaped) and end (one newline) and reads it back.
func TestWriteRunReadRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	run := Run{Name: "a<b>&c", Data: "eval/test.parquet", Model: "m", Metrics: Metrics{Probes: 3, Accuracy: 0.5, Coverage: NaN}}
	if err := WriteRun(path, run); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"name\": \"a<b>&c\",\n  \"data\": \"eval/test.parquet\",\n  \"model\": \"m\",\n  \"metrics\": {\n    \"probes\": 3,"
	if got := string(b); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "}\n}\n") {
		t.Errorf("got\n%s\nwant it to start\n%s\nand end with }\\n}\\n", got, want)
	}
	back, err := ReadRun(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(run, back, cmp.Comparer(func(a, b Num) bool { return a == b || !a.Defined() && !b.Defined() })); d != "" {
		t.Errorf("read back (-wrote +read):\n%s", d)
	}
}

// TestScoreRun: the run's default name, the default and the switched-off
// bootstrap, and the two joins it refuses with their messages.
func TestScoreRun(t *testing.T) {
	rows := []dataset.RLRow{
		{ExtraInfo: dataset.ExtraInfo{CustomID: "a_probe_after_turn_0", TotalTurns: 2, TokensUsed: 300, RemainingTokens: 700, IsPossible: true}},
		{ExtraInfo: dataset.ExtraInfo{CustomID: "b_probe_after_turn_0", TotalTurns: 3, TokensUsed: 300, RemainingTokens: 2600}},
	}
	set := func(lines string) *prediction.Set {
		t.Helper()
		preds, err := prediction.Read(strings.NewReader(lines), "p.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		s, err := prediction.NewSet(preds, "p.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	both := set(`{"custom_id":"a_probe_after_turn_0","response":"<answer>[600, 800]</answer>"}
{"custom_id":"b_probe_after_turn_0","response":"<answer>impossible</answer>"}
{"custom_id":"z","response":"<answer>impossible</answer>"}
`)
	opt := RunOptions{Data: "d.parquet", Predictions: "runs/p.jsonl"}
	run, s, err := ScoreRun(rows, both, opt)
	if err != nil {
		t.Fatal(err)
	}
	if run.Name != "p" || run.Metrics.Accuracy != 1 || run.Metrics.CI["accuracy"].Replicates != DefaultBootstrap || s.OneToOne() {
		t.Errorf("got name %q, accuracy %v, %d replicates, one to one %v; want p, 1, %d, false",
			run.Name, run.Metrics.Accuracy, run.Metrics.CI["accuracy"].Replicates, s.OneToOne(), DefaultBootstrap)
	}
	opt.Model, opt.Bootstrap = "m", new(0)
	if run, _, err := ScoreRun(rows, both, opt); err != nil || run.Name != "m" || run.Metrics.CI != nil {
		t.Errorf("with a model and no bootstrap: got name %q, intervals %v, %v; want m, none", run.Name, run.Metrics.CI, err)
	}
	opt.Strict = true
	_, _, err = ScoreRun(rows, both, opt)
	want := "d.parquet and runs/p.jsonl do not match one to one: 2 probes, 0 without a prediction, 1 predictions for unknown ids (z)"
	if je := (*JoinError)(nil); !errors.As(err, &je) || !je.Strict || err.Error() != want {
		t.Errorf("strict: got %v, want a strict *JoinError %q", err, want)
	}
	opt.Strict = false
	_, _, err = ScoreRun(rows, set(`{"custom_id":"z","response":"<answer>impossible</answer>"}`+"\n"), opt)
	want = "no probe of d.parquet has a prediction in runs/p.jsonl: 2 probes, 2 without a prediction (a_probe_after_turn_0, b_probe_after_turn_0), 1 predictions for unknown ids (z)"
	if je := (*JoinError)(nil); !errors.As(err, &je) || je.Strict || err.Error() != want {
		t.Errorf("no match: got %v, want a *JoinError %q", err, want)
	}
}
