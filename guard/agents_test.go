package guard

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"bagen-data/eval/prediction"
	"bagen-data/internal/agenttest"
	"bagen-data/internal/ollamatest"
	"bagen-data/internal/testenv"
	"bagen-data/rollout"
)

// The real agent CLIs, headless, through the guard to the scripted
// stand-in model: each must run to its end under --policy log with its
// usage in the ledger exactly as the stand-in reported it, and stop by
// itself after 2 calls under --policy stop with an estimator that says
// impossible after turn 2. Each run sends a distinct key, which must reach
// the stand-in on every call and no file the guard wrote.

var agents = []agenttest.Agent{agenttest.Claude, agenttest.Codex, agenttest.Qwen}

// guardRun is a guard on loopback in front of a stand-in.
type guardRun struct {
	model  *agenttest.Model
	guard  *Guard
	url    string
	ledger string
	logs   *bytes.Buffer
	srv    *httptest.Server
}

func startGuardRun(t *testing.T, script agenttest.Script, cfg Config) *guardRun {
	t.Helper()
	r := &guardRun{model: agenttest.StartModel(t, script), ledger: filepath.Join(t.TempDir(), "ledger"), logs: &bytes.Buffer{}}
	var mu sync.Mutex
	cfg.Upstream, cfg.Ledger = r.model.URL, r.ledger
	cfg.Logf = func(format string, args ...any) {
		mu.Lock()
		fmt.Fprintf(r.logs, format+"\n", args...)
		mu.Unlock()
	}
	var err error
	if r.guard, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	r.srv = httptest.NewServer(r.guard)
	r.url = r.srv.URL
	t.Cleanup(r.close)
	return r
}

// close waits for the calls in flight and the estimates.
func (r *guardRun) close() {
	r.srv.Close()
	r.guard.Close()
}

// trajectories reads the ledger as bagen-data convert does.
func (r *guardRun) trajectories(t *testing.T) []rollout.Trajectory {
	t.Helper()
	return decodeLedger(t, r.ledger)
}

// run is the main trajectory: the one whose turns offered tools.
func mainRun(t *testing.T, trajs []rollout.Trajectory, calls int) rollout.Trajectory {
	t.Helper()
	var found []rollout.Trajectory
	for _, tr := range trajs {
		if len(tr.API) == calls {
			found = append(found, tr)
		}
	}
	if len(found) != 1 {
		var lens []int
		for _, tr := range trajs {
			lens = append(lens, len(tr.API))
		}
		t.Fatalf("ledger sessions with %d turns: %d, want 1 (sessions' turns: %v)", calls, len(found), lens)
	}
	return found[0]
}

// standInUsage is what the stand-in reported, as APITokens.
func standInUsage(calls []agenttest.Call) []rollout.APITokens {
	var out []rollout.APITokens
	for _, c := range calls {
		u := c.Answer.Usage
		reasoning := int64(u.Reasoning)
		out = append(out, rollout.APITokens{Input: int64(u.Input), Output: int64(u.Output), Reasoning: &reasoning, Cached: int64(u.Cached)})
	}
	return out
}

// keyOf is the agent's key as its API sends it.
func keyOf(c agenttest.Call) string {
	if k := c.Header.Get("X-Api-Key"); k != "" {
		return k
	}
	return strings.TrimPrefix(c.Header.Get("Authorization"), "Bearer ")
}

// checkNoKey fails when key appears in any file under dir, the guard's
// logs or its metrics.
func (r *guardRun) checkNoKey(t *testing.T, key string) {
	t.Helper()
	filepath.WalkDir(r.ledger, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, _ := os.ReadFile(path)
		if bytes.Contains(data, []byte(key)) {
			t.Errorf("%s holds the agent's key", path)
		}
		return nil
	})
	if bytes.Contains(r.logs.Bytes(), []byte(key)) {
		t.Errorf("the guard's log holds the agent's key")
	}
	rec := httptest.NewRecorder()
	r.guard.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if !bytes.Contains(rec.Body.Bytes(), []byte("bagen_guard_calls_total")) || bytes.Contains(rec.Body.Bytes(), []byte(key)) {
		t.Errorf("/metrics is empty or holds the agent's key:\n%s", rec.Body)
	}
}

