package guard

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"bagen-data/internal/agenttest"
	"bagen-data/internal/httpd"
)

// The live page's traffic: two chat sessions against the two-calls script
// under --policy stop --wait --budget 5000. Session a runs to its final
// answer with one side call (no tools) after turn 1, every estimate an
// interval; session b is estimated impossible after turn 1 and its next
// request refused. Their User-Agents and model names carry markup.
const (
	pageUA    = `agent-a/1.0 <script>document.title="pwned"</script><img src=x onerror="document.title='pwned'">`
	pageModel = `m-a"><img src=x onerror=alert(1)>`
	pageTask  = "Write one.txt and read it back."
)

var shellTool = json.RawMessage(`[{"type":"function","function":{"name":"shell","parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}}]`)

// pageEstimator answers impossible to the probes of session b (whose task
// says "task b"), an interval to the others; each answer costs 700 + 20.
func pageEstimator(t *testing.T) Estimator {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		answer := "<answer>[100, 200]</answer>"
		if strings.Contains(string(body), "task b") {
			answer = "<think>too far</think><answer>impossible</answer>"
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"e","model":"est","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":700,"completion_tokens":20}}`, answer)
	}))
	t.Cleanup(srv.Close)
	return estimatorFor(srv.URL)
}

// chatTurn posts one chat request of a session (with the shell tool when
// tools) and returns the history extended by the answer's tool call and
// its result, or unchanged when the answer is final.
func chatTurn(t *testing.T, url, session, ua, model string, history []json.RawMessage, tools bool) (*http.Response, []json.RawMessage) {
	t.Helper()
	req := map[string]any{"model": model, "messages": history}
	if tools {
		req["tools"] = shellTool
	}
	body, _ := json.Marshal(req)
	resp, got := post(t, url+"/v1/chat/completions", string(body), map[string]string{"X-Bagen-Session": session, "User-Agent": ua})
	var reply chatResponse
	if err := json.Unmarshal(got, &reply); err != nil || len(reply.Choices) == 0 || len(reply.Choices[0].Message.ToolCalls) == 0 {
		return resp, history
	}
	return resp, agentNext(t, history, got)
}

// pageTraffic runs the page's traffic through a guard in front of the
// two-calls stand-in and waits for its estimates.
func pageTraffic(t *testing.T, cfg Config) *guardRun {
	t.Helper()
	cfg.Estimator, cfg.Budget, cfg.Policy, cfg.Wait = pageEstimator(t), 5000, Stop, true
	r := startGuardRun(t, agenttest.Scripts["two-calls"], cfg)
	// The page is read all along, as a browser would (go test -race).
	stop, polled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(polled)
		for {
			select {
			case <-stop:
				return
			default:
				json.Marshal(r.guard.Page())
			}
		}
	}()
	defer func() { close(stop); <-polled }()
	a := []json.RawMessage{json.RawMessage(`{"role":"user","content":"task a: ` + pageTask + `"}`)}
	a1 := a
	for turn := 1; turn <= 3; turn++ {
		_, a = chatTurn(t, r.url, "a", pageUA, pageModel, a, true)
		if turn == 1 {
			chatTurn(t, r.url, "a", pageUA, pageModel, []json.RawMessage{json.RawMessage(`{"role":"user","content":"Write a title"}`)}, false)
		}
	}
	if len(a) != len(a1)+4 {
		t.Fatalf("session a: %d messages after 3 turns, want %d (two tool calls and their results)", len(a), len(a1)+4)
	}
	b := []json.RawMessage{json.RawMessage(`{"role":"user","content":"task b: ` + pageTask + `"}`)}
	_, b = chatTurn(t, r.url, "b", "agent-b/2.0", "m-b", b, true)
	if resp, _ := chatTurn(t, r.url, "b", "agent-b/2.0", "m-b", b, true); resp.Header.Get("X-Bagen-Guard") != "stop" {
		t.Fatalf("session b, turn 2: X-Bagen-Guard %q, want stop", resp.Header.Get("X-Bagen-Guard"))
	}
	r.guard.wg.Wait()
	return r
}

// expectedPage is the page recomputed from what the stand-in served: each
// session's calls, turns and reported tokens, its spent tokens by the
// replay rule (each turn adds its output, and its input beyond the
// previous turn's input and visible output: the reasoning is not sent
// back), the estimates pageEstimator gave and the
// stop it caused.
func expectedPage(t *testing.T, r *guardRun, now string) Page {
	t.Helper()
	type acc struct {
		calls, turns int
		tokens       Tokens
		spent, prev  int64
	}
	by := map[string]*acc{"a": {}, "b": {}}
	for _, c := range r.model.Calls() {
		s := by[c.Header.Get("X-Bagen-Session")]
		u := c.Answer.Usage
		s.calls++
		s.tokens.Input += int64(u.Input)
		s.tokens.Output += int64(u.Output)
		s.tokens.Reasoning += int64(u.Reasoning)
		s.tokens.Cached += int64(u.Cached)
		if c.Aux {
			continue
		}
		s.turns++
		grown := int64(u.Input) - s.prev
		if grown < 0 {
			t.Fatalf("turn %d's input %d is below the previous turn's input and visible output %d: the replay rule counts it otherwise", s.turns, u.Input, s.prev)
		}
		s.spent += grown + int64(u.Output)
		s.prev = int64(u.Input + u.Output - u.Reasoning)
	}
	by["b"].calls++ // the refused request, which the stand-in never saw
	const est = 700 + 20
	a := SessionView{ID: sessionID("a"), Client: pageUA, Model: pageModel, Format: "chat", Started: now, Last: now,
		Calls: by["a"].calls, Turns: by["a"].turns, Spent: by["a"].spent, Budget: 5000, Tokens: by["a"].tokens,
		Estimate: &EstimateView{AfterTurn: 3, Verdict: "interval", Interval: &[2]int64{100, 200}},
		Verdicts: map[string]int{"interval": 3}, EstimatorTokens: 3 * est}
	b := SessionView{ID: sessionID("b"), Client: "agent-b/2.0", Model: "m-b", Format: "chat", Started: now, Last: now,
		Calls: by["b"].calls, Turns: by["b"].turns, Spent: by["b"].spent, Budget: 5000, Tokens: by["b"].tokens,
		Estimate: &EstimateView{AfterTurn: 1, Verdict: "impossible"}, Verdicts: map[string]int{"impossible": 1}, EstimatorTokens: est,
		Stop: &StopView{AfterTurn: 1, Reason: "impossible", Spent: by["b"].spent, Saved: 5000 - by["b"].spent, Refused: true}}
	totals := PageTotals{Sessions: 2, Calls: a.Calls + b.Calls, Turns: a.Turns + b.Turns, Spent: a.Spent + b.Spent,
		Tokens: Tokens{Input: a.Tokens.Input + b.Tokens.Input, Output: a.Tokens.Output + b.Tokens.Output,
			Reasoning: a.Tokens.Reasoning + b.Tokens.Reasoning, Cached: a.Tokens.Cached + b.Tokens.Cached},
		Verdicts: map[string]int{"interval": 3, "impossible": 1}, Stops: 1, Decided: 1}
	return Page{Now: now, Policy: "stop", Task: "swebench", Budget: 5000, Held: 2, Totals: totals, Sessions: []SessionView{b, a}}
}

// sessionID is the id the guard gives an explicit session id.
func sessionID(explicit string) string {
	s := newSessions(1).create(http.Header{"X-Bagen-Session": {explicit}}, &Request{})
	return s.ID
}

func getPage(t *testing.T, url string) (Page, []byte) {
	t.Helper()
	resp, err := http.Get(url + "/sessions.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /sessions.json: %s %q, want 200 application/json", resp.Status, resp.Header.Get("Content-Type"))
	}
	var p Page
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("/sessions.json %s: %v", raw, err)
	}
	return p, raw
}

// TestPageJSON: after scripted traffic, /sessions.json is the state
// recomputed from what the stand-in served, and its totals are /metrics'
// counters.
func TestPageJSON(t *testing.T) {
	clock := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	r := pageTraffic(t, Config{Now: func() time.Time { return clock }})
	got, raw := getPage(t, r.url)
	want := expectedPage(t, r, clock.Format(time.RFC3339Nano))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("/sessions.json (-want +got):\n%s", diff)
	}
	if strings.Contains(string(raw), "<") || !strings.Contains(string(raw), `\u003cscript\u003e`) {
		t.Errorf("/sessions.json carries markup unescaped: %s", raw)
	}
	if diff := cmp.Diff(metricTotals(t, r.url), pageTotalsAsMetrics(got)); diff != "" {
		t.Errorf("page totals against /metrics (-metrics +page):\n%s", diff)
	}
}

// metricCounts are the counters the page's totals sum.
type metricCounts struct {
	Sessions, Held float64
	Tokens         map[string]float64 // by kind, summed over formats
	Verdicts       map[string]float64
	Stops, Decided float64
}

var metricLine = regexp.MustCompile(`^(\w+)(?:\{(.*)\})? (\S+)$`)

// metricTotals reads /metrics.
func metricTotals(t *testing.T, url string) metricCounts {
	t.Helper()
	m := metricCounts{Tokens: map[string]float64{}, Verdicts: map[string]float64{}}
	for _, line := range strings.Split(string(metricsText(t, url)), "\n") {
		f := metricLine.FindStringSubmatch(line)
		if f == nil {
			continue
		}
		v, err := strconv.ParseFloat(f[3], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		label := func(name string) string {
			l := regexp.MustCompile(name + `="([^"]*)"`).FindStringSubmatch(f[2])
			if l == nil {
				t.Fatalf("metrics line %q: no label %s", line, name)
			}
			return l[1]
		}
		switch f[1] {
		case "bagen_guard_sessions_total":
			m.Sessions = v
		case "bagen_guard_sessions":
			m.Held = v
		case "bagen_guard_tokens_total":
			m.Tokens[label("kind")] += v
		case "bagen_guard_estimates_total":
			m.Verdicts[label("verdict")] = v
		case "bagen_guard_stops_total":
			m.Stops += v
		case "bagen_guard_stop_decisions_total":
			m.Decided += v
		}
	}
	return m
}

