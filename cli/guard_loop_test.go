package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"bagen-data/internal/testenv"

	"bagen-data/dataset"
	"bagen-data/eval"
	predict "bagen-data/eval/prediction"
	"bagen-data/internal/agenttest"
	"bagen-data/internal/ollamatest"
	"bagen-data/reward"
)

// startGuard runs `bagen-data guard` with args on a free loopback port
// until the test ends and returns its URL; stop cancels it (as SIGTERM
// does) and returns the command's error and stderr.
func startGuard(t *testing.T, args ...string) (string, func() (string, error)) {
	t.Helper()
	argv := append([]string{"guard", "--listen", "127.0.0.1:0"}, args...)
	return runServer(t, "guard", argv, regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+),`))
}

// scriptedEstimator is an OpenAI-compatible estimator on loopback that
// answers its k-th request (from 0) with answers[k % len(answers)] and
// keeps what it answered, in order.
type scriptedEstimator struct {
	URL     string
	mu      sync.Mutex
	answers []string
	said    []string
}

func startScriptedEstimator(t *testing.T, answers ...string) *scriptedEstimator {
	t.Helper()
	e := &scriptedEstimator{answers: answers}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r) // GET /v1/models: no accounting listed
			return
		}
		io.Copy(io.Discard, r.Body)
		e.mu.Lock()
		a := e.answers[len(e.said)%len(e.answers)]
		e.said = append(e.said, a)
		e.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"e","model":"est","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":700,"completion_tokens":20}}`, a)
	}))
	t.Cleanup(srv.Close)
	e.URL = srv.URL
	return e
}

// answers returns what the estimator answered so far.
func (e *scriptedEstimator) said_() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.said...)
}

// TestEvalGuardEstimates runs Qwen Code through the guard with a scripted
// estimator, makes probes of the ledger and scores the ledger's live
// estimates with eval --predictions LEDGER: the metrics are recomputed
// here from the probe rows and the estimator's answers, taken in the
// order it gave them (--wait: turn k's estimate comes before turn k+1).
func TestEvalGuardEstimates(t *testing.T) {
	testenv.Need(t, "Qwen Code", agenttest.Available(agenttest.Qwen))
	model := agenttest.StartModel(t, agenttest.Scripts["three-calls"])
	est := startScriptedEstimator(t, "<answer>[100, 9000]</answer>", "<answer>impossible</answer>", "no idea")
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	url, stop := startGuard(t, "--upstream", model.URL, "--estimator", est.URL, "--estimator-model", "est",
		"--policy", "log", "--wait", "--budget", "100000", "--ledger", ledger)
	res := agenttest.Run(t, agenttest.CLI{Agent: agenttest.Qwen, BaseURL: url, Prompt: agenttest.Prompts["three-calls"]})
	if res.ExitCode != 0 {
		t.Fatalf("qwen exited %d\n%s", res.ExitCode, res.Stderr)
	}
	if log, err := stop(); err != nil {
		t.Fatalf("guard: %v\n%s", err, log)
	}
	set := filepath.Join(dir, "probes.parquet")
	if _, stderr, err := runReward(t.Context(), "probes", "-q", "--task", "swebench", "--input", ledger, "--out", set, "--tokenizer", tokenizerPath(t)); err != nil {
		t.Fatalf("probes --input %s: %v\n%s", ledger, err, stderr)
	}
	js := filepath.Join(dir, "run.json")
	if _, stderr, err := runReward(t.Context(), "eval", "--data", set, "--predictions", ledger, "--bootstrap", "0", "--json", js); err != nil {
		t.Fatalf("eval --predictions %s: %v\n%s", ledger, err, stderr)
	}
	run, err := eval.ReadRun(js)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := dataset.ReadRL(set)
	if err != nil {
		t.Fatal(err)
	}
	said := est.said_()
	var probes, valid, correct, missing int
	for _, r := range rows {
		x := r.ExtraInfo
		k := int(x.ProbeAfterTurn)
		probes++
		if k < 1 || k > len(said) || !strings.HasSuffix(x.CustomID, dataset.ProbeSuffix+fmt.Sprint(k)) {
			missing++
			continue
		}
		switch said[k-1] {
		case "<answer>impossible</answer>":
			valid++
			if !x.IsPossible {
				correct++
			}
		case "<answer>[100, 9000]</answer>":
			valid++
			if x.IsPossible {
				correct++
			}
		}
	}
	m := run.Metrics
	b, _ := json.Marshal(m)
	t.Logf("estimator said %q; %d probes; metrics %s", said, len(rows), b)
	if m.Probes != probes || m.Missing != missing ||
		m.FormatValid != eval.Num(float64(valid)/float64(probes)) || m.Accuracy != eval.Num(float64(correct)/float64(probes)) {
		t.Errorf("eval: probes %d, missing %d, format valid %v, accuracy %v; the rows and answers give %d, %d, %d/%d, %d/%d",
			m.Probes, m.Missing, float64(m.FormatValid), float64(m.Accuracy), probes, missing, valid, probes, correct, probes)
	}
	// Four turns, four estimates; probes after turns 1 to 3 of a run
	// without an outcome (impossible): one impossible answer is right.
	if len(said) != 4 || probes != 3 || missing != 0 || valid != 2 || correct != 1 {
		t.Errorf("%d answers, %d probes, %d missing, %d valid, %d right; want 4, 3, 0, 2, 1", len(said), probes, missing, valid, correct)
	}
}

// loopAgents are the CLIs of the loop test: one per wire format the
// server side of the loop cares about (Chat Completions, Anthropic).
var loopAgents = []agenttest.Agent{agenttest.Qwen, agenttest.Claude}

