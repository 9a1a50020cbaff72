package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"bagen-data/dataset"
	"bagen-data/eval"
	"bagen-data/internal/agenttest"
	"bagen-data/probes"
	"bagen-data/reward"
	"bagen-data/rollout"
	"bagen-data/tokenizer"
)

// The replay: recorded runs of the repo's own logs go through a real
// `bagen-data guard --policy stop --wait` on loopback, an agent resending
// each run's history turn by turn, a scripted upstream answering each
// turn with the run's recorded message and usage (agenttest.WriteAnswer),
// and an estimator answering each probe from a fixed answer set, looked
// up by the probe's exact text. The same runs and answers go through
// `probes` and `eval --predictions`; the guard must decide as the offline
// early stop does, run by run and turn by turn.

// replayBudget is the budget of the replay: the long SWE-bench runs pass
// it mid-run (budget stops), the agent logs do not.
const replayBudget = 15000

// replayRun is one run as the replay sends it.
type replayRun struct {
	traj   rollout.Trajectory // the run, usage as the upstream reports it
	format string             // chat, responses or messages
	stream bool
	header bool // the agent sends X-Bagen-Session
}

// replaySources are the recorded runs: the replay benchmark's SWE-bench
// rollouts, the agent-framework logs and the three CLIs' sessions.
var replaySources = []string{"../probes/testdata/replay/swebench.jsonl", "../rollout/testdata/mini1", "../rollout/testdata/mini2",
	"../rollout/testdata/harbor", "../rollout/testdata/inspect", "../rollout/testdata/openhands",
	"../rollout/testdata/sessions/claude", "../rollout/testdata/sessions/codex", "../rollout/testdata/sessions/qwen"}

