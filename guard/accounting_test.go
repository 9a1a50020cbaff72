package guard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"bagen-data/rollout"
)

// words counts one token per word.
type words struct{}

func (words) Count(s string) int { return len(strings.Fields(s)) }

// hiddenUpstream is a reasoning model behind an API that neither reports
// its reasoning tokens nor sends the reasoning back: each call is 226
// tokens out, and each request 213 more than the last (less than 226).
func hiddenUpstream() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req chatRequest
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c","choices":[{"index":0,"message":{"role":"assistant","content":"next step"},"finish_reason":"stop"}],"usage":{"prompt_tokens":%d,"completion_tokens":226}}`,
			200+213*(len(req.Messages)-1)/2)
	})
}

// textTurns runs n turns of a text-only agent through the guard at url.
func textTurns(t *testing.T, url string, n int) {
	t.Helper()
	history := []json.RawMessage{json.RawMessage(`{"role":"user","content":"fix it"}`)}
	for turn := 1; turn <= n; turn++ {
		resp, _ := post(t, url+"/v1/chat/completions", chatBody(history), nil)
		if resp.Header.Get("X-Bagen-Guard") == "stop" {
			t.Fatalf("turn %d refused", turn)
		}
		history = append(history, json.RawMessage(`{"role":"assistant","content":"next step"}`), json.RawMessage(`{"role":"user","content":"output of the step"}`))
	}
}

// waitMetrics polls /metrics until it holds every line of want.
func waitMetrics(t *testing.T, url string, want ...string) []byte {
	t.Helper()
	var m []byte
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		m = metricsText(t, url)
		all := true
		for _, w := range want {
			all = all && bytes.Contains(m, []byte(w+"\n"))
		}
		if all {
			return m
		}
	}
	for _, w := range want {
		if !bytes.Contains(m, []byte(w+"\n")) {
			t.Errorf("metrics lack %q:\n%s", w, m)
		}
	}
	return m
}

// TestHiddenReasoningNeedsTheTokenizer: turn 2's request grew by 213 <
// 226 with no reasoning reported, so accounting it needs the visible
// part of turn 1's output counted. Without a counter the turns from 2 on
// are unestimated, and the ledger, the log and the metrics say why; with
// one, every turn is estimated.
func TestHiddenReasoningNeedsTheTokenizer(t *testing.T) {
	for _, withCounter := range []bool{false, true} {
		t.Run(fmt.Sprint("counter ", withCounter), func(t *testing.T) {
			est, asked := estimatorServer(t, func(int) string { return "<answer>[100, 200]</answer>" })
			var logs strings.Builder
			var mu sync.Mutex
			cfg := Config{Ledger: t.TempDir(), Estimator: estimatorFor(est.URL), Budget: 5000, Policy: Stop, Wait: true,
				Logf: func(f string, a ...any) { mu.Lock(); fmt.Fprintf(&logs, f+"\n", a...); mu.Unlock() }}
			if withCounter {
				cfg.Counter = words{}
			}
			g, url := startGuard(t, cfg, hiddenUpstream())
			textTurns(t, url, 3)
			if !withCounter {
				waitMetrics(t, url, `bagen_guard_unestimated_total{reason="no_tokenizer"} 2`, `bagen_guard_estimates_total{verdict="unestimated"} 2`)
			}
			g.Close()
			var verdicts []string
			for _, evs := range readLedger(t, cfg.Ledger) {
				for _, e := range evs {
					if e["event"] == "estimate" {
						verdicts = append(verdicts, fmt.Sprintf("%v %v %v", e["after_turn"], e["verdict"], e["reason"]))
					}
				}
			}
			want := []string{"1 interval <nil>", "2 interval <nil>", "3 interval <nil>"}
			if !withCounter {
				want = []string{"1 interval <nil>", "2 unestimated no_tokenizer", "3 unestimated no_tokenizer"}
			}
			if diff := cmp.Diff(want, verdicts); diff != "" {
				t.Errorf("estimates (-want +got):\n%s", diff)
			}
			if n := int(asked.Load()); n != 1+2*b2i(withCounter) {
				t.Errorf("estimator asked %d times", n)
			}
			mu.Lock()
			defer mu.Unlock()
			if got := strings.Contains(logs.String(), "no estimate after turn 2 (no_tokenizer"); got == withCounter {
				t.Errorf("log says turn 2 unestimated: %v; log:\n%s", got, logs.String())
			}
		})
	}
}

