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
	"slices"
	"strings"
	"sync"
	"testing"

	"bagen-data/baseline"
	"bagen-data/dataset"
	predict "bagen-data/eval/prediction"
	"bagen-data/probes"
	"bagen-data/reward"
	"bagen-data/rollout"
)

// serveBaseline runs `bagen-data baseline serve` with args on a free
// loopback port until the test ends and returns its /v1 URL.
func serveBaseline(t *testing.T, args ...string) (string, func() (string, error)) {
	t.Helper()
	argv := append([]string{"baseline", "serve", "--listen", "127.0.0.1:0", "--drain-grace", "0"}, args...)
	return runServer(t, "baseline serve", argv, regexp.MustCompile(`on (http://127\.0\.0\.1:\d+/v1)\n`))
}

// TestBaselineServeEqualsEval answers the eval probes through baseline
// serve (eval --endpoint) and offline (baseline eval): the same text for
// every probe, 0 tokens of usage each, and a request of another task is
// a 400 naming it.
func TestBaselineServeEqualsEval(t *testing.T) {
	data := buildFixtures(t, "sokoban")
	search := buildFixtures(t, "searchr1")
	dir := t.TempDir()
	model := trainBaseline(t, filepath.Join(dir, "m.json"), []string{data})
	offline := filepath.Join(dir, "offline.jsonl")
	runGRPOApp(t, "baseline", "eval", "--model", model, "--data", data, "--predictions-out", offline, "--bootstrap", "0")
	base, stop := serveBaseline(t, "--model", model, "--name", "zero")
	served := filepath.Join(dir, "served.jsonl")
	runGRPOApp(t, "eval", "--endpoint", base, "--model", "zero", "--data", data, "--predictions-out", served, "--bootstrap", "0", "-q")
	want, _ := readAnswers(t, offline)
	got, usage := readAnswers(t, served)
	if len(got) != len(want) {
		t.Errorf("served %d answers, offline %d", len(got), len(want))
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: served %q, offline %q", id, got[id], w)
		}
		if u, ok := usage[id]; !ok || u != [2]int64{0, 0} {
			t.Errorf("%s: usage %v (reported %v), want 0 prompt and 0 completion tokens", id, u, ok)
		}
	}
	rows, err := dataset.ReadRL(filepath.Join(search, filepath.FromSlash(dataset.EvalFile)))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"model": "zero", "messages": rows[0].Prompt})
	code, text := postChat(t, base, string(body))
	if code != http.StatusBadRequest || !strings.Contains(text, `task mismatch: a probe of task \"searchr1\"`) || !strings.Contains(text, `"param":"messages"`) {
		t.Errorf("a Search-R1 probe: %d %s; want 400 naming the task mismatch", code, text)
	}
	if log, err := stop(); err != nil {
		t.Fatalf("baseline serve: %v\n%s", err, log)
	}
}

// sokobanUpstream plays a logged Sokoban run as a model server: the k-th
// chat request (from 1) gets the run's k-th assistant message, with usage
// that makes the guard's accounting give the run's per-turn tokens.
type sokobanUpstream struct {
	mu      sync.Mutex
	answers []string
	turns   []dataset.TurnTokens
	n       int
}

func (u *sokobanUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	u.mu.Lock()
	k := u.n
	u.n++
	u.mu.Unlock()
	if k >= len(u.answers) {
		http.Error(w, "the run has no more turns", http.StatusInternalServerError)
		return
	}
	var prompt int64
	for j := 0; j <= k; j++ {
		prompt += u.turns[j].InputTokens
		if j < k {
			prompt += u.turns[j].OutputTokens
		}
	}
	msg, _ := json.Marshal(u.answers[k])
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"c%d","object":"chat.completion","model":"agent","choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],"usage":{"prompt_tokens":%d,"completion_tokens":%d}}`,
		k, msg, prompt, u.turns[k].OutputTokens)
}

