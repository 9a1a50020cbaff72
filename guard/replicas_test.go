package guard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"

	"bagen-data/dataset"
	"bagen-data/eval/prediction"
	"bagen-data/internal/agenttest"
	"bagen-data/rollout"
)

// The team traffic: teamSessions agent runs of teamTurns turns each, sent
// turn by turn (every session's turn k, in parallel, then turn k+1), each
// session named by X-Bagen-Session. Every fourth session is judged
// impossible after a turn of its own; the budget stops the larger
// sessions; the others run to their end. A stopped session's agent keeps
// sending, so that every later request must be refused wherever it lands.
const (
	teamSessions = 24
	teamTurns    = 8
	teamBudget   = 3500
)

func teamName(i int) string { return fmt.Sprintf("team-run-%02d", i) }

// teamUsage is the upstream's usage for turn k (1-based) of session i: a
// history-inclusive input that grows by the previous output and 240 new
// tokens, so that the accounting's spent tokens after turn k are
// input_k + output_k.
func teamUsage(i, k int) (in, out int) {
	out = 60 + i
	in = 1000 + 40*i + (k-1)*(out+240)
	return in, out
}

// teamReached is how many of DefaultWarnAt session i's spending after
// turn k reaches (spent · 100 ≥ pct · budget); 0 before the first turn.
func teamReached(i, k int) int {
	if k < 1 {
		return 0
	}
	in, out := teamUsage(i, k)
	n := 0
	for _, pct := range DefaultWarnAt {
		if float64(in+out)*100 >= pct*float64(teamBudget) {
			n++
		}
	}
	return n
}

// teamImpossible is the turn after which session i's estimate is
// impossible, 0 for none.
func teamImpossible(i int) int {
	if i%4 != 0 {
		return 0
	}
	return 2 + i%5
}

// teamStop is the turn after which session i's stop is decided, by the
// definitions alone (the budget is checked as a turn is recorded, before
// its estimate), and why; 0 when none is, within teamTurns.
func teamStop(i int) (int, string) {
	for k := 1; k <= teamTurns; k++ {
		in, out := teamUsage(i, k)
		if in+out > teamBudget {
			return k, "budget"
		}
		if k == teamImpossible(i) {
			return k, "impossible"
		}
	}
	return 0, ""
}

// teamEstimator answers the probe after turn k of a session impossible
// at teamImpossible, an interval otherwise, reporting a usage that
// depends on the turn, 40 ms after it is asked.
type teamEstimator struct{ impossible map[string]int }

func newTeamEstimator() teamEstimator {
	e := teamEstimator{impossible: map[string]int{}}
	for i := range teamSessions {
		e.impossible[keyID(teamName(i))] = teamImpossible(i)
	}
	return e
}

func (e teamEstimator) Estimate(ctx context.Context, id string, _ []rollout.Message) (prediction.Prediction, error) {
	// Slower than an agent's next request: a replica that receives it
	// must wait for the estimate another recorded (--wait).
	select {
	case <-time.After(40 * time.Millisecond):
	case <-ctx.Done():
		return prediction.Prediction{}, ctx.Err()
	}
	session, turn, _ := strings.Cut(id, dataset.ProbeSuffix)
	k, _ := strconv.Atoi(turn)
	p := prediction.Prediction{Response: "<answer>[200, 900]</answer>", Usage: &prediction.Usage{PromptTokens: 500 + int64(k), CompletionTokens: 20}}
	if e.impossible[session] == k {
		p.Response = "<think>too far</think><answer>impossible</answer>"
	}
	return p, nil
}

