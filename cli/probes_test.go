package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bagen-data/dataset"
	"bagen-data/probes"
	"bagen-data/reward"
)

var (
	sweFamily       = filepath.Join("..", "probes", "testdata", "replay", "swebench.jsonl")
	warehouseFamily = filepath.Join("..", "probes", "testdata", "replay", "warehouse.jsonl")
)

// writePredictions writes one {"custom_id", "response"} line per row,
// answer(row) being the text inside <answer>.
func writePredictions(t *testing.T, path string, rows []dataset.RLRow, answer func(dataset.RLRow) string) {
	t.Helper()
	var b bytes.Buffer
	for _, r := range rows {
		line, err := json.Marshal(map[string]string{"custom_id": r.ExtraInfo.CustomID, "response": "<think>replayed</think><answer>" + answer(r) + "</answer>"})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestProbesSWEBenchEval builds the synthetic SWE-bench family's probe set
// with the median budget and a 64-probe cap, checks its rows, and scores
// answers to it with bagen-data eval.
func TestProbesSWEBenchEval(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "probes.parquet")
	stdout, stderr, err := runReward(t.Context(), "probes", "--task", "swebench", "--input", sweFamily,
		"--budget", "median", "--max-samples", "64", "--out", out)
	if err != nil {
		t.Fatalf("probes: %v\n%s", err, stderr)
	}
	want := "swebench: 24 rollouts (13 succeeded, 7 feasible); budget median = 17523 tokens; input tokens from messages 0, api 0, api-deltas 24\n" +
		"378 candidate prefixes, 64 probes (19 possible, 45 impossible) -> " + out + "\n"
	if stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
	}
	rows, err := dataset.ReadRL(out)
	if err != nil {
		t.Fatal(err)
	}
	checkTokenRows(t, rows)

	// Possible probes: the exact remaining tokens on even indices,
	// "impossible" on odd ones. Impossible probes: a wrong interval on
	// every third index, "impossible" otherwise.
	answer := func(r dataset.RLRow) string {
		x := r.ExtraInfo
		switch {
		case x.IsPossible && x.Index%2 == 0:
			return fmt.Sprintf("[%d, %d]", x.RemainingTokens, x.RemainingTokens)
		case !x.IsPossible && x.Index%3 == 0:
			return "[100, 200]"
		}
		return "impossible"
	}
	preds, js := filepath.Join(dir, "preds.jsonl"), filepath.Join(dir, "run.json")
	writePredictions(t, preds, rows, answer)
	if _, stderr, err := runReward(t.Context(), "eval", "--data", out, "--predictions", preds, "--bootstrap", "0", "--json", js); err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr)
	}
	m := readRun(t, js).Metrics
	var exact, caught int
	for _, r := range rows {
		if r.ExtraInfo.IsPossible && r.ExtraInfo.Index%2 == 0 {
			exact++
		}
		if !r.ExtraInfo.IsPossible && r.ExtraInfo.Index%3 != 0 {
			caught++
		}
	}
	// 11 of the 19 possible probes answered exactly, 30 of the 45
	// impossible ones caught.
	if exact != 11 || caught != 30 {
		t.Fatalf("exact %d, caught %d; want 11, 30", exact, caught)
	}
	if m.Probes != 64 || m.TruePossible != 19 || m.Missing != 0 || m.Covered != 11 || m.Intervals != 11 {
		t.Errorf("probes %d, possible %d, missing %d, covered %d/%d; want 64, 19, 0, 11/11", m.Probes, m.TruePossible, m.Missing, m.Covered, m.Intervals)
	}
	if got := float64(m.Accuracy); got != 41.0/64 {
		t.Errorf("accuracy %v, want 41/64", got)
	}
	if got := float64(m.Score); got != 11.0/19 {
		t.Errorf("S %v, want 11/19 (exact intervals score 1)", got)
	}
}