// pageTotalsAsMetrics is what /metrics holds when every session is
// listed: kinds with no token are absent there.
func pageTotalsAsMetrics(p Page) metricCounts {
	m := metricCounts{Sessions: float64(p.Totals.Sessions), Held: float64(p.Held), Tokens: map[string]float64{},
		Verdicts: map[string]float64{}, Stops: float64(p.Totals.Stops), Decided: float64(p.Totals.Decided)}
	for kind, n := range map[string]int64{"input": p.Totals.Tokens.Input, "output": p.Totals.Tokens.Output,
		"reasoning": p.Totals.Tokens.Reasoning, "cached": p.Totals.Tokens.Cached} {
		if n > 0 {
			m.Tokens[kind] = float64(n)
		}
	}
	for k, n := range p.Totals.Verdicts {
		m.Verdicts[k] = float64(n)
	}
	return m
}

// TestPageRoutes: GET / is the page, from the binary and with no asset
// from elsewhere; /healthz, /metrics and everything else are as before.
func TestPageRoutes(t *testing.T) {
	r := startGuardRun(t, agenttest.Scripts["two-calls"], Config{})
	tests := []struct {
		name, method, path string
		status             int
		ctype, body        string
	}{
		{"page", "GET", "/", 200, "text/html; charset=utf-8", string(pageHTML)},
		{"page head", "HEAD", "/", 200, "text/html; charset=utf-8", ""},
		{"empty sessions", "GET", "/sessions.json", 200, "application/json", `{"now":`},
		{"healthz", "GET", "/healthz", 200, "application/json", `{"status":"ok"}`},
		{"metrics", "GET", "/metrics", 200, httpd.MetricsType, "bagen_guard_sessions 0\n"},
		{"POST / goes upstream", "POST", "/", 404, "application/json", "agenttest: no route POST /"},
		{"other paths go upstream", "GET", "/index.html", 404, "application/json", "agenttest: no route GET /index.html"},
		{"models go upstream", "GET", "/v1/models", 200, "application/json", `"owned_by":"agenttest"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, r.url+tt.path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != tt.ctype || !strings.Contains(string(body), tt.body) {
				t.Errorf("%s %s: %d %q %.200s, want %d %q holding %q", tt.method, tt.path, resp.StatusCode,
					resp.Header.Get("Content-Type"), body, tt.status, tt.ctype, tt.body)
			}
		})
	}
	for _, ref := range regexp.MustCompile(`(?:src|href)="([^"]*)"|url\(|@import|fetch\("([^"]*)"`).FindAllStringSubmatch(string(pageHTML), -1) {
		if ref[0] != `href="sessions.json"` && ref[0] != `fetch("sessions.json"` {
			t.Errorf("page.html refers to %s: want no asset but sessions.json", ref[0])
		}
	}
}