// runAgents runs each agent once through url, at the same time, and
// requires that each exits 0.
func runAgents(t *testing.T, url string, agents []agenttest.Agent) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(agents))
	for i, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := agenttest.CLI{Agent: a, BaseURL: url, Prompt: agenttest.Prompts["three-calls"], Home: t.TempDir()}
			res, err := c.Run(context.Background())
			if err == nil && res.ExitCode != 0 {
				err = fmt.Errorf("exit %d\n%s", res.ExitCode, res.Stderr)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", agents[i], err)
		}
	}
}

// ledgerSessions returns the session ids of a ledger directory, sorted.
func ledgerSessions(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range files {
		ids = append(ids, strings.TrimSuffix(filepath.Base(f), ".jsonl"))
	}
	return ids
}

// TestGuardTrainServeLoop closes the loop on one machine: Qwen Code and
// Claude Code run through the guard (--policy log) against the stand-in
// → build --input LEDGER → grpo train (tiny model, one SFT and one GRPO
// epoch) → grpo serve → the same CLIs through a second guard whose
// --estimator is that server. The second ledger's estimates must parse,
// and for every probe that probes makes of the second ledger they must be
// the answer text grpo eval gives offline for that probe.
func TestGuardTrainServeLoop(t *testing.T) {
	for _, a := range loopAgents {
		testenv.Need(t, string(a), agenttest.Available(a))
	}
	srv := ollamatest.Start(t)
	t.Setenv("OLLAMA_HOST", strings.TrimPrefix(srv.Host, "http://"))
	tmp := t.TempDir()
	model := agenttest.StartModel(t, agenttest.Scripts["three-calls"])

	// 1. The agents run under a logging guard.
	first := filepath.Join(tmp, "ledger")
	url, stop := startGuard(t, "--upstream", model.URL, "--policy", "log", "--budget", "100000", "--ledger", first)
	runAgents(t, url, loopAgents)
	if log, err := stop(); err != nil {
		t.Fatalf("guard: %v\n%s", err, log)
	}
	sessions := ledgerSessions(t, first)
	if len(sessions) != len(loopAgents) {
		t.Fatalf("first ledger: sessions %v, want one per agent", sessions)
	}

	// 2. One run succeeded, one failed; build trains on both.
	outcomes := filepath.Join(tmp, "outcomes.json")
	os.WriteFile(outcomes, []byte(fmt.Sprintf(`{%q: true, %q: false}`, sessions[0], sessions[1])), 0o600)
	data, run, cache := filepath.Join(tmp, "data"), filepath.Join(tmp, "run"), filepath.Join(tmp, "cache")
	runGRPOApp(t, "build", "--input", first, "--success-file", outcomes, "--task", "swebench", "--out", data,
		"--split-by", "trajectory", "--split", "50/50/0", "--balance-ratio", "0", "--accounting", "replay", "-q")
	runGRPOApp(t, "grpo", "train", "--data", data, "--out", run, "--model", srv.Model,
		"--sft-epochs", "1", "--epochs", "1", "--sft-batch", "4", "--batch", "4", "--cache", cache, "--name", "loop", "-q")

	// 3. The trained head serves the second guard's estimates.
	base, stopServe := serveGRPO(t, "--checkpoint", run, "--cache", cache, "--name", "loop")
	second := filepath.Join(tmp, "ledger2")
	url, stop = startGuard(t, "--upstream", model.URL, "--estimator", base, "--estimator-model", "loop",
		"--policy", "log", "--wait", "--budget", "100000", "--ledger", second)
	runAgents(t, url, loopAgents)
	if log, err := stop(); err != nil || strings.Contains(log, "accounting") {
		t.Fatalf("second guard: %v (want no word of the accounting: the head learned on the guard's)\n%s", err, log)
	}
	if log, err := stopServe(); err != nil {
		t.Fatalf("grpo serve: %v\n%s", err, log)
	}
	live, err := predict.ReadLedger(second)
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]string{}
	for _, p := range live {
		if v := reward.Parse(p.Response).Kind; p.Failed() || (v != reward.Interval && v != reward.Impossible) {
			t.Errorf("%s: estimate %q (error %q): want an interval or impossible", p.CustomID, p.Response, p.Error)
		}
		served[p.CustomID] = p.Response
	}
	// Four turns per run, an estimate after each.
	if len(live) != 4*len(loopAgents) {
		t.Errorf("second ledger: %d estimates, want %d", len(live), 4*len(loopAgents))
	}

	// 4. Offline, the same head answers the probes of the second ledger
	// with the same text.
	set, preds := filepath.Join(tmp, "live.parquet"), filepath.Join(tmp, "grpo-preds.jsonl")
	runGRPOApp(t, "probes", "-q", "--task", "swebench", "--input", second, "--out", set, "--tokenizer", tokenizerPath(t))
	runGRPOApp(t, "grpo", "eval", "--checkpoint", run, "--data", set, "--cache", cache, "--predictions-out", preds, "-q")
	offline, _ := readAnswers(t, preds)
	if len(offline) != 3*len(loopAgents) {
		t.Errorf("probes of the second ledger: %d, want %d (after turns 1 to 3 of each run)", len(offline), 3*len(loopAgents))
	}
	kinds := map[string]int{}
	for id, want := range offline {
		kinds[want]++
		if got, ok := served[id]; !ok || got != want {
			t.Errorf("%s: the guard recorded %q (found %v), grpo eval answers %q", id, got, ok, want)
		}
	}
	t.Logf("served answers: %v", kinds)
}