// checkTokenRows checks what every token probe row must hold.
func checkTokenRows(t *testing.T, rows []dataset.RLRow) {
	t.Helper()
	for i, r := range rows {
		x := r.ExtraInfo
		id := fmt.Sprintf("%s_probe_after_turn_%d", x.TrajectoryID, x.ProbeAfterTurn)
		switch {
		case x.Split != "probes" || x.Index != int64(i) || x.CustomID != id:
			t.Fatalf("row %d: split %q, index %d, id %q; want probes, %d, %s", i, x.Split, x.Index, x.CustomID, i, id)
		case x.ProbeAfterTurn < 1 || x.ProbeAfterTurn >= x.TotalTurns:
			t.Fatalf("row %d: probe after turn %d of %d, want 1 … T−1", i, x.ProbeAfterTurn, x.TotalTurns)
		case len(x.PerTurnTokens) != int(x.ProbeAfterTurn) || len(r.Prompt) != 2+2*int(x.ProbeAfterTurn):
			t.Fatalf("row %d: %d usage entries and %d messages after %d turns", i, len(x.PerTurnTokens), len(r.Prompt), x.ProbeAfterTurn)
		}
		var used int64
		for _, u := range x.PerTurnTokens {
			used += u.InputTokens + u.OutputTokens
		}
		if used != x.TokensUsed {
			t.Errorf("row %d: per-turn usage sums to %d, tokens_used %d (API inputs carry the system prompt)", i, used, x.TokensUsed)
		}
		truth, err := reward.ParseLabel(r.Label)
		if err != nil || truth.Possible != x.IsPossible || truth.Possible && truth.Remaining != x.RemainingTokens {
			t.Errorf("row %d: label %s reads as %+v, %v; extra_info says %d, %v", i, r.Label, truth, err, x.RemainingTokens, x.IsPossible)
		}
	}
}

// TestProbesSWEBenchRow pins one row of the full (uncapped) set: swe_0000
// after its first two turns.
func TestProbesSWEBenchRow(t *testing.T) {
	out := filepath.Join(t.TempDir(), "probes.parquet")
	if _, stderr, err := runReward(t.Context(), "probes", "--task", "swebench", "-q", "--input", sweFamily, "--budget", "median", "--max-samples", "0", "--out", out); err != nil {
		t.Fatalf("probes: %v\n%s", err, stderr)
	}
	rows, err := dataset.ReadRL(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 378 {
		t.Fatalf("%d rows, want all 378 prefixes", len(rows))
	}
	checkTokenRows(t, rows)
	// Values computed from the JSON independently of the code under test:
	// every request of this synthetic family grew by at least the previous
	// output, so each delta subtracts the recorded output (no count of the
	// replayed text): 1545 − 1233 − 84 = 228. swe_0000 has 18 turns and a
	// total of 17523 tokens, the family's lower median, but was not
	// resolved; swe_0019 (4 turns, 2507 tokens) was.
	r := rows[1]
	want := dataset.ExtraInfo{
		CustomID: "swe_0000_probe_after_turn_2", TrajectoryID: "swe_0000", Split: "probes", Index: 1,
		ProbeAfterTurn: 2, TotalTurns: 18, TokensUsed: 1879, RemainingTokens: 15644, Budget: 17523,
		PerTurnTokens: []dataset.TurnTokens{{Turn: 1, InputTokens: 1233, OutputTokens: 84}, {Turn: 2, InputTokens: 228, OutputTokens: 334}},
		Accounting:    probes.AccountingReplay,
	}
	if got, _ := json.Marshal(r.ExtraInfo); string(got) != mustJSON(t, want) {
		t.Errorf("extra_info %s, want %s", got, mustJSON(t, want))
	}
	p := rows[347].ExtraInfo
	if p.CustomID != "swe_0019_probe_after_turn_1" || !p.IsPossible || p.TokensUsed != 1096 || p.RemainingTokens != 1411 || p.Margin != float64(17523-2507)/17523 {
		t.Errorf("row 347: %+v; want swe_0019 after turn 1, possible, 1096 used, 1411 remaining", p)
	}
	if rows[347].Label != `{"remaining_tokens":1411,"is_possible":true,"ground_truth":"[987, 1834]"}` {
		t.Errorf("row 347 label %s", rows[347].Label)
	}
	if r.DataSource != "budget_probe_swebench" || r.RewardModel.Style != "rule" || r.Prompt[0].Role != "system" || r.Prompt[5].Role != "user" {
		t.Errorf("data source %q, reward style %q, roles %s…%s", r.DataSource, r.RewardModel.Style, r.Prompt[0].Role, r.Prompt[5].Role)
	}
	if !strings.Contains(r.Prompt[5].Content, "Turn 1: input 1233 tokens, output 84 tokens, total 1317 tokens; Turn 2: input 228 tokens, output 334 tokens") {
		t.Errorf("probe text does not show the per-turn deltas:\n%s", r.Prompt[5].Content)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestProbesWarehouseReward builds the Warehouse challenge probes and scores
// the ground-truth answers with bagen-data reward score (three dimensions,
// from the label column) and bagen-data eval (feasibility).
func TestProbesWarehouseReward(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "probes.parquet")
	stdout, stderr, err := runReward(t.Context(), "probes", "--task", "warehouse", "--input", warehouseFamily, "--out", out)
	if err != nil {
		t.Fatalf("probes: %v\n%s", err, stderr)
	}
	want := "warehouse: 6 rollouts (5 succeeded, 2 feasible); preset half_reachable (3 unreachable, 3 reachable challenges)\n" +
		"16 candidate prefixes, 16 probes (4 possible, 12 impossible) -> " + out + "\n"
	if stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
	}
	rows, err := dataset.ReadRL(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		target, err := reward.ParseTarget(r.Label)
		if _, wh := target.Resources(); err != nil || !wh || target.Possible() != r.ExtraInfo.IsPossible {
			t.Errorf("row %d: label %s reads as %+v, %v; want a warehouse label, possible %v", i, r.Label, target, err, r.ExtraInfo.IsPossible)
		}
		if r.Prompt[0].Content != warehouseSystemPrompt(t, rows) || r.ExtraInfo.Split != "probes" {
			t.Errorf("row %d: system prompt %.40q…, split %q", i, r.Prompt[0].Content, r.ExtraInfo.Split)
		}
	}
	preds := filepath.Join(dir, "preds.jsonl")
	writePredictions(t, preds, rows, func(r dataset.RLRow) string { return r.RewardModel.GroundTruth })
	stdout, stderr, err = runReward(t.Context(), "reward", "score", "--data", out, "--predictions", preds, "--strict")
	if err != nil {
		t.Fatalf("reward score: %v\n%s", err, stderr)
	}
	// Exact answers: 1.8 on every possible probe, 0.2 on every impossible one.
	for _, line := range []string{"possible    4       1.8000", "impossible  12      0.2000", "all         16      0.6000"} {
		if !strings.Contains(stdout, line) {
			t.Errorf("reward score output lacks %q:\n%s", line, stdout)
		}
	}
	js := filepath.Join(dir, "run.json")
	if _, stderr, err := runReward(t.Context(), "eval", "--data", out, "--predictions", preds, "--bootstrap", "0", "--json", js); err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr)
	}
	if m := readRun(t, js).Metrics; float64(m.Accuracy) != 1 || float64(m.FailF1) != 1 || m.Probes != 16 {
		t.Errorf("eval: %d probes, accuracy %v, Fail-F1 %v; want 16, 1, 1", m.Probes, float64(m.Accuracy), float64(m.FailF1))
	}
}