func TestAgentsLogPolicy(t *testing.T) {
	script := agenttest.Scripts["two-calls"]
	for _, agent := range agents {
		t.Run(string(agent), func(t *testing.T) {
			testenv.Need(t, string(agent), agenttest.Available(agent))
			r := startGuardRun(t, script, Config{Policy: Log})
			key := "sk-bagen-guard-test-" + string(agent) + "-5b7e1c"
			res := agenttest.Run(t, agenttest.CLI{Agent: agent, BaseURL: r.url, Prompt: agenttest.Prompts["two-calls"], APIKey: key})
			if res.ExitCode != 0 {
				t.Fatalf("%s exited %d\nstdout:\n%s\nstderr:\n%s", agent, res.ExitCode, res.Stdout, res.Stderr)
			}
			r.close()
			main := r.model.MainCalls()
			if len(main) != len(script.Answers) {
				t.Errorf("stand-in saw %d main calls, want %d", len(main), len(script.Answers))
			}
			for i, c := range r.model.Calls() {
				if keyOf(c) != key {
					t.Errorf("call %d (%s %s) carried key %q, want %q", i, c.Method, c.Path, keyOf(c), key)
				}
			}
			trajs := r.trajectories(t)
			if len(trajs) != 1 {
				t.Errorf("ledger has %d sessions, want 1", len(trajs))
			}
			tr := mainRun(t, trajs, len(main))
			if diff := cmp.Diff(standInUsage(main), tr.API); diff != "" {
				t.Errorf("ledger usage (-stand-in +ledger):\n%s", diff)
			}
			if tr.Extra.Guard == nil || tr.Extra.Guard.Policy != "log" || tr.Extra.Guard.StoppedAfterTurn != nil {
				t.Errorf("metadata.guard %+v, want policy log, not stopped", tr.Extra.Guard)
			}
			r.checkNoKey(t, key)
		})
	}
}

func TestAgentsStopPolicy(t *testing.T) {
	script := agenttest.Scripts["three-calls"]
	for _, agent := range agents {
		t.Run(string(agent), func(t *testing.T) {
			testenv.Need(t, string(agent), agenttest.Available(agent))
			est, _ := estimatorServer(t, func(n int) string {
				if n >= 2 {
					return "<think>too far</think><answer>impossible</answer>"
				}
				return "<answer>[1000, 3000]</answer>"
			})
			r := startGuardRun(t, script, Config{Policy: Stop, StopAs: Auto, Budget: 100_000, Wait: true, Estimator: estimatorFor(est.URL)})
			key := "sk-bagen-guard-stop-" + string(agent) + "-91d2"
			start := time.Now()
			res := agenttest.Run(t, agenttest.CLI{Agent: agent, BaseURL: r.url, Prompt: agenttest.Prompts["three-calls"], APIKey: key, Timeout: 2 * time.Minute})
			took := time.Since(start)
			if res.ExitCode != 0 {
				t.Fatalf("%s exited %d after %v\nstdout:\n%s\nstderr:\n%s", agent, res.ExitCode, took, res.Stdout, res.Stderr)
			}
			r.close()
			if n := len(r.model.MainCalls()); n != 2 {
				t.Errorf("stand-in saw %d main calls, want 2", n)
			}
			tr := mainRun(t, r.trajectories(t), 2)
			if tr.Extra.Guard == nil || tr.Extra.Guard.StoppedAfterTurn == nil || *tr.Extra.Guard.StoppedAfterTurn != 2 {
				t.Errorf("metadata.guard %+v, want stopped after turn 2", tr.Extra.Guard)
			}
			if !strings.Contains(res.Stdout+res.Stderr, "bagen-data guard stopped this session after turn 2") {
				t.Logf("%s output does not show the stop:\nstdout:\n%s\nstderr:\n%s", agent, res.Stdout, res.Stderr)
			}
			t.Logf("%s stopped after 2 calls and exited 0 in %v", agent, took.Round(time.Millisecond))
			r.checkNoKey(t, key)
		})
	}
}