// loadReplayRuns reads the recorded runs an agent can resend as they are
// (a system prompt, then user and assistant messages in turn, usage
// recorded whole or not at all per turn) and makes three of each: as
// recorded, with hidden reasoning the upstream does not break out, and
// with one call's usage dropped. Formats, streaming and session headers
// go round the runs.
func loadReplayRuns(t *testing.T) []replayRun {
	t.Helper()
	srcs, err := (&rollout.Options{}).Expand(replaySources)
	if err != nil {
		t.Fatal(err)
	}
	var base []rollout.Trajectory
	for _, src := range srcs {
		err := rollout.Scan(context.Background(), src, func(rec rollout.Record) error {
			tr, err := rollout.Decode(rec)
			if err == nil && resendable(tr) {
				base = append(base, tr)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var runs []replayRun
	for _, tr := range base {
		tr.Inputs = rollout.InputsRequest
		for _, v := range []rollout.Trajectory{tr, hiddenReasoning(tr), dropUsage(tr)} {
			i := len(runs)
			runs = append(runs, replayRun{traj: v, format: []string{"chat", "responses", "messages"}[i%3], stream: i/3%2 == 1, header: i/6%2 == 1})
		}
	}
	return runs
}

// resendable: a run of at least two turns whose messages alternate user
// and assistant after an optional system prompt, each assistant message
// with text, each turn's usage recorded whole or not at all.
func resendable(tr rollout.Trajectory) bool {
	msgs := tr.Messages
	if len(msgs) > 0 && msgs[0].Role == "system" {
		msgs = msgs[1:]
	}
	turns := len(msgs) / 2
	if turns < 2 || len(msgs)%2 != 0 || len(tr.API) != 0 && len(tr.API) != turns {
		return false
	}
	for i, m := range msgs {
		want := []string{"user", "assistant"}[i%2]
		if m.Role != want || want == "assistant" && m.Content == "" {
			return false
		}
	}
	for _, a := range tr.API {
		if (a.Input == rollout.Unrecorded) != (a.Output == rollout.Unrecorded) || a.Retried.Calls > 0 || a.Cached > a.Input {
			return false
		}
	}
	return true
}

// hiddenReasoning is tr from an upstream that neither reports its
// reasoning nor sends it back: 300 more output tokens per call, none
// broken out, the requests as recorded (each grows by less than the
// previous output).
func hiddenReasoning(tr rollout.Trajectory) rollout.Trajectory {
	tr.ID += "~hidden"
	tr.API = slices.Clone(tr.API)
	for k := range tr.API {
		if tr.API[k].Output != rollout.Unrecorded {
			tr.API[k].Output += 300
			tr.API[k].Reasoning = nil
		}
	}
	return tr
}

// dropUsage is tr through a proxy that dropped the usage of its middle
// call (the first of two).
func dropUsage(tr rollout.Trajectory) rollout.Trajectory {
	tr.ID += "~gap"
	if len(tr.API) == 0 {
		return tr
	}
	tr.API = slices.Clone(tr.API)
	tr.API[(len(tr.API)-1)/2] = rollout.APITokens{Input: rollout.Unrecorded, Output: rollout.Unrecorded}
	return tr
}

// replayTurns splits a run into its system prompt and (user, assistant)
// message pairs.
func replayTurns(tr rollout.Trajectory) (system string, turns [][2]string) {
	msgs := tr.Messages
	if len(msgs) > 0 && msgs[0].Role == "system" {
		system, msgs = msgs[0].Content, msgs[1:]
	}
	for i := 0; i+1 < len(msgs); i += 2 {
		turns = append(turns, [2]string{msgs[i].Content, msgs[i+1].Content})
	}
	return system, turns
}

// writeReplayRuns writes the runs as canonical JSONL, what probes reads.
func writeReplayRuns(t *testing.T, path string, runs []replayRun) {
	t.Helper()
	var buf bytes.Buffer
	for _, r := range runs {
		line, err := rollout.MarshalCanonical(r.traj)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(line, '\n'))
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// replayAnswer is the fixed answer to a probe, by a hash of its text (a
// deterministic estimator: the same probe, the same answer): impossible,
// an interval or an unparseable text. A probe after a run's last turn,
// which only a live guard asks, is impossible more often, so that stops
// decided too late to refuse anything are many.
func replayAnswer(key string, last bool) string {
	h := fnv.New32a()
	io.WriteString(h, key)
	v := h.Sum32()
	switch {
	case v%9 == 0 || last && v%3 == 0:
		return "<think>too far</think><answer>impossible</answer>"
	case v%9 == 1:
		return "no idea"
	}
	lo := int64(v % 5000)
	return fmt.Sprintf("<answer>[%d, %d]</answer>", lo, lo+4000)
}

// promptKey is a rendered probe as a lookup key.
func promptKey(msgs []rollout.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Role + "\x00" + m.Content + "\x00")
	}
	return b.String()
}

// replayEstimator answers each probe from answers, by its exact text,
// reporting its usage as estimatorUsage says; a probe not in answers is a
// 400 and is kept in missed.
type replayEstimator struct {
	URL     string
	answers map[string]string
	counter probes.Counter
	mu      sync.Mutex
	missed  []string
}

// estimatorUsage is what the replay's estimator reports for a probe and
// its answer: the Qwen counts of the probe's text and of the answer, half
// the prompt served from its cache.
func estimatorUsage(c probes.Counter, key, answer string) (in, out, cached int64) {
	in = int64(c.Count(key))
	return in, int64(c.Count(answer)), in / 2
}

func startReplayEstimator(t *testing.T, answers map[string]string, c probes.Counter) *replayEstimator {
	t.Helper()
	e := &replayEstimator{answers: answers, counter: c}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r) // GET /v1/models: no accounting listed
			return
		}
		var req struct {
			Messages []rollout.Message `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		key := promptKey(req.Messages)
		a, ok := e.answers[key]
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			e.mu.Lock()
			e.missed = append(e.missed, key)
			e.mu.Unlock()
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"message":"not a probe of the answer set"}}`)
			return
		}
		in, out, cached := estimatorUsage(e.counter, key, a)
		fmt.Fprintf(w, `{"id":"e","model":"est","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":%d,"completion_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d}}}`, a, in, out, cached)
	}))
	t.Cleanup(srv.Close)
	e.URL = srv.URL
	return e
}

