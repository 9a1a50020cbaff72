package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"bagen-data/dataset"
	"bagen-data/eval/prediction"
	"bagen-data/internal/ollamatest"
	"bagen-data/rollout"
)

// endpointProbes writes n probes with short distinct prompts.
func endpointProbes(t *testing.T, n int) string {
	t.Helper()
	var rows []dataset.RLRow
	for i := range n {
		id := fmt.Sprintf("t%02d_probe_after_turn_0", i)
		rows = append(rows, dataset.RLRow{
			Prompt: []rollout.Message{{Role: "system", Content: "Estimate the remaining tokens."},
				{Role: "user", Content: fmt.Sprintf("Probe %d: how many tokens remain?", i)}},
			ExtraInfo: dataset.ExtraInfo{CustomID: id, TrajectoryID: id[:3], Split: dataset.SplitEval,
				TotalTurns: 4, RemainingTokens: int64(100 + i), IsPossible: i%2 == 0, Budget: 1000},
		})
	}
	path := filepath.Join(t.TempDir(), "probes.parquet")
	writeEvalParquet(t, path, rows)
	return path
}

// ledger reads a predictions file: the answers by id, failing the test
// on a failure line or an id answered twice.
func ledger(t *testing.T, path string) map[string]prediction.Prediction {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	preds, err := prediction.Read(f, path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]prediction.Prediction{}
	for _, p := range preds {
		if p.Failed() {
			t.Errorf("%s:%d: failure line %q", path, p.Line, p.Error)
			continue
		}
		if _, dup := out[p.CustomID]; dup {
			t.Errorf("%s:%d: %s answered twice", path, p.Line, p.CustomID)
		}
		out[p.CustomID] = p
	}
	return out
}

func mapOf(s *prediction.Set) map[string]prediction.Prediction {
	out := map[string]prediction.Prediction{}
	for _, id := range s.IDs() {
		if p, ok := s.Answer(id); ok {
			out[id] = p
		}
	}
	return out
}

func responses(ps map[string]prediction.Prediction) map[string]string {
	out := map[string]string{}
	for id, p := range ps {
		out[id] = p.Response
	}
	return out
}

// evalArgs are the flags every endpoint test shares: short answers, fixed
// seed, no bootstrap.
func evalArgs(data, out string, more ...string) []string {
	return append([]string{"eval", "--data", data, "--predictions-out", out, "--max-tokens", "32",
		"--seed", "7", "--bootstrap", "0"}, more...)
}