// teamUpstream answers turn X-Team-Turn of session X-Bagen-Session, in
// Chat Completions, streamed when asked.
func teamUpstream(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream bool `json:"stream"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		i, _ := strconv.Atoi(strings.TrimPrefix(r.Header.Get("X-Bagen-Session"), "team-run-"))
		k, _ := strconv.Atoi(r.Header.Get("X-Team-Turn"))
		in, out := teamUsage(i, k)
		a := agenttest.Answer{Text: fmt.Sprintf("step %d of run %d", k, i), Usage: agenttest.Usage{Input: in, Output: out}}
		agenttest.WriteAnswer(w, "chat", req.Stream, true, "m", fmt.Sprintf("%d-%d", i, k), a)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// teamConfig is one guard's configuration: --policy stop --wait
// --budget teamBudget with the team's estimator.
func teamConfig(upstream, ledger string) Config {
	return Config{Upstream: upstream, Ledger: ledger, Estimator: newTeamEstimator(), Budget: teamBudget,
		Policy: Stop, StopAs: Message, Wait: true}
}

// teamBody is session i's request for turn k: the history so far, as the
// upstream answered it.
func teamBody(i, k int) string {
	msgs := []map[string]string{{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": fmt.Sprintf("task %d", i)}}
	for j := 1; j < k; j++ {
		msgs = append(msgs, map[string]string{"role": "assistant", "content": fmt.Sprintf("step %d of run %d", j, i)},
			map[string]string{"role": "user", "content": fmt.Sprintf("result %d", j)})
	}
	b, _ := json.Marshal(map[string]any{"model": "m", "messages": msgs, "stream": i%3 == 2, "stream_options": map[string]bool{"include_usage": true}})
	return string(b)
}

// teamRun is what the agents saw: per session, the guard's decision on
// each turn's request (X-Bagen-Guard) and, with route's help, where each
// went (X-Replica, set by the load balancer).
type teamRun struct {
	decisions [teamSessions][teamTurns]string
	replicas  [teamSessions][teamTurns]string
}

// driveTeam sends the team traffic, turn k of session i to url(i, k);
// between(k, run) runs after every session's turn k.
func driveTeam(t *testing.T, url func(i, k int) string, between func(k int, run *teamRun)) *teamRun {
	t.Helper()
	run := &teamRun{}
	for k := 1; k <= teamTurns; k++ {
		var wg sync.WaitGroup
		errs := make(chan error, teamSessions)
		for i := range teamSessions {
			wg.Go(func() {
				h := map[string]string{"X-Bagen-Session": teamName(i), "X-Team-Turn": strconv.Itoa(k)}
				dec, replica, err := teamPost(url(i, k)+"/v1/chat/completions", teamBody(i, k), h)
				run.decisions[i][k-1], run.replicas[i][k-1] = dec, replica
				if err != nil {
					errs <- fmt.Errorf("%s turn %d: %w", teamName(i), k, err)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if between != nil {
			between(k, run)
		}
	}
	return run
}

func teamPost(url, body string, h map[string]string) (decision, replica string, err error) {
	resp, err := http.DefaultClient.Do(jsonPost(url, body, h))
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("%d %s", resp.StatusCode, b)
	}
	return resp.Header.Get("X-Bagen-Guard"), resp.Header.Get("X-Replica"), nil
}

// singleTeamRun is the team traffic through one guard: the reference.
func singleTeamRun(t *testing.T, upstream string) (*teamRun, string, float64) {
	t.Helper()
	ledger := filepath.Join(t.TempDir(), "ledger")
	g, err := New(teamConfig(upstream, ledger))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	run := driveTeam(t, func(int, int) string { return srv.URL }, nil)
	srv.Close()
	g.Close()
	return run, ledger, teamStops(g)
}

// teamStops is the guard's bagen_guard_stops_total, both reasons.
func teamStops(g *Guard) float64 {
	var n float64
	for _, reason := range []string{"impossible", "budget"} {
		var m dto.Metric
		g.metrics.stops.WithLabelValues(reason).Write(&m)
		n += m.GetCounter().GetValue()
	}
	return n
}

// checkTeamReference pins the single guard's run to the definitions:
// each session's stop (turn, reason, spent tokens, what its estimates
// cost) and the requests refused after it.
func checkTeamReference(t *testing.T, run *teamRun, ledger string) {
	t.Helper()
	files := readLedger(t, ledger)
	for i := range teamSessions {
		evs := files[keyID(teamName(i))+".jsonl"]
		stop, reason := teamStop(i)
		var got []map[string]any
		for _, e := range evs {
			if e["event"] == "stop" {
				got = append(got, e)
			}
		}
		var cost int64
		for k := 1; k <= stop || stop == 0 && k <= teamTurns; k++ {
			if reason == "budget" && k == stop {
				break // no estimate once the budget stops the turn
			}
			cost += 500 + int64(k) + 20
		}
		var want []map[string]any
		if stop > 0 {
			in, out := teamUsage(i, stop)
			saved := max(0, teamBudget-int64(in+out))
			want = []map[string]any{{"event": "stop", "session": keyID(teamName(i)), "after_turn": float64(stop), "reason": reason,
				"spent": float64(in + out), "saved": float64(saved), "estimator_tokens": float64(cost), "net": float64(saved - cost)}}
		}
		for _, e := range append(got, want...) {
			delete(e, "time")
			if e["saved"] == 0.0 {
				delete(e, "saved") // omitted when 0
			}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: stop events (-want +got):\n%s", teamName(i), d)
		}
		for k := 1; k <= teamTurns; k++ {
			want := "pass"
			switch {
			case stop > 0 && k > stop:
				want = "stop"
			case k > 1 && teamReached(i, k-1) > teamReached(i, k-2):
				want = "warn" // a threshold of DefaultWarnAt crossed by the turn before
			}
			if got := run.decisions[i][k-1]; got != want {
				t.Errorf("%s turn %d: X-Bagen-Guard %q, want %q", teamName(i), k, got, want)
			}
		}
	}
}

// compareLedgers checks that two ledger directories hold the same
// sessions with the same events, times and latencies aside.
func compareLedgers(t *testing.T, want, got string) {
	t.Helper()
	strip := func(files map[string][]map[string]any) map[string][]map[string]any {
		for _, evs := range files {
			for _, e := range evs {
				delete(e, "time")
				delete(e, "latency_ms")
			}
		}
		return files
	}
	w, g := strip(readLedger(t, want)), strip(readLedger(t, got))
	if len(w) != teamSessions {
		t.Fatalf("the single guard's ledger has %d sessions, want %d", len(w), teamSessions)
	}
	if d := cmp.Diff(w, g); d != "" {
		t.Errorf("ledger of the replicas (-single guard +replicas):\n%s", d)
	}
}

// TestReplicasContinueSessions: three guards sharing one ledger, each
// session sent to a replica chosen per turn (one session in three stays,
// the others move every turn), decide and record exactly what one guard
// does with the same traffic.
func TestReplicasContinueSessions(t *testing.T) {
	upstream := teamUpstream(t)
	ref, refLedger, refStops := singleTeamRun(t, upstream)
	checkTeamReference(t, ref, refLedger)

	ledger := filepath.Join(t.TempDir(), "ledger")
	var urls []string
	var guards []*Guard
	for range 3 {
		g, err := New(teamConfig(upstream, ledger))
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(g)
		defer srv.Close()
		urls, guards = append(urls, srv.URL), append(guards, g)
	}
	run := driveTeam(t, func(i, k int) string { return urls[(i+k*(i%3))%3] }, nil)
	var stops float64
	for _, g := range guards {
		g.Close()
		stops += teamStops(g)
	}
	if run.decisions != ref.decisions {
		t.Errorf("decisions:\n got %v\nwant %v", run.decisions, ref.decisions)
	}
	compareLedgers(t, refLedger, ledger)
	if stops != refStops {
		t.Errorf("bagen_guard_stops_total summed over the replicas: %v, want the single guard's %v", stops, refStops)
	}
}

// freePort is a loopback port free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