// replayUpstream answers turn X-Replay-Turn of run X-Replay-Run with the
// run's recorded message and usage, in the request's format.
func replayUpstream(t *testing.T, runs []replayRun) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream        bool `json:"stream"`
			StreamOptions struct {
				IncludeUsage bool `json:"include_usage"`
			} `json:"stream_options"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		i, _ := strconv.Atoi(r.Header.Get("X-Replay-Run"))
		k, _ := strconv.Atoi(r.Header.Get("X-Replay-Turn"))
		run := runs[i]
		_, turns := replayTurns(run.traj)
		a := agenttest.Answer{Text: turns[k][1], Usage: agenttest.Usage{Omitted: true}}
		if k < len(run.traj.API) && run.traj.API[k].Input != rollout.Unrecorded {
			u := run.traj.API[k]
			a.Usage = agenttest.Usage{Input: int(u.Input), Cached: int(u.Cached), Output: int(u.Output), Unsplit: u.Reasoning == nil}
			if u.Reasoning != nil {
				a.Usage.Reasoning = int(*u.Reasoning)
			}
		}
		agenttest.WriteAnswer(w, run.format, req.Stream, req.StreamOptions.IncludeUsage, "m", fmt.Sprintf("%d-%d", i, k), a)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// replayBody is the agent's request for turn k (0-based) of a run: the
// system prompt, the turns before it and its user message.
func replayBody(r replayRun, k int) (path string, body []byte) {
	system, turns := replayTurns(r.traj)
	type msg struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	}
	var msgs []msg
	add := func(role, text string) {
		var content any = text
		if r.format == "responses" {
			kind := map[string]string{"user": "input_text", "assistant": "output_text"}[role]
			content = []map[string]string{{"type": kind, "text": text}}
		}
		msgs = append(msgs, msg{Role: role, Content: content})
	}
	if system != "" && r.format == "chat" {
		add("system", system)
	}
	for j := 0; j <= k; j++ {
		add("user", turns[j][0])
		if j < k {
			add("assistant", turns[j][1])
		}
	}
	req := map[string]any{"model": "m", "stream": r.stream}
	switch r.format {
	case "chat":
		path, req["messages"] = "/v1/chat/completions", msgs
	case "responses":
		path, req["input"] = "/v1/responses", msgs
		if system != "" {
			req["instructions"] = system
		}
	default:
		path, req["messages"], req["max_tokens"] = "/v1/messages", msgs, 1024
		if system != "" {
			req["system"] = system
		}
	}
	body, _ = json.Marshal(req)
	return path, body
}

// replayAgent sends run i's turns through the guard at url, one request
// per turn, until the guard refuses one; it returns the 0-based turn
// refused (the run's stop: after that many turns), -1 when none was.
func replayAgent(t *testing.T, url string, i int, r replayRun) int {
	t.Helper()
	_, turns := replayTurns(r.traj)
	for k := range turns {
		path, body := replayBody(r, k)
		req, _ := http.NewRequest(http.MethodPost, url+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "replay/"+r.traj.ID)
		req.Header.Set("X-Replay-Run", strconv.Itoa(i))
		req.Header.Set("X-Replay-Turn", strconv.Itoa(k))
		if r.header {
			req.Header.Set("X-Bagen-Session", r.traj.ID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s turn %d: %d %s", r.traj.ID, k+1, resp.StatusCode, got)
		}
		if resp.Header.Get("X-Bagen-Guard") == "stop" {
			return k
		}
	}
	return -1
}

// offlineRun is what probes, the answers and the policy say of one run.
type offlineRun struct {
	turns int
	// answers[k] answers the probe after turn k, k = 1 … T: the probes'
	// rows, and the probe after the last turn, which only a live guard
	// asks; cost[k] and cached[k] are what the estimator reports for it
	// (input + output, cached input).
	answers      map[int]string
	cost, cached map[int]int64
	// remaining[k] is the probes' remaining_tokens after turn k (k < T),
	// the run's actual rest; failed: the run's probes are impossible.
	remaining map[int]int64
	failed    bool
	// spent[k] is sys + Σ in + out of turns 1 … k as known after turn k
	// (Accounting.Seen): the guard's spent tokens then.
	spent []int64
	// decided is the turn after which a stop is decided (0: none) and
	// reason why; stop is the turn after which the run is stopped, a
	// decision before its last turn (0: none). estimates is the number of
	// turns estimated (1 … estimates).
	decided, stop, estimates int
	reason                   string
}

// offlinePlan is the offline early stop of every run: the probes' rows
// answered by replayAnswer, the budget cap on the accounting of the same
// runs, the first of the two deciding. It also returns the answer set of
// the estimator, by probe text.
func offlinePlan(t *testing.T, in, tok string, rows []dataset.RLRow) (map[string]*offlineRun, map[string]string) {
	t.Helper()
	task, _ := probes.LookupTask("swebench")
	counter, err := tokenizer.Load(tok)
	if err != nil {
		t.Fatal(err)
	}
	srcs, err := rollout.Expand([]string{in})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := probes.ReadReplays(context.Background(), srcs, probes.ReplayOptions{System: task.System, Counter: counter})
	if err != nil {
		t.Fatal(err)
	}
	plan, answers := map[string]*offlineRun{}, map[string]string{}
	for _, r := range rs {
		o := &offlineRun{turns: r.Turns(), answers: map[int]string{}, cost: map[int]int64{}, cached: map[int]int64{}, remaining: map[int]int64{}, spent: make([]int64, r.Turns()+1)}
		for k := 1; k <= o.turns; k++ {
			o.spent[k] = r.SeenTotal(k)
		}
		chat := task.Render(r.Traj, r.Acc, probes.Probe{After: o.turns}, replayBudget, true)
		last := make([]rollout.Message, len(chat))
		for i, c := range chat {
			last[i] = rollout.Message{Role: c.Role, Content: c.Content}
		}
		key := promptKey(last)
		answers[key] = replayAnswer(key, true)
		o.set(counter, o.turns, key, answers[key])
		plan[r.Traj.ID] = o
	}
	for _, row := range rows {
		x := row.ExtraInfo
		key := promptKey(row.Prompt)
		answers[key] = replayAnswer(key, false)
		o := plan[x.TrajectoryID]
		o.set(counter, int(x.ProbeAfterTurn), key, answers[key])
		o.remaining[int(x.ProbeAfterTurn)], o.failed = x.RemainingTokens, o.failed || !x.IsPossible
	}
	for _, o := range plan {
		o.decide()
	}
	return plan, answers
}

// set records the answer to the probe after turn k and its cost.
func (o *offlineRun) set(c probes.Counter, k int, key, answer string) {
	in, out, cached := estimatorUsage(c, key, answer)
	o.answers[k], o.cost[k], o.cached[k] = answer, in+out, cached
}

// spentOnEstimates is what the estimates of turns 1 … k cost.
func (o *offlineRun) spentOnEstimates(k int) (cost, cached int64) {
	for j := 1; j <= k; j++ {
		cost, cached = cost+o.cost[j], cached+o.cached[j]
	}
	return cost, cached
}

// decide applies the policy: the budget cap first (it is checked as the
// turn is recorded, before its estimate is due), then the first
// impossible answer.
func (o *offlineRun) decide() {
	o.estimates = o.turns
	for k := 1; k <= o.turns; k++ {
		if o.spent[k] > replayBudget {
			o.decided, o.reason, o.estimates = k, "budget", k-1
			break
		}
		if reward.Parse(o.answers[k]).Kind == reward.Impossible {
			o.decided, o.reason, o.estimates = k, "impossible", k
			break
		}
	}
	if o.decided < o.turns {
		o.stop = o.decided
	}
}

// TestGuardReplaysOfflineEarlyStop is the replay (see replayRun): every
// run's stop turn, usage, estimates and stop figures in the guard's
// ledger and metrics are the offline ones.
func TestGuardReplaysOfflineEarlyStop(t *testing.T) {
	tok := tokenizerPath(t)
	runs := loadReplayRuns(t)
	dir := t.TempDir()
	in, set := filepath.Join(dir, "runs.jsonl"), filepath.Join(dir, "probes.parquet")
	writeReplayRuns(t, in, runs)
	budget := strconv.Itoa(replayBudget)
	if _, stderr, err := runReward(t.Context(), "probes", "-q", "--task", "swebench", "--input", in, "--out", set,
		"--tokenizer", tok, "--budget", budget, "--max-samples", "0"); err != nil {
		t.Fatalf("probes: %v\n%s", err, stderr)
	}
	rows, err := dataset.ReadRL(set)
	if err != nil {
		t.Fatal(err)
	}
	plan, answers := offlinePlan(t, in, tok, rows)
	checkEvalEarlyStop(t, dir, set, rows, plan)

	counter, err := tokenizer.Load(tok)
	if err != nil {
		t.Fatal(err)
	}
	est := startReplayEstimator(t, answers, counter)
	ledger := filepath.Join(dir, "ledger")
	url, stop := startGuard(t, "--upstream", replayUpstream(t, runs), "--estimator", est.URL, "--estimator-model", "est",
		"--policy", "stop", "--stop-as", "message", "--wait", "--budget", budget, "--tokenizer", tok, "--ledger", ledger)
	refused := map[string]int{}
	for i, r := range runs {
		refused[r.traj.ID] = replayAgent(t, url, i, r)
	}
	checkReplayMetrics(t, url, plan)
	if log, err := stop(); err != nil {
		t.Fatalf("guard: %v\n%s", err, log)
	}
	if len(est.missed) > 0 {
		t.Errorf("%d live probes are not offline probes; the first:\n%q", len(est.missed), est.missed[0])
	}
	ledgerProbes := 0
	for _, o := range plan {
		ledgerProbes += o.turns - 1
		if o.stop > 0 {
			ledgerProbes += o.stop - o.turns
		}
	}
	checkLedgerProbes(t, dir, ledger, tok, answers, ledgerProbes)
	if d := ledgerDigest(t, ledger); d != replayLedgerDigest {
		t.Errorf("the ledger changed: digest %s, want %s", d, replayLedgerDigest)
	}
	got := readReplayLedger(t, ledger)
	matched := 0
	for _, r := range runs {
		o, l := plan[r.traj.ID], got[r.traj.ID]
		if l == nil {
			t.Errorf("%s: no ledger session", r.traj.ID)
			continue
		}
		if checkReplayRun(t, r, o, l, refused[r.traj.ID]) {
			matched++
		}
	}
	acted, late := 0, 0
	for _, o := range plan {
		acted += b2i(o.stop > 0)
		late += b2i(o.decided > 0 && o.stop == 0)
	}
	var saved, rest, failedRest, cost int64
	for _, o := range plan {
		c, _ := o.spentOnEstimates(o.estimates)
		cost += c
		if o.stop > 0 {
			saved += max(0, replayBudget-o.spent[o.stop])
			rest += o.remaining[o.stop]
			if o.failed {
				failedRest += o.remaining[o.stop]
			}
		}
	}
	t.Logf("%d of %d runs decided as offline (%d stops that refused a request, %d decided after the last turn)", matched, len(runs), acted, late)
	t.Logf("the estimator spent %d tokens; the stops saved %d by the guard's live estimate (net %d), %d of the runs' actual rest (net %d), "+
		"%d of failed runs' (the paper's gross figure; net %d)", cost, saved, saved-cost, rest, rest-cost, failedRest, failedRest-cost)
}

// replayLedgerDigest is ledgerDigest of the replay's ledger, pinned when
// the guard was split into files: a move of the guard's code that changes
// a byte of what it records fails here.
const replayLedgerDigest = "d4f3c6aa368b74b8f7a0c6ae74aa29317d3fa809f71503b5978f181b361f336c"

// ledgerClock matches what differs from one run of the same traffic to the
// next: the wall-clock time of each event, each call's latency, and the
// process-start stamp in the ids of sessions that arrive without one.
var ledgerClock = regexp.MustCompile(`"(time|latency_ms)":("[^"]*"|[0-9.e+-]+)|s-[0-9a-z]+-([0-9]+)\b`)

