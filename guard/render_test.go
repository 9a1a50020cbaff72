package guard

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/probes"
	"bagen-data/rollout"
)

// TestLiveProbeIsReplayProbe: the probe the guard asks after turn k is the
// probe `bagen-data probes` renders after turn k when it replays the
// ledger: same system prompt, history, usage text and question.
func TestLiveProbeIsReplayProbe(t *testing.T) {
	var mu sync.Mutex
	var asked [][]rollout.Message
	est := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []rollout.Message `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		asked = append(asked, body.Messages)
		mu.Unlock()
		io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"<answer>[10, 20]</answer>"},"finish_reason":"stop"}]}`)
	}))
	defer est.Close()
	task := probes.Tasks["sokoban"]
	var log upstreamLog
	dir := t.TempDir()
	_, url := startGuard(t, Config{Ledger: dir, Estimator: estimatorFor(est.URL), Task: task, Wait: true}, toolTurnUpstream(&log))
	history := []json.RawMessage{json.RawMessage(`{"role":"system","content":"agent prompt"}`), json.RawMessage(`{"role":"user","content":"push the box"}`)}
	for turn := 1; turn <= 3; turn++ {
		_, got := post(t, url+"/v1/chat/completions", chatBody(history), nil)
		history = agentNext(t, history, got)
	}
	// The third estimate may still be running; the first two are in.
	srcs, err := rollout.Expand([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := probes.ReadReplays(context.Background(), srcs, probes.ReplayOptions{System: task.System})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Turns() != 3 || rs[0].Inputs != probes.InputAPIDeltas {
		t.Fatalf("replays: %d, turns %d, inputs %v; want 1, 3, api-deltas", len(rs), rs[0].Turns(), rs[0].Inputs)
	}
	bench, _ := probes.TokenBench(rs, task, []int64{task.Budget}, probes.Sampling{})
	if len(bench) != 2 {
		t.Fatalf("%d replay probes, want 2", len(bench))
	}
	mu.Lock()
	defer mu.Unlock()
	for _, b := range bench {
		if diff := cmp.Diff(b.Prompt, asked[b.After-1]); diff != "" {
			t.Errorf("probe after turn %d (-probes +guard):\n%s", b.After, diff)
		}
	}
	// Usage text after turn 2: in_0 = 200 (two messages), in_1 = 400 −
	// 200 − 10 (the history's delta), out = 10 each.
	want := "Turn 1: input 200 tokens, output 10 tokens, total 210 tokens; Turn 2: input 190 tokens, output 10 tokens, total 200 tokens"
	if got := asked[1][len(asked[1])-1].Content; !strings.Contains(got, want) {
		t.Errorf("probe after turn 2:\n%s\nwant usage %q", got, want)
	}
}