// TestAgentsRealEstimator runs Claude Code through the guard with a real
// model server as the estimator (Ollama with the tiny random Qwen2 of
// internal/ollamatest): every turn gets an estimate, and the estimator's
// own tokens, as the server reported them, add up in the ledger and in
// /metrics.
func TestAgentsRealEstimator(t *testing.T) {
	testenv.Need(t, string(agenttest.Claude), agenttest.Available(agenttest.Claude))
	oll := ollamatest.Start(t)
	est := NewEstimator(&prediction.OpenAI{BaseURL: oll.Host + "/v1", Model: oll.Model, MaxTokens: 16},
		prediction.Retry{Attempts: 2, Backoff: 10 * time.Millisecond})
	script := agenttest.Scripts["three-calls"]
	r := startGuardRun(t, script, Config{Policy: Log, Budget: 100_000, Wait: true, Estimator: est, EstimateTimeout: 2 * time.Minute})
	res := agenttest.Run(t, agenttest.CLI{Agent: agenttest.Claude, BaseURL: r.url, Prompt: agenttest.Prompts["three-calls"]})
	if res.ExitCode != 0 {
		t.Fatalf("claude exited %d\n%s", res.ExitCode, res.Stderr)
	}
	rec := httptest.NewRecorder()
	r.close()
	r.guard.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	tr := mainRun(t, r.trajectories(t), len(script.Answers))
	var in, out int64
	for _, e := range tr.Extra.Guard.Estimates {
		if e.Verdict == "unestimated" || e.EstimatorInput <= 0 {
			t.Errorf("estimate after turn %d: %s (%s), %d input tokens", e.AfterTurn, e.Verdict, e.Error, e.EstimatorInput)
		}
		in += e.EstimatorInput
		out += e.EstimatorOutput
		t.Logf("after turn %d: estimator read %d tokens, wrote %d (%s)", e.AfterTurn, e.EstimatorInput, e.EstimatorOutput, e.Verdict)
	}
	if len(tr.Extra.Guard.Estimates) != len(script.Answers) {
		t.Errorf("%d estimates, want one per turn (%d)", len(tr.Extra.Guard.Estimates), len(script.Answers))
	}
	for _, want := range []string{fmt.Sprintf(`bagen_guard_estimator_tokens_total{kind="input"} %d`, in), fmt.Sprintf(`bagen_guard_estimator_tokens_total{kind="output"} %d`, out)} {
		if !bytes.Contains(rec.Body.Bytes(), []byte(want)) {
			t.Errorf("metrics lack %q", want)
		}
	}
	var agent int64
	for _, a := range tr.API {
		agent += a.Input + a.Output
	}
	t.Logf("agent calls: %d tokens (inputs + outputs); estimator: %d in, %d out", agent, in, out)
}

// TestAgentsWarnPolicy: under --policy warn the note reaches the model in
// each CLI's own request format, and the run goes on to its end. Under
// two-calls the accounting has spent 1200 + 30 = 1230 tokens after turn
// 1 (the stand-in's first usage): 82% of a 1500-token budget, past the
// 80% threshold, whose note comes once, and short of 90% until turn 2
// adds 70 + 20 (1320, 88%). The estimate's note ends with the forecast,
// 1230 + [500, 900].
func TestAgentsWarnPolicy(t *testing.T) {
	script := agenttest.Scripts["two-calls"]
	for _, agent := range agents {
		t.Run(string(agent), func(t *testing.T) {
			testenv.Need(t, string(agent), agenttest.Available(agent))
			est, _ := estimatorServer(t, func(int) string { return "<answer>[500, 900]</answer>" })
			r := startGuardRun(t, script, Config{Policy: Warn, Budget: 1500, Wait: true, Estimator: estimatorFor(est.URL)})
			res := agenttest.Run(t, agenttest.CLI{Agent: agent, BaseURL: r.url, Prompt: agenttest.Prompts["two-calls"]})
			if res.ExitCode != 0 {
				t.Fatalf("%s exited %d\n%s", agent, res.ExitCode, res.Stderr)
			}
			r.close()
			main := r.model.MainCalls()
			if len(main) != len(script.Answers) {
				t.Fatalf("stand-in saw %d main calls, want %d", len(main), len(script.Answers))
			}
			for i, c := range main {
				has := bytes.Contains(c.Body, []byte("[budget alert] After turn "+fmt.Sprint(i)+" you have used"))
				if has != (i > 0) {
					t.Errorf("main call %d carries the note: %v, want %v", i+1, has, i > 0)
				}
				threshold := []byte("[budget alert] After turn 1 you have used 80% of your budget: 1230 of 1500 tokens.")
				if got, want := bytes.Count(c.Body, threshold), btoi(i == 1); got != want {
					t.Errorf("main call %d carries the 80%% note %d times, want %d", i+1, got, want)
				}
				if bytes.Contains(c.Body, []byte("90% of your budget")) {
					t.Errorf("main call %d carries a 90%% note", i+1)
				}
				if forecast := []byte("Forecast for the whole session: 1730 to 2130 tokens."); i == 1 && !bytes.Contains(c.Body, forecast) {
					t.Errorf("main call 2 lacks %q", forecast)
				}
			}
		})
	}
}