// failingRun picks the eval probe after the last turn of a run that the
// model answers impossible after turn 1 or later, two turns or more before
// its last.
func failingRun(t *testing.T, est *baseline.Estimator, rows []dataset.RLRow) dataset.RLRow {
	t.Helper()
	first := map[string]int64{}
	last := map[string]dataset.RLRow{}
	for _, r := range rows {
		a, err := est.Answer(r.Prompt)
		if err != nil {
			t.Fatal(err)
		}
		x := r.ExtraInfo
		if f, ok := first[x.TrajectoryID]; a.Impossible && (!ok || x.ProbeAfterTurn < f) {
			first[x.TrajectoryID] = x.ProbeAfterTurn
		}
		if l, ok := last[x.TrajectoryID]; !ok || x.ProbeAfterTurn > l.ExtraInfo.ProbeAfterTurn {
			last[x.TrajectoryID] = r
		}
	}
	ids := make([]string, 0, len(last))
	for id := range last {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		// A stop mid-run: the guard answers the request after it.
		if f, ok := first[id]; ok && f >= 1 && f+2 <= last[id].ExtraInfo.ProbeAfterTurn {
			return last[id]
		}
	}
	t.Fatal("the model stops no eval run mid-run")
	return dataset.RLRow{}
}

// TestGuardBaselineEstimator runs a logged Sokoban run through a guard
// answering with --estimator baseline:MODEL.json: every estimate is
// recorded with 0 estimator tokens and is the answer baseline eval gives
// offline for the probes of the guard's own ledger; under --policy stop
// the guard stops the run after the first turn whose offline answer is
// impossible, as the offline early stop does.
func TestGuardBaselineEstimator(t *testing.T) {
	data := buildFixtures(t, "sokoban")
	dir := t.TempDir()
	model := trainBaseline(t, filepath.Join(dir, "m.json"), []string{data})
	m, err := baseline.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := dataset.ReadRL(filepath.Join(data, filepath.FromSlash(dataset.EvalFile)))
	if err != nil {
		t.Fatal(err)
	}
	run := failingRun(t, baseline.NewEstimator(m, "m"), rows)
	ledger := filepath.Join(dir, "ledger")
	if stopped := guardRun(t, run, model, "log", ledger); stopped != 0 {
		t.Fatalf("--policy log stopped the run after turn %d", stopped)
	}
	live, err := predict.ReadLedger(ledger)
	if err != nil {
		t.Fatal(err)
	}
	probesFile := filepath.Join(dir, "probes.parquet")
	runGRPOApp(t, "probes", "-q", "--task", "sokoban", "--budget", "2500", "--input", ledger, "--out", probesFile, "--tokenizer", tokenizerPath(t))
	offline := filepath.Join(dir, "offline.jsonl")
	runGRPOApp(t, "baseline", "eval", "--model", model, "--data", probesFile, "--predictions-out", offline, "--bootstrap", "0")
	want, _ := readAnswers(t, offline)
	first, compared := 0, 0
	for _, p := range live {
		// The ledger leaves 0 estimator tokens out.
		if p.Failed() || (p.Usage != nil && (p.Usage.PromptTokens != 0 || p.Usage.CompletionTokens != 0)) {
			t.Errorf("%s: estimate %q (error %q, usage %+v); want an answer with 0 estimator tokens", p.CustomID, p.Response, p.Error, p.Usage)
		}
		w, ok := want[p.CustomID]
		if !ok {
			continue // the probe after the last turn: probes renders non-terminal ones
		}
		compared++
		if w != p.Response {
			t.Errorf("%s: live %q, offline %q", p.CustomID, p.Response, w)
		}
		if k := afterTurn(p.CustomID); first == 0 && reward.Parse(w).Kind == reward.Impossible {
			first = k
		}
	}
	checkStartForecast(t, ledger, baseline.NewEstimator(m, "m"))
	if compared != len(want) || compared < 3 || first == 0 {
		t.Fatalf("%d live estimates, %d offline answers, %d compared, first offline impossible after turn %d", len(live), len(want), compared, first)
	}
	if stopped := guardRun(t, run, model, "stop", filepath.Join(dir, "ledger2")); stopped != first {
		t.Errorf("--policy stop stopped the run after turn %d; offline, the first impossible answer is after turn %d", stopped, first)
	}
}