// ledgerDigest is the sha256 of every session file of the ledger dir, in
// the order of their names, with ledgerClock's fields blanked.
func ledgerDigest(t *testing.T, dir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	blank := func(b []byte) []byte {
		return ledgerClock.ReplaceAllFunc(b, func(m []byte) []byte {
			sub := ledgerClock.FindSubmatch(m)
			if len(sub[1]) > 0 {
				return fmt.Appendf(nil, "%q:0", sub[1])
			}
			return fmt.Appendf(nil, "s-start-%s", sub[3])
		})
	}
	named := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		named[string(blank([]byte(filepath.Base(f))))] = blank(data)
	}
	h := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(named)) {
		fmt.Fprintf(h, "%s\n%s", name, named[name])
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// replayLedger is one session of the replay's ledger.
type replayLedger struct {
	traj  rollout.Trajectory
	stops []rollout.GuardStop
}

// readReplayLedger reads every session file, by the run its User-Agent
// names.
func readReplayLedger(t *testing.T, dir string) map[string]*replayLedger {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	out := map[string]*replayLedger{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		l := &replayLedger{}
		var head rollout.GuardSession
		for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			var s rollout.GuardStop
			json.Unmarshal(line, &s)
			switch {
			case i == 0:
				json.Unmarshal(line, &head)
			case s.Event == "stop":
				l.stops = append(l.stops, s)
			}
		}
		srcs, err := rollout.Expand([]string{f})
		if err != nil {
			t.Fatal(err)
		}
		err = rollout.Scan(context.Background(), srcs[0], func(rec rollout.Record) error {
			l.traj, err = rollout.Decode(rec)
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[strings.TrimPrefix(head.Client, "replay/")] = l
	}
	return out
}

// checkReplayRun compares one run's ledger with the offline plan.
func checkReplayRun(t *testing.T, r replayRun, o *offlineRun, l *replayLedger, refused int) bool {
	t.Helper()
	id, ok := r.traj.ID+" ("+r.format+fmt.Sprintf(", stream %v, session header %v)", r.stream, r.header), true
	fail := func(format string, args ...any) {
		t.Errorf(id+": "+format, args...)
		ok = false
	}
	through := o.turns
	if o.stop > 0 {
		through = o.stop
	}
	if (o.stop > 0 && refused != o.stop) || (o.stop == 0 && refused != -1) {
		fail("request %d refused (0: none), want %d (offline: stop after turn %d of %d)", refused+1, o.stop+b2i(o.stop > 0), o.stop, o.turns)
	}
	var got *int
	if g := l.traj.Extra.Guard; g != nil {
		got = g.StoppedAfterTurn
	}
	if (got == nil) != (o.stop == 0) || got != nil && *got != o.stop {
		fail("stopped_after_turn %v, want %d (0: none)", ptrInt(got), o.stop)
	}
	want := make([]rollout.APITokens, through)
	for k := range want {
		want[k] = rollout.APITokens{Input: rollout.Unrecorded, Output: rollout.Unrecorded}
		if k < len(r.traj.API) {
			want[k] = r.traj.API[k]
		}
	}
	if diff := cmp.Diff(want, l.traj.API); diff != "" {
		fail("ledger usage (-recorded +ledger):\n%s", diff)
	}
	var ests []string
	for _, e := range l.traj.Extra.Guard.Estimates {
		ests = append(ests, fmt.Sprintf("%d %s", e.AfterTurn, e.Response))
	}
	var wantEsts []string
	for k := 1; k <= o.estimates; k++ {
		wantEsts = append(wantEsts, fmt.Sprintf("%d %s", k, o.answers[k]))
	}
	if diff := cmp.Diff(wantEsts, ests); diff != "" {
		fail("estimates (-offline +ledger):\n%s", diff)
	}
	var wantStops []rollout.GuardStop
	if o.decided > 0 {
		spent := o.spent[o.decided]
		saved, cost := max(0, replayBudget-spent), int64(0)
		cost, _ = o.spentOnEstimates(o.estimates)
		wantStops = append(wantStops, rollout.GuardStop{AfterTurn: o.decided, Reason: o.reason, Spent: spent, Saved: saved,
			EstimatorTokens: cost, Net: saved - cost})
	}
	for i := range l.stops {
		l.stops[i].Event, l.stops[i].Session, l.stops[i].Time = "", "", ""
	}
	if diff := cmp.Diff(wantStops, l.stops); diff != "" {
		fail("stop decisions (-offline +ledger):\n%s", diff)
	}
	return ok
}

func ptrInt(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// checkEvalEarlyStop runs eval --predictions on the offline answers and
// checks its early stop against the plan: eval stops a run at its first
// impossible probe, k = 1 … T−1, and saves that probe's remaining tokens
// when the run failed.
func checkEvalEarlyStop(t *testing.T, dir, set string, rows []dataset.RLRow, plan map[string]*offlineRun) {
	t.Helper()
	var preds bytes.Buffer
	remaining, failed := map[string]map[int]int64{}, map[string]bool{}
	for _, row := range rows {
		x := row.ExtraInfo
		line, _ := json.Marshal(map[string]string{"custom_id": x.CustomID, "response": plan[x.TrajectoryID].answers[int(x.ProbeAfterTurn)]})
		preds.Write(append(line, '\n'))
		if remaining[x.TrajectoryID] == nil {
			remaining[x.TrajectoryID] = map[int]int64{}
		}
		remaining[x.TrajectoryID][int(x.ProbeAfterTurn)] = x.RemainingTokens
		failed[x.TrajectoryID] = failed[x.TrajectoryID] || !x.IsPossible
	}
	path, js := filepath.Join(dir, "preds.jsonl"), filepath.Join(dir, "run.json")
	if err := os.WriteFile(path, preds.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := runReward(t.Context(), "eval", "--data", set, "--predictions", path, "--bootstrap", "0", "--json", js); err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr)
	}
	run, err := eval.ReadRun(js)
	if err != nil {
		t.Fatal(err)
	}
	var want eval.EarlyStop
	for id, o := range plan {
		for k := 1; k < o.turns; k++ {
			if reward.Parse(o.answers[k]).Kind != reward.Impossible {
				continue
			}
			if failed[id] {
				want.StoppedFailed++
				want.SavedTokens += remaining[id][k]
			} else {
				want.AbortedSuccessful++
			}
			break
		}
	}
	got := run.Metrics.EarlyStop
	if got.StoppedFailed != want.StoppedFailed || got.AbortedSuccessful != want.AbortedSuccessful || got.SavedTokens != want.SavedTokens {
		t.Errorf("eval early stop: %d failed runs stopped, %d successful aborted, %d tokens saved; the plan says %d, %d, %d",
			got.StoppedFailed, got.AbortedSuccessful, got.SavedTokens, want.StoppedFailed, want.AbortedSuccessful, want.SavedTokens)
	}
}

// checkReplayMetrics waits for the guard's counters to reach the plan's
// (the last turn's estimates run after its answer) and checks them.
func checkReplayMetrics(t *testing.T, url string, plan map[string]*offlineRun) {
	t.Helper()
	var acted, decisions, estimates, saved, cost, cached int64
	for _, o := range plan {
		estimates += int64(o.estimates)
		c, cc := o.spentOnEstimates(o.estimates)
		cost, cached = cost+c, cached+cc
		if o.decided > 0 {
			decisions++
		}
		if o.stop > 0 {
			acted++
			saved += max(0, replayBudget-o.spent[o.stop])
		}
	}
	want := map[string]int64{"bagen_guard_stops_total": acted, "bagen_guard_stop_decisions_total": decisions,
		"bagen_guard_estimates_total": estimates, "bagen_guard_unestimated_total": 0, "bagen_guard_saved_tokens_total": saved,
		`bagen_guard_estimator_tokens_total{kind="cached"}`: cached, "bagen_guard_net_saved_tokens": saved - cost}
	var got map[string]int64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got = metricSums(t, url, want); cmp.Equal(want, got) {
			break
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-plan +guard):\n%s", diff)
	}
}

// metricSums sums the samples of each named metric (a name with labels
// matches those samples only).
func metricSums(t *testing.T, url string, names map[string]int64) map[string]int64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	out := map[string]int64{}
	for name := range names {
		out[name] = 0
		for _, line := range strings.Split(string(text), "\n") {
			f := strings.Fields(line)
			if len(f) != 2 || strings.HasPrefix(line, "#") {
				continue
			}
			if f[0] == name || !strings.Contains(name, "{") && strings.HasPrefix(f[0], name+"{") {
				v, _ := strconv.ParseFloat(f[1], 64)
				out[name] += int64(v)
			}
		}
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkLedgerProbes makes probes of the guard's ledger, as a user turning
// the guarded runs into data would: one per turn the guard let through but
// the last, each a probe of the offline set
// (the ledger's turns are the runs' turns up to their stops, and a probe
// shows the usage as known after its turn).
func checkLedgerProbes(t *testing.T, dir, ledger, tok string, answers map[string]string, want int) {
	t.Helper()
	set := filepath.Join(dir, "ledger.parquet")
	if _, stderr, err := runReward(t.Context(), "probes", "-q", "--task", "swebench", "--input", ledger, "--out", set,
		"--tokenizer", tok, "--budget", strconv.Itoa(replayBudget), "--max-samples", "0"); err != nil {
		t.Fatalf("probes --input %s: %v\n%s", ledger, err, stderr)
	}
	rows, err := dataset.ReadRL(set)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if _, ok := answers[promptKey(row.Prompt)]; !ok {
			t.Errorf("probes of the ledger: %s is not an offline probe", row.ExtraInfo.CustomID)
		}
	}
	if len(rows) != want {
		t.Errorf("%d probes of the ledger, want %d (turns through the guard less one, per run)", len(rows), want)
	}
}
