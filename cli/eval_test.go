package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ollama/ollama/api"

	"bagen-data/dataset"
	"bagen-data/eval"
	"bagen-data/rollout"
)

// evalTable is the hand-computed table of the eval package's tests as
// parquet rows and answers (see eval/metrics_test.go): accuracy 6/11,
// Cover 2/4, MRE P50 1/6 and P90 0.45, R 2.38/11, one probe unanswered.
func evalTable(t *testing.T) (data, preds string) {
	t.Helper()
	type probe struct {
		id            string
		p, T, used, r int64
		possible      bool
		answer        string
	}
	probes := []probe{
		{"A0", 0, 4, 200, 800, true, "[600, 1000]"},
		{"A1", 1, 4, 400, 600, true, "[300, 500]"},
		{"A2", 2, 4, 700, 300, true, "impossible"},
		{"A3", 3, 4, 900, 100, true, "[80, 120]"},
		{"B0", 0, 2, 100, 400, true, "about four hundred"},
		{"B1", 1, 2, 300, 200, true, "[250, 350]"},
		{"C0", 0, 5, 150, 1850, false, "[500, 900]"},
		{"C1", 1, 5, 500, 1500, false, "Impossible"},
		{"C3", 3, 5, 1400, 600, false, "impossible"},
		{"D0", 0, 3, 300, 2700, false, "[100,200]"},
		{"D2", 2, 3, 2000, 1000, false, ""}, // no prediction
	}
	dir := t.TempDir()
	var rows []dataset.RLRow
	var lines strings.Builder
	for _, p := range probes {
		id := fmt.Sprintf("%s_probe_after_turn_%d", p.id[:1], p.p)
		rows = append(rows, dataset.RLRow{
			Prompt: []rollout.Message{{Role: "system", Content: "sys"}, {Role: "user", Content: "estimate " + id}},
			ExtraInfo: dataset.ExtraInfo{CustomID: id, TrajectoryID: p.id[:1], Split: dataset.SplitEval, ProbeAfterTurn: p.p,
				TotalTurns: p.T, TokensUsed: p.used, RemainingTokens: p.r, IsPossible: p.possible, Budget: 5000},
		})
		if p.answer != "" {
			b, _ := json.Marshal(map[string]string{"custom_id": id, "response": "<answer>" + p.answer + "</answer>"})
			lines.Write(append(b, '\n'))
		}
	}
	lines.WriteString(`{"custom_id":"Z_probe_after_turn_0","response":"<answer>impossible</answer>"}` + "\n")
	data, preds = filepath.Join(dir, "test.parquet"), filepath.Join(dir, "preds.jsonl")
	writeEvalParquet(t, data, rows)
	if err := os.WriteFile(preds, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return data, preds
}

func readRun(t *testing.T, path string) eval.Run {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r eval.Run
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestEvalPredictions(t *testing.T) {
	data, preds := evalTable(t)
	dir := filepath.Dir(data)
	js, page := filepath.Join(dir, "run.json"), filepath.Join(dir, "run.html")
	stdout, stderr, err := runReward(t.Context(), "eval", "--data", data, "--predictions", preds,
		"--bootstrap", "200", "--json", js, "--report", page)
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr)
	}
	for _, want := range []string{
		"preds: " + data + "\n",
		"probes 11: 6 possible, 5 impossible; 1 without a prediction\n",
		"\nAcc                  54.5%  [",
		"\nMRE P90              45.0%  [",
		"  tokens saved on failed    30.0% (1500/5000 tokens)\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	wantErr := "eval: 11 probes, 1 without a prediction (D_probe_after_turn_2), 1 predictions for unknown ids (Z_probe_after_turn_0)\n"
	if stderr != wantErr {
		t.Errorf("stderr: got %q, want %q", stderr, wantErr)
	}
	run := readRun(t, js)
	m := run.Metrics
	if run.Name != "preds" || m.Probes != 11 || m.Missing != 1 || m.Covered != 2 || m.Intervals != 4 ||
		fmt.Sprintf("%.6f %.6f", float64(m.Accuracy), float64(m.Reward)) != "0.545455 0.216364" || m.CI["accuracy"].Replicates != 200 {
		t.Errorf("json: got %+v", run)
	}
	html, err := os.ReadFile(page)
	// Three plots and the savings-versus-abort curve (the probes carry budgets).
	if err != nil || strings.Count(string(html), "<svg ") != 4 {
		t.Errorf("report: %d svg plots, %v; want 4", strings.Count(string(html), "<svg "), err)
	}

	// The same run again writes the same bytes.
	js2 := filepath.Join(dir, "again.json")
	if _, _, err := runReward(t.Context(), "eval", "--data", data, "--predictions", preds, "--bootstrap", "200", "--json", js2); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(js)
	b, _ := os.ReadFile(js2)
	if string(a) != string(b) {
		t.Errorf("two runs wrote different JSON")
	}
}

func TestEvalCompare(t *testing.T) {
	data, preds := evalTable(t)
	dir := filepath.Dir(data)
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	if _, _, err := runReward(t.Context(), "eval", "--data", data, "--predictions", preds, "--bootstrap", "0", "--name", "SFT pct30 e5", "--json", a); err != nil {
		t.Fatal(err)
	}
	// b answers every probe "impossible".
	var all strings.Builder
	for _, r := range mustReadRL(t, data) {
		fmt.Fprintf(&all, `{"custom_id":%q,"response":"<answer>impossible</answer>"}`+"\n", r.ExtraInfo.CustomID)
	}
	allImp := filepath.Join(dir, "zero-rl.jsonl")
	os.WriteFile(allImp, []byte(all.String()), 0o644)
	if _, _, err := runReward(t.Context(), "eval", "--data", data, "--predictions", allImp, "--bootstrap", "0", "--json", b); err != nil {
		t.Fatal(err)
	}
	stdout, _, err := runReward(t.Context(), "eval", "--compare", a, b)
	if err != nil {
		t.Fatal(err)
	}
	// zero-rl: 5 of 11 right, R = 5 × 0.2 / 11.
	// Trajectories A and B of four succeed, with 4, 2, 5 and 3 turns.
	want := "" +
		"SFT/RL sweep layout\n" +
		"run             Acc  Rec pos  Rec imp  Cover  MRE P50  MRE P90      R\n" +
		"SFT pct30 e5  54.5%    66.7%    40.0%  50.0%    16.7%    45.0%  0.216\n" +
		"zero-rl       45.5%     0.0%   100.0%      -        -        -  0.091\n" +
		"\n" +
		"overall layout (Success and Turns describe the probed rollouts; Reward is S over truly possible probes, ≤ Hit)\n" +
		"model         Success  Turns   F1@1  F1@All  Fail F1    Hit  Reward\n" +
		"SFT pct30 e5    50.0%   3.50  20.0%   58.3%    50.0%  33.3%   0.183\n" +
		"zero-rl         50.0%   3.50  33.3%   31.2%    62.5%   0.0%   0.000\n" +
		"\n" +
		"early stop layout (gross saved share as the paper reports it; net of the estimator's tokens up to each stop)\n" +
		// A2 of A's and B's 6 probes; A of A and B; C saves 1500 of the
		// 5000 the failed C and D cost; always impossible stops C and D at
		// p0 (1850 + 2700). No usage: no net.
		"run           false aborts  runs aborted  saved  estimator tokens  net tokens  net  net $\n" +
		"SFT pct30 e5         16.7%         50.0%  30.0%                 -           -    -      -\n" +
		"zero-rl             100.0%        100.0%  91.0%                 -           -    -      -\n"
	if stdout != want {
		t.Errorf("compare:\n%s\nwant:\n%s", stdout, want)
	}
}

func mustReadRL(t *testing.T, path string) []dataset.RLRow {
	t.Helper()
	rows, err := dataset.ReadRL(path)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestEvalErrors(t *testing.T) {
	data, preds := evalTable(t)
	dir := filepath.Dir(data)
	notRun := filepath.Join(dir, "other.json")
	os.WriteFile(notRun, []byte(`{"findings": []}`), 0o644)
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"custom_id":"A_probe_after_turn_0","response":"x"}`+"\n"+`{"custom_id":"A_probe_after_turn_0","response":"y"}`+"\n"), 0o644)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no data", []string{"eval", "--predictions", preds}, "eval: --data is required (the eval/test.parquet to score)"},
		{"no answers", []string{"eval", "--data", data}, "eval: give exactly one of --predictions FILE, --ollama MODEL and --endpoint URL"},
		{"both answers", []string{"eval", "--data", data, "--predictions", preds, "--ollama", "m"}, "eval: give exactly one of --predictions FILE, --ollama MODEL and --endpoint URL"},
		{"argument", []string{"eval", "--data", data, "--predictions", preds, "x.json"}, `eval: unexpected argument "x.json" (files given as arguments need --compare)`},
		{"conflicting predictions", []string{"eval", "--data", data, "--predictions", bad}, "eval: " + bad + `:2: custom_id "A_probe_after_turn_0": two different responses (line 1 has another)`},
		{"endpoint without model", []string{"eval", "--data", data, "--endpoint", "http://127.0.0.1:1"}, "eval: --endpoint needs --model NAME"},
		{"model without endpoint", []string{"eval", "--data", data, "--ollama", "m", "--model", "m"}, "eval: --model names the model at --endpoint; with Ollama use --ollama MODEL"},
		{"endpoint flags", []string{"eval", "--data", data, "--endpoint", "127.0.0.1:1", "--model", "m", "--header", "nokey", "--extra-body", `{"model":"x"}`},
			"eval: --header \"nokey\": want K=V\nendpoint \"127.0.0.1:1\": want http(s)://host[:port][/v1]\nextra body: \"model\" is set by the client"},
		{"extra body not an object", []string{"eval", "--data", data, "--endpoint", "http://h", "--model", "m", "--extra-body", "[1]"},
			"eval: --extra-body: want a JSON object, got \"[1]\""},
		{"negative numbers", []string{"eval", "--data", data, "--ollama", "m", "--concurrency", "-1", "--max-tokens", "-1", "--rate", "-2", "--price-out", "-1", "--timeout", "-1s"},
			"eval: --concurrency: want ≥ 0, got -1\n--max-tokens: want ≥ 0, got -1\n--rate: want a number ≥ 0, got -2\n--price-out: want a number ≥ 0, got -1\n--timeout: want ≥ 0, got -1s"},
		{"negative bootstrap", []string{"eval", "--data", data, "--predictions", preds, "--bootstrap", "-3"}, "eval: --bootstrap: want ≥ 0, got -3"},
		{"negative prices", []string{"eval", "--data", data, "--predictions", preds, "--price-cached", "-1", "--estimator-price-in", "-0.5"},
			"eval: --price-cached: want a number ≥ 0, got -1\n--estimator-price-in: want a number ≥ 0, got -0.5"},
		{"compare nothing", []string{"eval", "--compare"}, "eval: --compare needs the --json files of the runs to compare"},
		{"compare not a run", []string{"eval", "--compare", notRun}, "eval: " + notRun + ": not a saved eval run (no probes scored)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runReward(t.Context(), tt.args...)
			if err == nil || err.Error() != tt.want {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// A command line eval cannot run as written exits 2, before reading any
// input; an input it cannot use exits 1.
func TestEvalExitCodes(t *testing.T) {
	data, preds := evalTable(t)
	dir := filepath.Dir(data)
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"negative bootstrap", []string{"eval", "--data", data, "--predictions", preds, "--bootstrap", "-3"}, ExitUsage},
		{"negative price", []string{"eval", "--data", data, "--predictions", preds, "--estimator-price-out", "-1"}, ExitUsage},
		{"no data", []string{"eval", "--predictions", preds}, ExitUsage},
		{"stray argument", []string{"eval", "--data", data, "--predictions", preds, "x.json"}, ExitUsage},
		{"two sources", []string{"eval", "--data", data, "--predictions", preds, "--ollama", "m"}, ExitUsage},
		{"missing predictions file", []string{"eval", "--data", data, "--predictions", filepath.Join(dir, "none.jsonl")}, ExitError},
		{"fine", []string{"eval", "--data", data, "--predictions", preds, "--bootstrap", "0"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r := bagen(t, dir, tt.args...); r.code != tt.code {
				t.Errorf("bagen-data %s: exit %d, want %d\n%s", strings.Join(tt.args, " "), r.code, tt.code, r.stderr)
			}
		})
	}
}

// --quiet prints no summary; the --json it writes is the one a run
// without it writes.
func TestEvalQuiet(t *testing.T) {
	data, preds := evalTable(t)
	dir := t.TempDir()
	loud, quiet := filepath.Join(dir, "loud.json"), filepath.Join(dir, "quiet.json")
	stdout, _, err := runReward(t.Context(), "eval", "--data", data, "--predictions", preds, "--bootstrap", "50", "--json", loud)
	if err != nil || !strings.Contains(stdout, "early stop at the first impossible prediction") {
		t.Fatalf("without -q: %v, no summary in:\n%s", err, stdout)
	}
	stdout, stderr, err := runReward(t.Context(), "eval", "--data", data, "--predictions", preds, "--bootstrap", "50", "--json", quiet, "-q")
	if err != nil || stdout != "" {
		t.Errorf("eval -q: %v; printed %q (stderr %q), want nothing", err, stdout, stderr)
	}
	a, _ := os.ReadFile(loud)
	b, _ := os.ReadFile(quiet)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("--json differs with -q (%d and %d bytes)", len(a), len(b))
	}
}

// TestEvalOllama answers through a test server speaking Ollama's
// /api/chat, then reruns: the second run asks nothing and scores the same.
func TestEvalOllama(t *testing.T) {
	data, _ := evalTable(t)
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		var req api.ChatRequest
		if r.URL.Path != "/api/chat" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		answer := "<answer>impossible</answer>"
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "A_") {
			answer = "<answer>[100, 1000]</answer>"
		}
		json.NewEncoder(w).Encode(api.ChatResponse{Model: req.Model, Message: api.Message{Role: "assistant", Content: answer}, Done: true})
	}))
	defer srv.Close()
	t.Setenv("OLLAMA_HOST", srv.URL)
	out := filepath.Join(t.TempDir(), "preds.jsonl")
	js := filepath.Join(filepath.Dir(out), "run.json")
	args := []string{"eval", "--data", data, "--ollama", "qwen2.5:7b", "--predictions-out", out, "--bootstrap", "0", "--json", js}
	_, stderr, err := runReward(t.Context(), args...)
	if err != nil {
		t.Fatal(err)
	}
	if n := requests.Load(); n != 11 || stderr != "eval: 11 answers in "+out+" (11 asked now, 0 from before)\n" {
		t.Errorf("first run: %d requests, stderr %q", n, stderr)
	}
	first := readRun(t, js)
	_, stderr, err = runReward(t.Context(), args...)
	if err != nil {
		t.Fatal(err)
	}
	if n := requests.Load(); n != 11 || stderr != "eval: 11 answers in "+out+" (0 asked now, 11 from before)\n" {
		t.Errorf("rerun: %d requests in all, stderr %q", n, stderr)
	}
	second := readRun(t, js)
	// Trajectory A's four possible probes (r = 800, 600, 300, 100) get
	// [100, 1000], which holds each; everything else gets "impossible".
	m := second.Metrics
	if first.Model != "qwen2.5:7b" || m.Intervals != 4 || m.Covered != 4 || m.Confusion.Impossible.Impossible != 5 ||
		fmt.Sprint(first.Metrics.Accuracy) != fmt.Sprint(m.Accuracy) {
		t.Errorf("metrics: got %+v", m)
	}
	_, _, err = runReward(t.Context(), "eval", "--data", data, "--ollama", "llama3", "--predictions-out", out)
	if err == nil || !strings.Contains(err.Error(), `is from model "qwen2.5:7b", not "llama3": answers from another model (use another --predictions-out)`) {
		t.Errorf("another model on the same log: got %v", err)
	}
}

// TestEvalWarehouseProbes scores the ground-truth answers of the Warehouse
// probe set built from the embedded fixtures: every interval covers all
// three dimensions exactly, R is 1.8 on possible and 0.2 on impossible
// probes, and F1@1 scores each rollout's first probe (after turn 1).
func TestEvalWarehouseProbes(t *testing.T) {
	dir := t.TempDir()
	data, preds, js := filepath.Join(dir, "wh.parquet"), filepath.Join(dir, "gt.jsonl"), filepath.Join(dir, "run.json")
	if _, stderr, err := runReward(t.Context(), "probes", "--task", "warehouse", "--out", data); err != nil {
		t.Fatalf("probes: %v\n%s", err, stderr)
	}
	rows := mustReadRL(t, data)
	var lines strings.Builder
	possible, trajs := 0, map[string]bool{}
	for _, r := range rows {
		b, _ := json.Marshal(map[string]string{"custom_id": r.ExtraInfo.CustomID, "response": "<answer>" + r.RewardModel.GroundTruth + "</answer>"})
		lines.Write(append(b, '\n'))
		if r.ExtraInfo.IsPossible {
			possible++
		}
		trajs[r.ExtraInfo.TrajectoryID] = true
	}
	if err := os.WriteFile(preds, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := runReward(t.Context(), "eval", "--data", data, "--predictions", preds, "--bootstrap", "0", "--json", js)
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr)
	}
	m := readRun(t, js).Metrics
	if len(rows) != 633 || possible != 319 || len(trajs) != 64 {
		t.Fatalf("probe set: %d rows, %d possible, %d rollouts; want 633, 319, 64", len(rows), possible, len(trajs))
	}
	got := fmt.Sprintf("probes %d, possible %d, covered %d/%d, Cover %v, MRE %v/%v, R possible %.12f, R impossible %.12f, S %v, F1@1 %v over %d, Acc %v",
		m.Probes, m.TruePossible, m.Covered, m.Intervals, float64(m.Coverage), float64(m.MREP50), float64(m.MREP90),
		float64(m.RewardPossible), float64(m.RewardImpossible), float64(m.Score), float64(m.F1First), m.FirstTurnProbes, float64(m.Accuracy))
	want := "probes 633, possible 319, covered 319/319, Cover 1, MRE 0/0, R possible 1.800000000000, R impossible 0.200000000000, S 1, F1@1 1 over 64, Acc 1"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, d := range m.Dims {
		if d.Intervals != 319 || d.Covered != 319 || float64(d.MREP90) != 0 {
			t.Errorf("dimension %s: covered %d/%d, MRE P90 %v; want 319/319, 0", d.Dim, d.Covered, d.Intervals, float64(d.MREP90))
		}
	}
	for _, line := range []string{
		"\nCover                100.0%          319/319\n",
		"\nR on possible         1.800              319\n",
		"\nR on impossible       0.200              314\n",
		"\ndimension              Cover        n  MRE P50  MRE P90\ntime_weeks            100.0%  319/319     0.0%     0.0%\n",
	} {
		if !strings.Contains(stdout, line) {
			t.Errorf("stdout lacks %q:\n%s", line, stdout)
		}
	}
}

// TestEvalBadLabel: a row whose label column cannot be read stops the run
// with its row and custom_id.
func TestEvalBadLabel(t *testing.T) {
	dir := t.TempDir()
	data, preds := filepath.Join(dir, "test.parquet"), filepath.Join(dir, "preds.jsonl")
	row := func(id, label string) dataset.RLRow {
		return dataset.RLRow{Label: label, ExtraInfo: dataset.ExtraInfo{CustomID: id, TrajectoryID: "w", ProbeAfterTurn: 1, TotalTurns: 3}}
	}
	writeEvalParquet(t, data, []dataset.RLRow{
		row("w_probe_after_turn_1", `{"time_weeks":2,"warehouse_item_weeks":0,"cumulative_cost_usd":10,"is_possible":true}`),
		row("w_probe_after_turn_2", `{"time_weeks":2,"is_possible":true}`),
		row("w_probe_after_turn_3", `soon`),
	})
	os.WriteFile(preds, nil, 0o644)
	_, _, err := runReward(t.Context(), "eval", "--data", data, "--predictions", preds)
	want := "eval: " + data + ": row 1 (w_probe_after_turn_2): label: invalid label: warehouse_item_weeks: missing (and 1 more rows)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

// TestEvalCompatBagenV1 adds the authors' eval_checkpoint.py summary of
// evalTable, computed by hand from their definitions: 9 of 11 answers
// parse (B0 and the missing D2 do not), 6 classes right, hits 4/6 and 2/5,
// covered 2/6 (A0, A3), relative errors [0, 1/3, 0, 1/2] with mean 5/24 and
// sorted[4 // 2] = 1/3.
func TestEvalCompatBagenV1(t *testing.T) {
	data, preds := evalTable(t)
	js := filepath.Join(filepath.Dir(data), "run.json")
	stdout, stderr, err := runReward(t.Context(), "eval", "--data", data, "--predictions", preds, "--bootstrap", "0", "--compat", "bagen-v1", "--json", js)
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr)
	}
	want := "bagen-v1 (eval_checkpoint.py): n_samples 11, n_possible 6, n_impossible 5\n" +
		"  mean_reward 0.2164  format_valid_rate 0.8182  class_accuracy 0.5455\n" +
		"  pred_hit_possible 0.6667  pred_hit_impossible 0.4000  cover_rate_possible 0.3333\n" +
		"  mean_relative_error 0.2083  median_relative_error 0.3333\n"
	if !strings.HasSuffix(stdout, want) {
		t.Errorf("stdout ends:\n%s\nwant:\n%s", stdout[max(0, len(stdout)-400):], want)
	}
	s := readRun(t, js).Metrics.BagenV1
	if s == nil || s.MedianRelativeError != 1.0/3 || s.CoverRatePossible != 2.0/6 || s.FormatValidRate != 9.0/11 {
		t.Errorf("json bagen_v1: %+v", s)
	}
	if m := readRun(t, js).Metrics; fmt.Sprintf("%.6f", float64(m.MREMean)) != "0.208333" {
		t.Errorf("mre_mean %v, want 5/24", m.MREMean)
	}
}

// TestEvalLedgerOtherData asks a model (a test server speaking Ollama's
// /api/chat) for the eval file of one build, then for the eval file of a
// build with another --budget, through the same ledger: the custom_ids are
// the same, every prompt differs, so every probe is asked again and scored
// with its new answer, and stderr says so.
func TestEvalLedgerOtherData(t *testing.T) {
	dir := t.TempDir()
	var data [2]string
	for i, budget := range []string{"2500", "3000"} {
		out := filepath.Join(dir, "out"+budget)
		if _, stderr, err := runReward(t.Context(), "build", "-q", "--budget", budget, "--out", out, "--tokenizer", tokenizerPath(t)); err != nil {
			t.Fatalf("build --budget %s: %v\n%s", budget, err, stderr)
		}
		data[i] = filepath.Join(out, dataset.EvalFile)
	}
	var requests atomic.Int64
	var answer atomic.Value
	answer.Store("<answer>impossible</answer>")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		var req api.ChatRequest
		if r.URL.Path != "/api/chat" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		json.NewEncoder(w).Encode(api.ChatResponse{Model: req.Model, Message: api.Message{Role: "assistant", Content: answer.Load().(string)}, Done: true})
	}))
	defer srv.Close()
	t.Setenv("OLLAMA_HOST", srv.URL)
	ledger, js := filepath.Join(dir, "preds.jsonl"), filepath.Join(dir, "run.json")
	run := func(data string) (eval.Run, string) {
		_, stderr, err := runReward(t.Context(), "eval", "--data", data, "--ollama", "m", "--predictions-out", ledger, "--bootstrap", "0", "--json", js)
		if err != nil {
			t.Fatalf("eval --data %s: %v\n%s", data, err, stderr)
		}
		return readRun(t, js), stderr
	}
	first, _ := run(data[0])
	n := int64(first.Metrics.Probes)
	if requests.Load() != n || first.Metrics.RecallImpossible != 1 || first.Metrics.RecallPossible != 0 {
		t.Fatalf("first run: %d requests for %d probes, recalls %v, %v", requests.Load(), n, first.Metrics.RecallPossible, first.Metrics.RecallImpossible)
	}
	answer.Store("<answer>[0, 100000]</answer>")
	second, stderr := run(data[1])
	m := second.Metrics
	want := fmt.Sprintf("eval: %d answers in %s (%d asked now, 0 from before; %d asked again: their saved answers were to another prompt or sampling)\n", m.Probes, ledger, m.Probes, m.Probes)
	if requests.Load() != n+int64(m.Probes) || stderr != want || m.RecallPossible != 1 || m.RecallImpossible != 0 {
		t.Errorf("second run: %d requests in all, recalls %v, %v, stderr %q; want %d, 1, 0, %q",
			requests.Load(), m.RecallPossible, m.RecallImpossible, stderr, n+int64(m.Probes), want)
	}
	// Back on the first file, its answers are still in the ledger.
	again, stderr := run(data[0])
	if requests.Load() != n+int64(m.Probes) || again.Metrics.RecallImpossible != 1 || !strings.Contains(stderr, fmt.Sprintf("(0 asked now, %d from before)", n)) {
		t.Errorf("third run: %d requests in all, recall impossible %v, stderr %q", requests.Load(), again.Metrics.RecallImpossible, stderr)
	}
}