// guardRun plays the run (the probe after its last turn) through a guard
// with --estimator baseline:MODEL under policy and returns the turn after
// which the guard stopped it (0: never).
func guardRun(t *testing.T, run dataset.RLRow, model, policy, ledger string) int {
	t.Helper()
	var history []rollout.Message
	up := &sokobanUpstream{turns: run.ExtraInfo.PerTurnTokens}
	for _, msg := range run.Prompt[:len(run.Prompt)-1] {
		if msg.Role == "assistant" {
			up.answers = append(up.answers, msg.Content)
		} else if len(up.answers) == 0 {
			history = append(history, msg)
		}
	}
	upstream := httptest.NewServer(up)
	defer upstream.Close()
	url, stop := startGuard(t, "--upstream", upstream.URL, "--estimator", "baseline:"+model, "--task", "sokoban",
		"--budget", "2500", "--policy", policy, "--wait", "--ledger", ledger)
	stopped := playRun(t, url, history, up.answers, observationsOf(run.Prompt))
	if log, err := stop(); err != nil {
		t.Fatalf("guard: %v\n%s", err, log)
	}
	return stopped
}

// observationsOf returns the user messages after the first of a probe's
// dialogue (the estimation prompt excluded).
func observationsOf(prompt []rollout.Message) []string {
	var out []string
	seenFirst := false
	for _, m := range prompt[:len(prompt)-1] {
		if m.Role != "user" {
			continue
		}
		if seenFirst {
			out = append(out, m.Content)
		}
		seenFirst = true
	}
	return out
}

// playRun sends the run's turns to the guard, each request the history
// with the previous answer and the observation after it, and returns the
// turn after which the guard answered with its stop (0: never).
func playRun(t *testing.T, url string, history []rollout.Message, answers, observations []string) int {
	t.Helper()
	for k := range answers {
		body, _ := json.Marshal(map[string]any{"model": "agent", "messages": history})
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url+"/v1/chat/completions", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.Header.Get("X-Bagen-Guard") == "stop" {
			return k
		}
		if k >= len(observations) {
			break
		}
		history = append(history, rollout.Message{Role: "assistant", Content: answers[k]}, rollout.Message{Role: "user", Content: observations[k]})
	}
	return 0
}

// afterTurn reads k from a probe id "…_probe_after_turn_k".
func afterTurn(id string) int {
	var k int
	fmt.Sscanf(id[strings.LastIndex(id, dataset.ProbeSuffix)+len(dataset.ProbeSuffix):], "%d", &k)
	return k
}

// checkStartForecast: the forecast the guard made when the run started
// is est's answer to the probe after turn 0 that package probes renders
// from the guard's own ledger (spent 0 + the interval).
func checkStartForecast(t *testing.T, ledger string, est *baseline.Estimator) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(ledger, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("%d ledger files, want 1", len(files))
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var start *rollout.GuardForecast
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var f rollout.GuardForecast
		if json.Unmarshal([]byte(line), &f) == nil && f.Event == "forecast" && f.AfterTurn == 0 {
			start = &f
		}
	}
	if start == nil {
		t.Fatalf("%s: no forecast at the start", files[0])
	}
	srcs, err := rollout.Expand([]string{ledger})
	if err != nil || len(srcs) != 1 {
		t.Fatalf("ledger %s: %d sources (%v)", ledger, len(srcs), err)
	}
	var tr rollout.Trajectory
	err = rollout.Scan(context.Background(), srcs[0], func(rec rollout.Record) error {
		tr, err = rollout.Decode(rec)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	task := probes.Tasks["sokoban"]
	r, err := probes.NewReplay(tr, nil, task.System)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []rollout.Message
	for _, c := range task.Render(r.Traj, r.Acc, probes.Probe{After: 0}, 2500, true) {
		msgs = append(msgs, rollout.Message{Role: c.Role, Content: c.Content})
	}
	a, err := est.Answer(msgs)
	if err != nil || a.Impossible || start.Spent != 0 || start.Low != a.Low || start.High != a.High {
		t.Errorf("start forecast %+v; the probe after turn 0 rendered offline is answered %q (%v)", start, a.Text, err)
	}
}