// TestStopCountsWhenItRefuses: a stop decided after the run's last turn
// is in the ledger but counted nowhere; once a request comes and is
// refused, it is a stop, with its saving in the net figure.
func TestStopCountsWhenItRefuses(t *testing.T) {
	est, _ := estimatorServer(t, func(n int) string {
		if n == 3 {
			return "<answer>impossible</answer>"
		}
		return "<answer>[100, 200]</answer>"
	})
	var log upstreamLog
	dir := t.TempDir()
	r := &guardRun{ledger: dir}
	_, url := startGuard(t, Config{Ledger: dir, Estimator: estimatorFor(est.URL), Budget: 5000, Policy: Stop, StopAs: Message, Wait: true},
		toolTurnUpstream(&log))
	history := []json.RawMessage{json.RawMessage(`{"role":"user","content":"fix it"}`)}
	for turn := 1; turn <= 3; turn++ {
		_, got := post(t, url+"/v1/chat/completions", chatBody(history), nil)
		history = agentNext(t, history, got)
	}
	// Inputs 100, 300, 500 and outputs 10: spent 100+10 + 190+10 + 190+10
	// = 510 after turn 3; three estimates of 700 + 20 tokens.
	m := waitMetrics(t, url, `bagen_guard_stop_decisions_total{reason="impossible"} 1`, "bagen_guard_net_saved_tokens -2160")
	if bytes.Contains(m, []byte("bagen_guard_stops_total{")) {
		t.Errorf("a stop that refused nothing is counted:\n%s", m)
	}
	if tr := r.trajectories(t)[0]; tr.Extra.Guard.StoppedAfterTurn != nil {
		t.Errorf("stopped_after_turn %d before any refusal, want null", *tr.Extra.Guard.StoppedAfterTurn)
	}
	resp, _ := post(t, url+"/v1/chat/completions", chatBody(history), nil)
	if resp.Header.Get("X-Bagen-Guard") != "stop" || log.n() != 3 {
		t.Fatalf("turn 4: %s, upstream saw %d calls; want stop, 3", resp.Header.Get("X-Bagen-Guard"), log.n())
	}
	post(t, url+"/v1/chat/completions", chatBody(history), nil) // refused again, counted once
	waitMetrics(t, url, `bagen_guard_stops_total{reason="impossible"} 1`, "bagen_guard_stopped_spent_tokens_total 510",
		"bagen_guard_saved_tokens_total 4490", "bagen_guard_net_saved_tokens 2330")
	tr := r.trajectories(t)[0]
	if tr.Extra.Guard.StoppedAfterTurn == nil || *tr.Extra.Guard.StoppedAfterTurn != 3 {
		t.Errorf("stopped_after_turn %v, want 3", tr.Extra.Guard.StoppedAfterTurn)
	}
	var stops []rollout.GuardStop
	for _, evs := range readLedger(t, dir) {
		for _, e := range evs {
			if e["event"] == "stop" {
				stops = append(stops, rollout.GuardStop{AfterTurn: int(e["after_turn"].(float64)), Reason: e["reason"].(string),
					Spent: int64(e["spent"].(float64)), Saved: int64(e["saved"].(float64)),
					EstimatorTokens: int64(e["estimator_tokens"].(float64)), Net: int64(e["net"].(float64))})
			}
		}
	}
	want := rollout.GuardStop{AfterTurn: 3, Reason: "impossible", Spent: 510, Saved: 4490, EstimatorTokens: 2160, Net: 2330}
	if diff := cmp.Diff([]rollout.GuardStop{want}, stops); diff != "" {
		t.Errorf("stop events (-want +got):\n%s", diff)
	}
}

// TestEstimateFrom asks from turn 2 on, every turn.
func TestEstimateFrom(t *testing.T) {
	est, asked := estimatorServer(t, func(int) string { return "<answer>[100, 200]</answer>" })
	dir := t.TempDir()
	g, url := startGuard(t, Config{Ledger: dir, Estimator: estimatorFor(est.URL), Budget: 5000, EstimateFrom: 2, Wait: true, Counter: words{}},
		hiddenUpstream())
	textTurns(t, url, 4)
	g.Close()
	var turns []float64
	for _, evs := range readLedger(t, dir) {
		for _, e := range evs {
			if e["event"] == "estimate" {
				turns = append(turns, e["after_turn"].(float64))
			}
		}
	}
	if diff := cmp.Diff([]float64{2, 3, 4}, turns); diff != "" || asked.Load() != 3 {
		t.Errorf("estimated after turns %v (asked %d times), want 2, 3, 4", turns, asked.Load())
	}
}