func warehouseSystemPrompt(t *testing.T, rows []dataset.RLRow) string {
	t.Helper()
	const first = "You are an evaluation agent for historical warehouse-management rollouts."
	if !strings.HasPrefix(rows[0].Prompt[0].Content, first) {
		t.Fatalf("system prompt %q is not the External Warehouse prompt's", rows[0].Prompt[0].Content)
	}
	return rows[0].Prompt[0].Content
}

func TestProbesDeterministic(t *testing.T) {
	dir := t.TempDir()
	var files [2][]byte
	for i := range files {
		out := filepath.Join(dir, fmt.Sprintf("p%d.parquet", i))
		if _, stderr, err := runReward(t.Context(), "probes", "-q", "--task", "warehouse", "--input", warehouseFamily, "--preset", "bagen-v1", "--max-samples", "5", "--out", out); err != nil {
			t.Fatalf("probes: %v\n%s", err, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		files[i] = b
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("two runs with the same inputs and seed wrote different files")
	}
	rows, err := dataset.ReadRL(filepath.Join(dir, "p0.parquet"))
	if err != nil || len(rows) != 5 {
		t.Errorf("%d rows, %v; want 5 (--max-samples)", len(rows), err)
	}
}

func TestProbesFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"every warehouse flag problem at once", []string{"--task", "warehouse", "--budget", "5", "--preset", "x", "--length-bins", "0", "--max-samples", "-1"},
			`preset "x": want half_reachable (the paper's text) or bagen-v1 (the authors' shipped variant)` + "\n" +
				"budget: the warehouse task has no token budget; its budgets come from --preset\n" +
				"max-samples: want 0 (no cap) or more, got -1\n" +
				"length-bins: want at least 1, got 0"},
		{"preset on a token task", []string{"--task", "sokoban", "--preset", "bagen-v1", "--budget", "abc"},
			`budget "abc": want a positive number of tokens or median` + "\npreset: applies to the warehouse task only, not sokoban"},
		{"no budget for swebench", []string{"--task", "swebench", "--input", sweFamily, "--budget", "", "--tokenizer", ""},
			sweFamily + ":1: budget: no budget: task swebench has no default and the trajectory sets none; pass --budget N or --budget median"},
		{"argument", []string{"--task", "sokoban", "rollouts.jsonl"}, `probes: unexpected argument "rollouts.jsonl" (inputs go in --input)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"probes", "--out", filepath.Join(t.TempDir(), "p.parquet")}, tt.args...)
			_, _, err := runReward(t.Context(), args...)
			if err == nil || err.Error() != tt.want {
				t.Errorf("got %v, want:\n%s", err, tt.want)
			}
		})
	}
}

// TestProbesCompatBagenV1 builds the SWE-bench family the authors' way:
// the rollout's own system prompt, the shipped estimation prompt and
// their 128-prefix sample, which differs from this tool's.
func TestProbesCompatBagenV1(t *testing.T) {
	dir := t.TempDir()
	compat, native := filepath.Join(dir, "compat.parquet"), filepath.Join(dir, "native.parquet")
	args := []string{"probes", "--task", "swebench", "--input", sweFamily, "--budget", "median", "--max-samples", "128"}
	stdout, stderr, err := runReward(t.Context(), append(args, "--compat", "bagen-v1", "--out", compat)...)
	if err != nil {
		t.Fatalf("probes: %v\n%s", err, stderr)
	}
	// The authors' env subtracts the whole recorded output from the next
	// request (the log has no reasoning counts nor a parsed text), so the
	// totals and their median are those of the full-output deltas.
	if want := "swebench: 24 rollouts (13 succeeded, 7 feasible); budget median = 17523 tokens; compat bagen-v1; input tokens"; !strings.HasPrefix(stdout, want) {
		t.Errorf("stdout %q, want prefix %q", stdout, want)
	}
	if _, stderr, err := runReward(t.Context(), append(args, "--out", native)...); err != nil {
		t.Fatalf("probes: %v\n%s", err, stderr)
	}
	rows, err := dataset.ReadRL(compat)
	if err != nil {
		t.Fatal(err)
	}
	nrows, err := dataset.ReadRL(native)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 128 || len(nrows) != 128 {
		t.Fatalf("%d and %d rows, want 128 each", len(rows), len(nrows))
	}
	r := rows[0]
	if sys := r.Prompt[0].Content; !strings.HasPrefix(sys, "You are a software engineering agent resolving a GitHub issue") {
		t.Errorf("system prompt %q, want the rollout's own", sys)
	}
	last := r.Prompt[len(r.Prompt)-1].Content
	if !strings.HasSuffix(last, "<think> [Your thoughts, typically 2-4 sentences,less than 200 tokens] </think><answer>impossible</answer>") {
		t.Errorf("estimation prompt ends %q, want the shipped swebench_estimation_user.txt", last[len(last)-100:])
	}
	same := 0
	ids := map[string]bool{}
	for _, n := range nrows {
		ids[n.ExtraInfo.CustomID] = true
	}
	for _, c := range rows {
		if ids[c.ExtraInfo.CustomID] {
			same++
		}
	}
	if same == 128 {
		t.Errorf("the bagen-v1 sample is this tool's sample")
	}
}

func TestProbesPromptFiles(t *testing.T) {
	dir := t.TempDir()
	sys, probe := filepath.Join(dir, "sys.txt"), filepath.Join(dir, "probe.txt")
	os.WriteFile(sys, []byte("\r\nEstimate tokens.\r\n"), 0o644)
	os.WriteFile(probe, []byte("\nAfter {completed_turns} turns ({turn_token_usage_text}), budget {max_context_window_tokens}: answer.\n\n"), 0o644)
	out := filepath.Join(dir, "p.parquet")
	if _, stderr, err := runReward(t.Context(), "probes", "--task", "swebench", "--input", sweFamily, "--budget", "90000",
		"--system-prompt-file", sys, "--probe-prompt-file", probe, "--out", out); err != nil {
		t.Fatalf("probes: %v\n%s", err, stderr)
	}
	rows, err := dataset.ReadRL(out)
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	if r.Prompt[0].Content != "Estimate tokens." {
		t.Errorf("system %q, want the file's text stripped", r.Prompt[0].Content)
	}
	want := fmt.Sprintf("After 1 turns (Turn 1: input %d tokens, output %d tokens, total %d tokens), budget 90000: answer.",
		r.ExtraInfo.PerTurnTokens[0].InputTokens, r.ExtraInfo.PerTurnTokens[0].OutputTokens,
		r.ExtraInfo.PerTurnTokens[0].InputTokens+r.ExtraInfo.PerTurnTokens[0].OutputTokens)
	if got := r.Prompt[len(r.Prompt)-1].Content; got != want {
		t.Errorf("estimation prompt %q, want %q", got, want)
	}
	_, _, err = runReward(t.Context(), "probes", "--task", "swebench", "--input", sweFamily, "--probe-prompt-file", filepath.Join(dir, "missing.txt"), "--out", out)
	if err == nil || !strings.Contains(err.Error(), "probe prompt: open ") {
		t.Errorf("missing probe prompt file: got %v", err)
	}
}

// TestProbesSummaryNamesFallbacks: the summary counts the turns whose
// input is not the log's number and says why — here one estimated after
// unrecorded hidden reasoning (mini-hidden), one without usage and the
// one after it (openhands-no-usage), and one cut history (the ATIF run's
// last request is smaller than the one before).
func TestProbesSummaryNamesFallbacks(t *testing.T) {
	edits := "../rollout/testdata/edits/"
	out := filepath.Join(t.TempDir(), "p.parquet")
	stdout, err := run(t, "probes", "--task", "swebench", "-i", edits+"mini-hidden", "-i", edits+"openhands-no-usage",
		"-i", "../rollout/testdata/harbor", "--budget", "5000", "--tokenizer", tokenizerPath(t), "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	want := "swebench: 4 rollouts (1 succeeded, 1 feasible); budget 5000 tokens; input tokens from messages 0, api 0, api-deltas 4\n" +
		"1 turn(s) after an output with hidden reasoning the log does not record (the next request grew by less than it): its visible part estimated as the tokenizer's count of the replayed text\n" +
		"3 turn(s) fell back to message counts: 1 without usage, 1 after a turn without usage, 1 with a cut history (the request grew by less than the previous visible output)\n" +
		"5 candidate prefixes, 5 probes (2 possible, 3 impossible) -> " + out + "\n" +
		"skipped 2 file(s) in input directories that hold no trajectory: ../rollout/testdata/harbor/job-1/config.json, ../rollout/testdata/harbor/job-1/result.json\n"
	if stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
	}
}

// TestBuildAndProbesCountOneLog pins the README's example of one log
// through both commands: build counts the user messages and the preset's
// system prompt (Qwen: 41; 9 and 26), probes the log's request deltas
// (900, then 1010 − 900 − 60 = 50); both take the recorded outputs.
func TestBuildAndProbesCountOneLog(t *testing.T) {
	in := "../rollout/testdata/mini2/astropy__astropy-12907"
	dir := t.TempDir()
	if _, err := run(t, "build", "-q", "--task", "swebench", "-i", in, "--split", "0/0/100", "--budget", "5000", "--tokenizer", tokenizerPath(t), "--out", dir); err != nil {
		t.Fatal(err)
	}
	rows, err := dataset.ReadRL(filepath.Join(dir, "eval", "test.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d build rows, want 2", len(rows))
	}
	// used_0 = sys + in_0, r_0 = out_0 + in_1 + out_1; row 1 shows turn 1.
	if e0, e1 := rows[0].ExtraInfo, rows[1].ExtraInfo; e0.TokensUsed != 41+9 || e0.RemainingTokens != 60+26+75 ||
		fmt.Sprint(e1.PerTurnTokens) != "[{1 9 60}]" || e1.TokensUsed+e1.RemainingTokens != 211 {
		t.Errorf("build rows %+v", rows)
	}
	out := filepath.Join(dir, "p.parquet")
	if _, err := run(t, "probes", "-q", "--task", "swebench", "-i", in, "--budget", "5000", "--tokenizer", tokenizerPath(t), "--out", out); err != nil {
		t.Fatal(err)
	}
	if rows, err = dataset.ReadRL(out); err != nil {
		t.Fatal(err)
	}
	if e := rows[0].ExtraInfo; len(rows) != 1 || fmt.Sprint(e.PerTurnTokens) != "[{1 900 60}]" || e.TokensUsed != 960 || e.RemainingTokens != 50+75 {
		t.Errorf("probes rows %+v", rows)
	}
}
