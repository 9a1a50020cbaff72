package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bagen-data/dataset"
	"bagen-data/eval"
	"bagen-data/rollout"

	"github.com/parquet-go/parquet-go"
)

// chainPredictions writes a predictions file answering every probe of the
// parquet files: the ground truth, "impossible" or a wide interval in turn,
// so that rewards, classes and coverage all vary.
func chainPredictions(t *testing.T, path string, files ...string) {
	t.Helper()
	var b strings.Builder
	seen := map[string]bool{}
	for _, f := range files {
		rows, err := dataset.ReadRL(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			id := r.ExtraInfo.CustomID
			if seen[id] {
				continue
			}
			seen[id] = true
			answer := r.RewardModel.GroundTruth
			switch len(seen) % 3 {
			case 1:
				answer = "impossible"
			case 2:
				answer = "[0, 100000]"
			}
			line, _ := json.Marshal(map[string]string{"custom_id": id, "response": "<think>…</think><answer>" + answer + "</answer>"})
			b.Write(append(line, '\n'))
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// scoredMean is the mean reward of reward score's --out lines, each probe
// once.
func scoredMean(t *testing.T, path string) (float64, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sum, n := 0.0, 0
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			CustomID string  `json:"custom_id"`
			Reward   float64 `json:"reward"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if seen[r.CustomID] {
			continue
		}
		seen[r.CustomID] = true
		sum += r.Reward
		n++
	}
	return sum / float64(n), n
}

// chainScore runs eval and reward score on the same data and predictions
// and checks that they agree on the number of probes and the mean reward,
// and that both are the pinned values (the fixtures are deterministic).
func chainScore(t *testing.T, dir, data, preds string, probes int, reward string) {
	t.Helper()
	name := strings.TrimSuffix(filepath.Base(data), ".parquet") + "-" + filepath.Base(filepath.Dir(data))
	runJSON, scored := filepath.Join(dir, name+".run.json"), filepath.Join(dir, name+".scored.jsonl")
	if _, stderr, err := runReward(t.Context(), "eval", "--data", data, "--predictions", preds, "--json", runJSON); err != nil {
		t.Fatalf("eval --data %s: %v\n%s", data, err, stderr)
	}
	if _, stderr, err := runReward(t.Context(), "reward", "score", "--data", data, "--predictions", preds, "--out", scored); err != nil {
		t.Fatalf("reward score --data %s: %v\n%s", data, err, stderr)
	}
	run, err := eval.ReadRun(runJSON)
	if err != nil {
		t.Fatal(err)
	}
	mean, n := scoredMean(t, scored)
	if n != run.Metrics.Probes || math.Abs(mean-float64(run.Metrics.Reward)) > 1e-12 {
		t.Errorf("%s: reward score: %d probes, mean reward %.6f; eval: %d probes, reward %.6f", data, n, mean, run.Metrics.Probes, float64(run.Metrics.Reward))
	}
	if got := fmt.Sprintf("%.4f", mean); n != probes || got != reward {
		t.Errorf("%s: %d probes, mean reward %s; want %d, %s", data, n, got, probes, reward)
	}
}

// TestChain runs the commands as a user pipes them, on the embedded
// fixtures: build → validate → reward score and eval on the RL and eval
// files; probes (Sokoban and Warehouse) → validate → eval and reward score.
// Every step must accept what the one before wrote, and eval and reward
// score must agree on the same predictions. (build → grpo train is
// TestGRPOEndToEnd, against a real Ollama.)
func TestChain(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if _, stderr, err := runReward(t.Context(), "build", "-q", "--out", out, "--tokenizer", tokenizerPath(t)); err != nil {
		t.Fatalf("build: %v\n%s", err, stderr)
	}
	if stdout, _, err := runReward(t.Context(), "validate", out); err != nil {
		t.Fatalf("validate %s: %v\n%s", out, err, stdout)
	}
	rl, ev := filepath.Join(out, dataset.RLFile), filepath.Join(out, dataset.EvalFile)
	preds := filepath.Join(dir, "preds.jsonl")
	chainPredictions(t, preds, rl, ev)
	chainScore(t, dir, rl, preds, 1206, "0.1757")
	chainScore(t, dir, ev, preds, 245, "0.1827")
	for _, tc := range []struct {
		task   string
		probes int
		reward string
	}{{"sokoban", 2146, "0.1739"}, {"warehouse", 633, "0.3712"}} {
		task := tc.task
		set := filepath.Join(dir, task+".parquet")
		if _, stderr, err := runReward(t.Context(), "probes", "-q", "--task", task, "--out", set, "--tokenizer", tokenizerPath(t)); err != nil {
			t.Fatalf("probes --task %s: %v\n%s", task, err, stderr)
		}
		if stdout, _, err := runReward(t.Context(), "validate", set); err != nil {
			t.Fatalf("validate %s: %v\n%s", set, err, stdout)
		}
		p := filepath.Join(dir, task+".preds.jsonl")
		chainPredictions(t, p, set)
		chainScore(t, dir, set, p, tc.probes, tc.reward)
	}
}

// TestScoringRejectsWrongFiles gives eval and reward score files that are
// not RL or eval probes: each must fail, naming the file and the column.
func TestScoringRejectsWrongFiles(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if _, stderr, err := runReward(t.Context(), "build", "-q", "--out", out, "--tokenizer", tokenizerPath(t)); err != nil {
		t.Fatalf("build: %v\n%s", err, stderr)
	}
	type foreign struct {
		Question string `parquet:"question"`
	}
	type mistyped struct {
		DataSource  string              `parquet:"data_source"`
		Prompt      []rollout.Message   `parquet:"prompt,list"`
		Ability     string              `parquet:"ability"`
		RewardModel dataset.RewardModel `parquet:"reward_model"`
		ExtraInfo   dataset.ExtraInfo   `parquet:"extra_info"`
		Label       int64               `parquet:"label"`
	}
	other, relabelled := filepath.Join(dir, "other.parquet"), filepath.Join(dir, "relabelled.parquet")
	if err := parquet.WriteFile(other, []foreign{{"q"}}); err != nil {
		t.Fatal(err)
	}
	if err := parquet.WriteFile(relabelled, []mistyped{{Label: 7}}); err != nil {
		t.Fatal(err)
	}
	preds := filepath.Join(dir, "preds.jsonl")
	os.WriteFile(preds, []byte(`{"custom_id":"x","response":"<answer>impossible</answer>"}`+"\n"), 0o644)
	sft := filepath.Join(out, dataset.SFTFile)
	tests := []struct{ data, want string }{
		{sft, sft + ": is an SFT file (messages column), want RL or eval file"},
		{other, other + ": not an RL or eval file: column data_source missing (want string)"},
		{relabelled, relabelled + ": not an RL or eval file: column label: want string, got int64"},
	}
	for _, tt := range tests {
		for _, cmd := range [][]string{{"eval"}, {"reward", "score"}} {
			args := append(append([]string{}, cmd...), "--data", tt.data, "--predictions", preds)
			_, _, err := runReward(t.Context(), args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s --data %s: got %v, want an error containing %q", strings.Join(cmd, " "), filepath.Base(tt.data), err, tt.want)
			}
		}
	}
}

// earlyStopWant is eval/earlystop.go's definition computed from the file's
// own extra_info: a trajectory is failed when any of its probes is
// impossible; a failed trajectory costs tokens_used + remaining_tokens at
// its first probe (lowest probe_after_turn), and stopping it at its first
// probe that stop says is predicted impossible saves that probe's
// remaining_tokens.
func earlyStopWant(t *testing.T, data string, stop func(x dataset.ExtraInfo) bool) (failed, saved int64, trajectories int) {
	t.Helper()
	rows, err := dataset.ReadRL(data)
	if err != nil {
		t.Fatal(err)
	}
	type traj struct {
		failed      bool
		first, halt *dataset.ExtraInfo
	}
	byID := map[string]*traj{}
	for i := range rows {
		x := &rows[i].ExtraInfo
		tr := byID[x.TrajectoryID]
		if tr == nil {
			tr = &traj{}
			byID[x.TrajectoryID] = tr
		}
		tr.failed = tr.failed || !x.IsPossible
		if tr.first == nil || x.ProbeAfterTurn < tr.first.ProbeAfterTurn {
			tr.first = x
		}
		if stop(*x) && (tr.halt == nil || x.ProbeAfterTurn < tr.halt.ProbeAfterTurn) {
			tr.halt = x
		}
	}
	for _, tr := range byID {
		if !tr.failed {
			continue
		}
		failed += tr.first.TokensUsed + tr.first.RemainingTokens
		if tr.halt != nil {
			saved += tr.halt.RemainingTokens
		}
	}
	return failed, saved, len(byID)
}

// chainEarlyStop answers every probe of data "impossible" where stop says
// so and with a wide interval elsewhere, runs eval with --json and
// --report, and checks the early stop's token sums in both against
// earlyStopWant and against the pinned values.
func chainEarlyStop(t *testing.T, dir, data, name string, stop func(x dataset.ExtraInfo) bool, failed, saved int64) {
	t.Helper()
	rows, err := dataset.ReadRL(data)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range rows {
		answer := "[0, 100000]"
		if stop(r.ExtraInfo) {
			answer = "impossible"
		}
		line, _ := json.Marshal(map[string]string{"custom_id": r.ExtraInfo.CustomID, "response": "<answer>" + answer + "</answer>"})
		b.Write(append(line, '\n'))
	}
	preds, runJSON, html := filepath.Join(dir, name+".jsonl"), filepath.Join(dir, name+".json"), filepath.Join(dir, name+".html")
	if err := os.WriteFile(preds, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := runReward(t.Context(), "eval", "--data", data, "--predictions", preds, "--bootstrap", "0", "--json", runJSON, "--report", html); err != nil {
		t.Fatalf("eval --data %s: %v\n%s", data, err, stderr)
	}
	run, err := eval.ReadRun(runJSON)
	if err != nil {
		t.Fatal(err)
	}
	e := run.Metrics.EarlyStop
	wantFailed, wantSaved, trajectories := earlyStopWant(t, data, stop)
	if e.FailedTokens != wantFailed || e.SavedTokens != wantSaved || e.Trajectories != trajectories {
		t.Errorf("%s, %s: eval: failed_tokens %d, saved_tokens %d over %d trajectories; extra_info gives %d, %d over %d",
			data, name, e.FailedTokens, e.SavedTokens, e.Trajectories, wantFailed, wantSaved, trajectories)
	}
	if e.FailedTokens != failed || e.SavedTokens != saved {
		t.Errorf("%s, %s: failed_tokens %d, saved_tokens %d; want %d, %d", data, name, e.FailedTokens, e.SavedTokens, failed, saved)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("(%d/%d tokens)", wantSaved, wantFailed); !strings.Contains(string(page), want) {
		t.Errorf("%s: the report does not say %q", html, want)
	}
}

// buildAndProbes writes, under dir, the build of the embedded fixtures
// and the Sokoban probe set, and returns the build's eval file and the
// probe set.
func buildAndProbes(t *testing.T, dir string) (evalFile, set string) {
	t.Helper()
	out := filepath.Join(dir, "out")
	if _, stderr, err := runReward(t.Context(), "build", "-q", "--out", out, "--tokenizer", tokenizerPath(t)); err != nil {
		t.Fatalf("build: %v\n%s", err, stderr)
	}
	set = filepath.Join(dir, "sokoban.parquet")
	if _, stderr, err := runReward(t.Context(), "probes", "-q", "--task", "sokoban", "--out", set, "--tokenizer", tokenizerPath(t)); err != nil {
		t.Fatalf("probes: %v\n%s", err, stderr)
	}
	return filepath.Join(out, dataset.EvalFile), set
}

// TestChainEarlyStop replays the early stop on files build and probes
// write, with every probe predicted impossible and with impossible only
// from half-way through each rollout (p ≥ T/2): the tokens saved are the
// remaining_tokens the files carry for impossible probes.
func TestChainEarlyStop(t *testing.T) {
	dir := t.TempDir()
	ev, set := buildAndProbes(t, dir)
	always := func(dataset.ExtraInfo) bool { return true }
	halfway := func(x dataset.ExtraInfo) bool { return 2*x.ProbeAfterTurn >= x.TotalTurns }
	for _, tc := range []struct {
		data, name    string
		stop          func(dataset.ExtraInfo) bool
		failed, saved int64
	}{
		{ev, "eval-impossible", always, 30568, 26361},
		{ev, "eval-halfway", halfway, 30568, 12863},
		{set, "sokoban-impossible", always, 330632, 265628},
		{set, "sokoban-halfway", halfway, 330632, 142808},
	} {
		chainEarlyStop(t, dir, tc.data, tc.name, tc.stop, tc.failed, tc.saved)
	}
}

// definitionAnswer is the i-th answer kind of TestChainDefinitions for a
// probe whose ground truth is gt: the truth itself, "impossible", the
// ground truth reversed, a scalar, full-width digits, a Python white-space
// separator around the truth, or nothing parseable.
func definitionAnswer(i int, gt string, r int64) (answer string, valid bool) {
	lo, hi, interval := strings.Cut(strings.Trim(gt, "[]"), ", ")
	switch i % 7 {
	case 0:
		return gt, true
	case 1:
		return "impossible", true
	case 2:
		if !interval {
			return "impossible", true
		}
		return "[" + hi + ", " + lo + "]", hi == lo
	case 3:
		return fmt.Sprint(r), false
	case 4:
		return "[１００, ２００]", true
	case 5:
		return "\x1c" + gt + "\x1f", true
	}
	return "about " + fmt.Sprint(r), false
}

// TestChainDefinitions recomputes from the files build and probes write the
// numbers whose definitions eval once missed: Format valid (impossible or
// a well-formed interval, answers read as the reference reads them), the
// n of MRE P50/P90 (intervals on possible probes with r > 0), the n of
// F1@1 (the probes at the set's first position: p = 0 in build's sets,
// k = 1 in a subsampled SWE-bench replay set), the bagen-v1 summary in the
// HTML report, and the join checks (no prediction matches; --strict).
func TestChainDefinitions(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if _, stderr, err := runReward(t.Context(), "build", "-q", "--out", out, "--tokenizer", tokenizerPath(t)); err != nil {
		t.Fatalf("build: %v\n%s", err, stderr)
	}
	swe := filepath.Join(dir, "swebench.parquet")
	if _, stderr, err := runReward(t.Context(), "probes", "-q", "--task", "swebench", "--input", filepath.Join("..", "probes", "testdata", "replay", "swebench.jsonl"),
		"--budget", "median", "--max-samples", "128", "--out", swe, "--tokenizer", tokenizerPath(t)); err != nil {
		t.Fatalf("probes --task swebench: %v\n%s", err, stderr)
	}
	for _, tc := range []struct {
		data  string
		first int64 // the set's first probe position
		n     int   // probes there (pinned)
	}{{filepath.Join(out, dataset.EvalFile), 0, 32}, {swe, 1, 13}} {
		rows, err := dataset.ReadRL(tc.data)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		var valid, mre, first int
		for i, r := range rows {
			x := r.ExtraInfo
			answer, ok := definitionAnswer(i, r.RewardModel.GroundTruth, x.RemainingTokens)
			if ok {
				valid++
			}
			if ok && x.IsPossible && x.RemainingTokens > 0 && answer != "impossible" {
				mre++
			}
			if x.ProbeAfterTurn == tc.first {
				first++
			}
			line, _ := json.Marshal(map[string]string{"custom_id": x.CustomID, "response": "<answer>" + answer + "</answer>"})
			b.Write(append(line, '\n'))
		}
		name := strings.TrimSuffix(filepath.Base(tc.data), ".parquet")
		preds, js, html := filepath.Join(dir, name+".jsonl"), filepath.Join(dir, name+".json"), filepath.Join(dir, name+".html")
		os.WriteFile(preds, []byte(b.String()), 0o644)
		if _, stderr, err := runReward(t.Context(), "eval", "--data", tc.data, "--predictions", preds, "--bootstrap", "0",
			"--compat", "bagen-v1", "--json", js, "--report", html); err != nil {
			t.Fatalf("eval --data %s: %v\n%s", tc.data, err, stderr)
		}
		run, err := eval.ReadRun(js)
		if err != nil {
			t.Fatal(err)
		}
		m := run.Metrics
		t.Logf("%s: format valid %d/%d, MRE n %d, F1@1 n %d", name, valid, len(rows), mre, first)
		if m.Probes != len(rows) || m.FormatValid != eval.Num(float64(valid)/float64(len(rows))) || m.MRECount != mre ||
			m.FirstTurnProbes != first || first != tc.n {
			t.Errorf("%s: format valid %v, MRE n %d, F1@1 n %d; the file gives %d/%d, %d, %d (want %d)",
				tc.data, float64(m.FormatValid), m.MRECount, m.FirstTurnProbes, valid, len(rows), mre, first, tc.n)
		}
		page, _ := os.ReadFile(html)
		var v1 strings.Builder
		m.BagenV1.WriteText(&v1)
		if m.BagenV1 == nil || !strings.Contains(string(page), v1.String()) {
			t.Errorf("%s: the report lacks the bagen-v1 summary %q", html, v1.String())
		}
	}
	ev := filepath.Join(out, dataset.EvalFile)
	foreign, partial := filepath.Join(dir, "foreign.jsonl"), filepath.Join(dir, "partial.jsonl")
	os.WriteFile(foreign, []byte(`{"custom_id":"elsewhere_probe_after_turn_0","response":"<answer>impossible</answer>"}`+"\n"), 0o644)
	rows, _ := dataset.ReadRL(ev)
	line, _ := json.Marshal(map[string]string{"custom_id": rows[0].ExtraInfo.CustomID, "response": "<answer>impossible</answer>"})
	os.WriteFile(partial, append(line, '\n'), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--predictions", foreign}, "eval: no probe of " + ev + " has a prediction in " + foreign + ": 245 probes, 245 without a prediction"},
		{[]string{"--predictions", partial, "--strict"}, "eval: --strict: " + ev + " and " + partial + " do not match one to one: 245 probes, 244 without a prediction"},
	} {
		_, _, err := runReward(t.Context(), append([]string{"eval", "--data", ev, "--bootstrap", "0"}, tc.args...)...)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("eval %v: got %v, want an error starting %q", tc.args, err, tc.want)
		}
	}
	if _, _, err := runReward(t.Context(), "eval", "--data", ev, "--bootstrap", "0", "--predictions", partial); err != nil {
		t.Errorf("eval with one prediction, not --strict: %v", err)
	}
}

// sessionVerdicts are outcomes for the real Claude Code, Codex and Qwen
// Code sessions in rollout/testdata/sessions, by session id: each CLI has
// one success and one failure among its multi-call sessions.
const sessionVerdicts = `{
"e2323acd-98c8-4d42-8347-1e2b64689996": true, "2c8371eb-6655-44a1-bc69-725b3de75e99": false, "3bebed2d-f54f-4e89-83a6-dd5d114f9285": true,
"01a211cb-48e1-7dd0-a3ef-02099778bec5": true, "01a211cb-4c62-71f3-80b3-61befb1d2c6b": true, "01a211cb-515e-74d1-a384-1d58f2e0d586": false,
"72bb854e-3fe8-407f-8aa0-0393bc89befb": false, "94bca818-e300-4748-8c37-ce37568c6f0c": true, "c26a83cc-9552-4453-aa7a-48f705d08baf": true}`

// TestChainLogFormats runs the chain on every agent-log format of
// rollout/testdata at once (mini-swe-agent, SWE-agent, OpenHands both
// ways, Inspect, Harbor ATIF and the real Claude Code, Codex and Qwen Code
// sessions): build on the logs and build on convert's canonical JSONL
// write the same bytes; validate --strict accepts the build (an OpenHands
// command without output leaves an empty observation in the history); eval
// and reward score agree on it, and eval's early stop is the one the
// file's extra_info gives.
func TestChainLogFormats(t *testing.T) {
	dir := t.TempDir()
	verdicts := filepath.Join(dir, "verdicts.json")
	if err := os.WriteFile(verdicts, []byte(sessionVerdicts), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := []string{"--prefix-ids", "--results", "../rollout/testdata/report.json", "--success-file", verdicts}
	for _, d := range []string{"mini0", "mini1", "mini2", "openhands", "sweagent", "inspect", "harbor", "sessions"} {
		logs = append(logs, "-i", "../rollout/testdata/"+d)
	}
	canon := filepath.Join(dir, "canonical.jsonl")
	if _, stderr, err := runReward(t.Context(), append([]string{"convert", "-q", "--out", canon}, logs...)...); err != nil {
		t.Fatalf("convert: %v\n%s", err, stderr)
	}
	opts := []string{"build", "-q", "--task", "swebench", "--budget", "20000", "--tokenizer", tokenizerPath(t)}
	direct, converted := filepath.Join(dir, "direct"), filepath.Join(dir, "converted")
	if _, stderr, err := runReward(t.Context(), append(append(opts, "--out", direct), logs...)...); err != nil {
		t.Fatalf("build on the logs: %v\n%s", err, stderr)
	}
	if _, stderr, err := runReward(t.Context(), append(opts, "--out", converted, "-i", canon)...); err != nil {
		t.Fatalf("build on convert's output: %v\n%s", err, stderr)
	}
	for _, f := range []string{dataset.SFTFile, dataset.RLFile, dataset.EvalFile} {
		a, errA := os.ReadFile(filepath.Join(direct, f))
		b, errB := os.ReadFile(filepath.Join(converted, f))
		if errA != nil || errB != nil || string(a) != string(b) {
			t.Errorf("%s: build on the logs and on convert's output differ (%v, %v)", f, errA, errB)
		}
	}
	if stdout, _, err := runReward(t.Context(), "validate", "--strict", "--tokenizer", tokenizerPath(t), direct); err != nil {
		t.Fatalf("validate --strict %s: %v\n%s", direct, err, stdout)
	}
	rl, ev := filepath.Join(direct, dataset.RLFile), filepath.Join(direct, dataset.EvalFile)
	preds := filepath.Join(dir, "preds.jsonl")
	chainPredictions(t, preds, rl, ev)
	chainScore(t, dir, rl, preds, 26, "0.1998")
	chainScore(t, dir, ev, preds, 8, "0.1900")
	always := func(dataset.ExtraInfo) bool { return true }
	halfway := func(x dataset.ExtraInfo) bool { return 2*x.ProbeAfterTurn >= x.TotalTurns }
	// The eval split's failed runs are mini-swe-agent's sympy-11400
	// (56 + 59 tokens, 34 left after turn 1 of 2) and the OpenHands
	// trajectory (51 + 1351, 71 left after turn 2 of 3).
	chainEarlyStop(t, dir, ev, "logs-impossible", always, 115+1402, 59+1351)
	chainEarlyStop(t, dir, ev, "logs-halfway", halfway, 115+1402, 34+71)
	// The RL split's are mini-swe-agent's astropy-12907, the Claude Code
	// three-call session and an Inspect sample, each from its first probe.
	chainEarlyStop(t, dir, rl, "logs-rl-impossible", always, 211+2474+106, 161+123+58)
}

// TestChainProbesTokenizer runs probes → validate --tokenizer → eval and
// reward score on probe sets whose system share is not the shown system
// message's count: --compat bagen-v1 (the rollout's own system prompt is
// counted, the shipped one shown) and agent logs whose first request holds
// the system prompt (a share of 0, beside SWE-agent's task count).
func TestChainProbesTokenizer(t *testing.T) {
	dir := t.TempDir()
	verdicts := filepath.Join(dir, "verdicts.json")
	if err := os.WriteFile(verdicts, []byte(sessionVerdicts), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := []string{"--task", "swebench", "--budget", "20000", "--prefix-ids", "--results", "../rollout/testdata/report.json", "--success-file", verdicts}
	for _, d := range []string{"mini0", "mini1", "mini2", "openhands", "sweagent", "inspect", "harbor", "sessions"} {
		logs = append(logs, "-i", "../rollout/testdata/"+d)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		probes int
		reward string
	}{
		{"searchr1-bagen-v1", []string{"--task", "searchr1", "--compat", "bagen-v1"}, 272, "0.1639"},
		{"logs", logs, 27, "0.1808"},
	} {
		set := filepath.Join(dir, tc.name+".parquet")
		args := append([]string{"probes", "-q", "--tokenizer", tokenizerPath(t), "--out", set}, tc.args...)
		if _, stderr, err := runReward(t.Context(), args...); err != nil {
			t.Fatalf("probes %s: %v\n%s", tc.name, err, stderr)
		}
		if stdout, _, err := runReward(t.Context(), "validate", "--tokenizer", tokenizerPath(t), set); err != nil {
			t.Errorf("validate --tokenizer %s: %v\n%s", set, err, stdout)
		}
		p := filepath.Join(dir, tc.name+".preds.jsonl")
		chainPredictions(t, p, set)
		chainScore(t, dir, set, p, tc.probes, tc.reward)
	}
	always := func(dataset.ExtraInfo) bool { return true }
	// The failed rollouts, total (remaining after turn 1): Claude Code's
	// three-call session 2323 (282), Codex's two-call 1427 (197), OpenHands'
	// 6425 (225), mini-swe-agent's astropy-12907 1085 (125), sympy-11400 115
	// (34), sympy-20590 1396 (396) and an Inspect sample 512 (57), as the
	// logs record them.
	chainEarlyStop(t, dir, filepath.Join(dir, "logs.parquet"), "logs-probes-impossible", always,
		2323+1427+6425+1085+115+1396+512, 282+197+225+125+34+396+57)
}

// TestChainWarehouseBuild builds the embedded Warehouse rollouts by
// trajectory (they share one first user message, so by instance they form
// one group): their scripted agents begin alike, so eval prompts repeat
// training prompts of other rollouts, start states and first turns, with
// other answers. validate warns and accepts the build.
func TestChainWarehouseBuild(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	if _, stderr, err := runReward(t.Context(), "build", "-q", "--task", "warehouse", "--budget", "30000", "--split-by", "trajectory", "--out", out); err != nil {
		t.Fatalf("build: %v\n%s", err, stderr)
	}
	stdout, _, err := runReward(t.Context(), "validate", out)
	if err != nil {
		t.Fatalf("validate %s: %v\n%s", out, err, stdout)
	}
	for _, want := range []string{
		"WARNING [leakage/prompt-repeat] eval start-state prompts (no completed turn) identical to a training prompt of another trajectory: one start state rolled out more than once, which a model can answer from memory (7)\n",
		"WARNING [leakage/prefix-repeat] eval prompts with completed turns identical to a training prompt of another trajectory that teaches another answer: two rollouts that began alike (one start state, the same first actions) (3)\n",
		"0 errors, 2 warnings\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("validate output lacks %q:\n%s", want, stdout)
		}
	}
}