// TestEvalEndpointRealOllama asks the tiny model through Ollama's Chat
// Completions API (--endpoint) and its native API (--ollama), clean, then
// through a fault-injecting proxy, then killed mid-run and resumed: every
// run ends with the same answers, one line per probe.
func TestEvalEndpointRealOllama(t *testing.T) {
	srv := ollamatest.Start(t)
	t.Setenv("OLLAMA_HOST", strings.TrimPrefix(srv.Host, "http://"))
	const n = 24
	data := endpointProbes(t, n)
	dir := t.TempDir()

	clean := filepath.Join(dir, "clean.jsonl")
	js := filepath.Join(dir, "clean.json")
	stdout, stderr, err := runReward(t.Context(), evalArgs(data, clean, "--endpoint", srv.Host+"/v1", "--model", srv.Model,
		"--estimator-price-in", "1", "--estimator-price-out", "2", "--json", js)...)
	if err != nil {
		t.Fatalf("eval --endpoint: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "\nspend: 24 requests for 24 answers, 0 failed; tokens: ") || !strings.Contains(stdout, "\nthis run: 24 probes asked in ") {
		t.Errorf("no spend summary in:\n%s", stdout)
	}
	want := ledger(t, clean)
	distinct := map[string]bool{}
	for _, p := range want {
		distinct[p.Response] = true
	}
	t.Logf("%d distinct answers; t01: %q", len(distinct), want["t01_probe_after_turn_0"].Response)
	if len(distinct) < 3 {
		t.Errorf("%d distinct answers to %d prompts: too few to tell runs apart", len(distinct), n)
	}
	if len(want) != n {
		t.Fatalf("clean run: %d answers, want %d", len(want), n)
	}
	var prompt, completion int64
	for _, p := range want {
		prompt += p.Usage.PromptTokens
		completion += p.Usage.CompletionTokens
	}
	run := readRun(t, js)
	if sp := run.Spend; run.Endpoint != srv.Host+"/v1" || sp == nil || sp.Requests != n || sp.Asked != n || sp.PromptTokens != prompt ||
		sp.CompletionTokens != completion || sp.Dollars == nil || *sp.Dollars != float64(prompt+2*completion)/1e6 {
		t.Errorf("--json: endpoint %q, spend %+v; want %d requests, %d + %d tokens at $1/$2 per million", run.Endpoint, sp, n, prompt, completion)
	}
	for id, p := range want {
		if p.Usage == nil || p.Usage.PromptTokens == 0 || p.Usage.CompletionTokens == 0 || p.FinishReason == "" || p.LatencyMS <= 0 || p.Attempts != 1 {
			t.Errorf("%s: want usage, finish_reason, latency and 1 attempt recorded, got %+v", id, p)
			break
		}
	}

	t.Run("native API", func(t *testing.T) {
		native := filepath.Join(dir, "native.jsonl")
		if _, stderr, err := runReward(t.Context(), evalArgs(data, native, "--ollama", srv.Model)...); err != nil {
			t.Fatalf("eval --ollama: %v\n%s", err, stderr)
		}
		if got, w := responses(ledger(t, native)), responses(want); fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("--ollama and --endpoint answers differ:\n%v\n%v", got, w)
		}
	})

	t.Run("faults", func(t *testing.T) {
		p := newFaultProxy(t, srv.Host)
		out := filepath.Join(dir, "faults.jsonl")
		args := evalArgs(data, out, "--endpoint", p.URL, "--model", srv.Model, "--timeout", "6s", "--concurrency", "4")
		if _, stderr, err := runReward(t.Context(), args...); err != nil {
			t.Fatalf("eval through the fault proxy: %v\n%s", err, stderr)
		}
		if got := responses(ledger(t, out)); fmt.Sprint(got) != fmt.Sprint(responses(want)) {
			t.Errorf("answers through faults differ from the clean run")
		}
		p.check(t, n)
	})

	t.Run("retries run out, rerun asks only those", func(t *testing.T) {
		broken := newFaultProxy(t, srv.Host, func(p *faultProxy) { p.plan = map[int][]string{5: {"500", "500", "500"}} })
		out := filepath.Join(dir, "failed.jsonl")
		args := evalArgs(data, out, "--model", srv.Model, "--attempts", "3")
		stdout, _, err := runReward(t.Context(), append(args, "--endpoint", broken.URL)...)
		wantErr := "eval: 1 probes without an answer (t05_probe_after_turn_0; last: attempt 3 of 3: 500 Internal Server Error: internal); " +
			"scored as unanswered; rerun the same command to ask them again"
		if err == nil || err.Error() != wantErr {
			t.Fatalf("got %v, want %q", err, wantErr)
		}
		if !strings.Contains(stdout, "probes 24: 12 possible, 12 impossible; 1 without a prediction") {
			t.Errorf("the failed probe is not scored as unanswered:\n%s", stdout)
		}
		healed := newFaultProxy(t, srv.Host, func(p *faultProxy) { p.plain = true })
		if _, stderr, err := runReward(t.Context(), append(args, "--endpoint", healed.URL)...); err != nil {
			t.Fatalf("rerun: %v\n%s", err, stderr)
		}
		healed.mu.Lock()
		if healed.n != 1 || healed.delivered["Probe 5: how many tokens remain?"] != 1 {
			t.Errorf("rerun sent %d requests (%v), want 1 for probe 5", healed.n, healed.delivered)
		}
		healed.mu.Unlock()
		set, err := prediction.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := os.ReadFile(out)
		if set.Answers() != n || set.Failures() != 0 || bytes.Count(raw, []byte("\n")) != n+1 {
			t.Errorf("ledger: %d answers, %d failed, %d lines; want %d, 0, %d (the failure line stays)", set.Answers(), set.Failures(), bytes.Count(raw, []byte("\n")), n, n+1)
		}
		if fmt.Sprint(responses(mapOf(set))) != fmt.Sprint(responses(want)) {
			t.Errorf("answers after the rerun differ from the clean run")
		}
	})

	t.Run("401 stops the run", func(t *testing.T) {
		deny := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`)
		}))
		defer deny.Close()
		out := filepath.Join(dir, "denied.jsonl")
		_, _, err := runReward(t.Context(), evalArgs(data, out, "--endpoint", deny.URL, "--model", srv.Model)...)
		if err == nil || !strings.Contains(err.Error(), ": 401 Unauthorized: Incorrect API key provided (not retried) (answers so far are in") {
			t.Errorf("got %v, want the 401 named", err)
		}
	})

	t.Run("wrong model", func(t *testing.T) {
		out := filepath.Join(dir, "wrong.jsonl")
		_, _, err := runReward(t.Context(), evalArgs(data, out, "--endpoint", srv.Host, "--model", "no-such-model")...)
		if err == nil || !strings.Contains(err.Error(), `404 Not Found`) || !strings.Contains(err.Error(), `model "no-such-model"? the server has: `+srv.Model) {
			t.Errorf("got %v, want a 404 listing %s", err, srv.Model)
		}
	})

	t.Run("SIGKILL and resume", func(t *testing.T) {
		slow := newFaultProxy(t, srv.Host, func(p *faultProxy) { p.plain, p.delay = true, 150*time.Millisecond })
		out := filepath.Join(dir, "killed.jsonl")
		args := evalArgs(data, out, "--endpoint", slow.URL, "--model", srv.Model, "--concurrency", "2")
		kills := 0
		for round := range 3 {
			lines := runUntilKilled(t, args, out, 5+round*6)
			if lines < 0 {
				break
			}
			kills++
			t.Logf("killed with %d lines in the ledger", lines)
		}
		if kills == 0 {
			t.Fatal("the run finished before the first kill")
		}
		if _, stderr, err := runReward(t.Context(), args...); err != nil {
			t.Fatalf("rerun after kills: %v\n%s", err, stderr)
		}
		got := ledger(t, out)
		raw, _ := os.ReadFile(out)
		if lines := bytes.Count(raw, []byte("\n")); lines != n || len(got) != n {
			t.Errorf("after kills and a rerun: %d lines, %d answers; want %d of each", lines, len(got), n)
		}
		if fmt.Sprint(responses(got)) != fmt.Sprint(responses(want)) {
			t.Errorf("answers after kills differ from the clean run")
		}
	})
}

// runUntilKilled runs eval in a child process and SIGKILLs it once the
// ledger holds at least lines lines. It returns the lines seen at the
// kill, or -1 when the run finished first.
func runUntilKilled(t *testing.T, args []string, ledgerPath string, lines int) int {
	t.Helper()
	enc, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childArgs+"="+string(enc))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("child: %v\n%s", err, stderr.String())
			}
			return -1
		case <-time.After(5 * time.Millisecond):
		}
		raw, _ := os.ReadFile(ledgerPath)
		if got := bytes.Count(raw, []byte("\n")); got >= lines {
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			return got
		}
	}
}

// faultProxy forwards /v1 requests to Ollama and breaks some of them as
// faultPlan says: 429 with Retry-After, 500, a stall past the client's
// timeout, a connection reset mid-body and a 200 whose JSON is cut short.
// It counts, per prompt, the intact answers it delivered.
type faultProxy struct {
	URL      string
	upstream string
	plain    bool             // forward everything intact
	plan     map[int][]string // replaces faultPlan when set
	delay    time.Duration    // before forwarding

	mu        sync.Mutex
	n         int
	faults    map[string]int
	attempts  map[string]int // by prompt
	delivered map[string]int
	slowest   time.Duration // longest upstream answer
}

// newFaultProxy starts a proxy to upstream, configured by set before it
// serves.
func newFaultProxy(t *testing.T, upstream string, set ...func(*faultProxy)) *faultProxy {
	p := &faultProxy{upstream: upstream, faults: map[string]int{}, attempts: map[string]int{}, delivered: map[string]int{}}
	for _, f := range set {
		f(p)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	p.URL = srv.URL // no /v1: the client adds it
	return p
}

// faultPlan is the faults each probe meets, by the probe number in its
// prompt, in the order of its attempts; the attempt after them goes
// through.
var faultPlan = map[int][]string{
	0: {"429"}, 1: {"500", "reset"}, 2: {"truncated"}, 3: {"stall"}, 4: {"reset"},
	5: {"429", "truncated", "500"}, 7: {"500"}, 9: {"truncated", "truncated"}, 11: {"reset", "429"},
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Messages []struct{ Content string } `json:"messages"`
	}
	json.Unmarshal(body, &req)
	prompt := req.Messages[len(req.Messages)-1].Content
	var probe int
	fmt.Sscanf(prompt, "Probe %d:", &probe)
	p.mu.Lock()
	p.n++
	kind := ""
	plans := faultPlan
	if p.plan != nil {
		plans = p.plan
	}
	if plan := plans[probe]; !p.plain && p.attempts[prompt] < len(plan) {
		kind = plan[p.attempts[prompt]]
	}
	p.attempts[prompt]++
	p.faults[kind]++
	p.mu.Unlock()
	switch kind {
	case "429":
		w.Header().Set("Retry-After", "1")
		http.Error(w, `{"error":{"message":"rate limited"}}`, http.StatusTooManyRequests)
		return
	case "500":
		http.Error(w, `{"error":"internal"}`, http.StatusInternalServerError)
		return
	case "stall":
		select {
		case <-time.After(10 * time.Second):
		case <-r.Context().Done():
		}
		return
	}
	time.Sleep(p.delay)
	start := time.Now()
	defer func() {
		p.mu.Lock()
		p.slowest = max(p.slowest, time.Since(start))
		p.mu.Unlock()
	}()
	res, err := http.Post(p.upstream+r.URL.Path, "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	answer, _ := io.ReadAll(res.Body)
	res.Body.Close()
	switch kind {
	case "reset":
		conn, buf, _ := w.(http.Hijacker).Hijack()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(answer))
		buf.Write(answer[:len(answer)/2])
		buf.Flush()
		conn.(*net.TCPConn).SetLinger(0) // RST, not FIN
		conn.Close()
		return
	case "truncated":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(res.StatusCode)
		w.Write(answer[:len(answer)/2])
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(res.StatusCode)
	w.Write(answer)
	w.(http.Flusher).Flush()
	if res.StatusCode == http.StatusOK && r.Context().Err() == nil {
		p.mu.Lock()
		p.delivered[prompt]++
		p.mu.Unlock()
	}
}

// check asserts every kind of fault happened and each of the n prompts got
// exactly one intact answer.
func (p *faultProxy) check(t *testing.T, n int) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	t.Logf("%d requests, faults %v, slowest upstream answer %v", p.n, p.faults, p.slowest)
	for _, kind := range []string{"429", "500", "stall", "reset", "truncated"} {
		if p.faults[kind] == 0 {
			t.Errorf("fault %s never injected (%d requests)", kind, p.n)
		}
	}
	if len(p.delivered) != n {
		t.Errorf("%d prompts answered, want %d", len(p.delivered), n)
	}
	for prompt, k := range p.delivered {
		if k != 1 {
			t.Errorf("%q answered %d times, want once", prompt, k)
		}
	}
}
