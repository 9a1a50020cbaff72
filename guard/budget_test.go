package guard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/baseline"
	"bagen-data/eval/prediction"
	"bagen-data/rollout"
)

// With toolTurnUpstream a chat session's turn k reports prompt_tokens
// 100 per message of its request (2k−1 messages, plus the guard's note
// when the request carries one) and completion_tokens 10, so the replay
// accounting has spent 100·(2k−1) + 10 tokens after turn k (110, 310,
// 510, …), 100 more when request k carried a note.
func spentAfter(k int, noted bool) int64 {
	n := int64(100*(2*k-1) + 10)
	if noted {
		n += 100
	}
	return n
}

// chatRun drives one chat session of at most turns requests through the
// guard at url, as an agent answering every tool call with "out" does;
// it returns the X-Bagen-Guard header of each request.
func chatRun(t *testing.T, url string, turns int) []string {
	t.Helper()
	return newChatAgent(url, nil).run(t, turns)
}

// chatAgent is one chat session sending headers h.
type chatAgent struct {
	url     string
	h       map[string]string
	history []json.RawMessage
}

func newChatAgent(url string, h map[string]string) *chatAgent {
	return &chatAgent{url: url, h: h, history: []json.RawMessage{json.RawMessage(`{"role":"user","content":"fix it"}`)}}
}

// run sends at most turns requests, stopping at a refused one.
func (a *chatAgent) run(t *testing.T, turns int) []string {
	t.Helper()
	var verdicts []string
	for range turns {
		resp, got := post(t, a.url+"/v1/chat/completions", chatBody(a.history), a.h)
		verdicts = append(verdicts, resp.Header.Get("X-Bagen-Guard"))
		if resp.Header.Get("X-Bagen-Guard") == "stop" {
			break
		}
		a.history = agentNext(t, a.history, got)
	}
	return verdicts
}

// lastMessage is the text of the last message of a chat request body.
func lastMessage(t *testing.T, body []byte) string {
	t.Helper()
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	return partsText(req.Messages[len(req.Messages)-1].Content)
}

// events are a ledger's events of one kind, in order (one session).
func events(t *testing.T, dir, kind string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, evs := range readLedger(t, dir) {
		for _, e := range evs {
			if e["event"] == kind {
				out = append(out, e)
			}
		}
	}
	return out
}

// TestThresholds: each threshold warns once, after the turn whose spent
// tokens first reach it (spent·100 ≥ pct·budget), in the next request.
func TestThresholds(t *testing.T) {
	var log upstreamLog
	dir := t.TempDir()
	// Budget 1000: 31% is 310 tokens, reached exactly after turn 2; the
	// note makes turn 3 610, 61% exactly; turn 4 (noted) is 810, one
	// token short of 81.1%, reached after turn 5 (910) with 91%.
	_, url := startGuard(t, Config{Ledger: dir, Budget: 1000, Policy: Warn, WarnAt: []float64{91, 31, 81.1, 61}}, toolTurnUpstream(&log))
	verdicts := chatRun(t, url, 7)
	noted := map[int]bool{3: true, 4: true, 6: true} // requests carrying a note
	type warned struct {
		Pct   float64
		After int
		Spent int64
	}
	var got []warned
	for _, w := range events(t, dir, "warn") {
		got = append(got, warned{w["threshold"].(float64), int(w["after_turn"].(float64)), int64(w["spent"].(float64))})
	}
	want := []warned{{31, 2, spentAfter(2, false)}, {61, 3, spentAfter(3, true)}, {81.1, 5, spentAfter(5, false)}, {91, 5, spentAfter(5, false)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if spentAfter(4, true)*1000 >= 811*1000 || want[1].Spent != 610 || want[3].Spent != 910 {
		t.Fatalf("the thresholds do not sit where the comment says")
	}
	for _, w := range want {
		// The note is (part of) the last message of the request after
		// the turn.
		note := fmt.Sprintf("[budget alert] After turn %d you have used %g%% of your budget: %d of 1000 tokens.", w.After, w.Pct, w.Spent)
		if got := lastMessage(t, log.bodies[w.After]); !strings.Contains(got, note) {
			t.Errorf("request %d: last message %q, want it to hold %q", w.After+1, got, note)
		}
	}
	var wantVerdicts []string
	for k := 1; k <= 7; k++ {
		wantVerdicts = append(wantVerdicts, map[bool]string{false: "pass", true: "warn"}[noted[k]])
	}
	if diff := cmp.Diff(wantVerdicts, verdicts); diff != "" {
		t.Errorf("X-Bagen-Guard per request (-want +got):\n%s", diff)
	}
	m := string(metricsText(t, url))
	for _, pct := range []string{"31", "61", "81.1", "91"} {
		if want := `bagen_guard_warnings_total{reason="threshold",threshold="` + pct + `"} 1`; !strings.Contains(m, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// TestThresholdsUnderStop: below 100% the stop policy warns; at 100% it
// stops once the tokens pass the budget, as before.
func TestThresholdsUnderStop(t *testing.T) {
	var log upstreamLog
	dir := t.TempDir()
	_, url := startGuard(t, Config{Ledger: dir, Budget: 1000, Policy: Stop}, toolTurnUpstream(&log))
	verdicts := chatRun(t, url, 8)
	// 80%: 800 after turn 5 (910), 90%: 900 after turn 5 too; past
	// 1000 after turn 6 (1210, noted): request 7 is refused.
	want := []string{"pass", "pass", "pass", "pass", "pass", "warn", "stop"}
	if diff := cmp.Diff(want, verdicts); diff != "" {
		t.Errorf("X-Bagen-Guard per request (-want +got):\n%s", diff)
	}
	var got []float64
	for _, w := range events(t, dir, "warn") {
		got = append(got, w["threshold"].(float64))
	}
	if diff := cmp.Diff([]float64{80, 90}, got); diff != "" {
		t.Errorf("thresholds warned (-want +got):\n%s", diff)
	}
	if note := lastMessage(t, log.bodies[5]); !strings.Contains(note, "80% of your budget: 910 of 1000 tokens.") || !strings.Contains(note, "90% of your budget") {
		t.Errorf("request 6 note %q, want both thresholds", note)
	}
}

// callUSD recomputes a call's dollars from its usage and the test prices
// of model "m" (input 2, cached 0.5, output 10 $ per million tokens).
func callUSD(u map[string]any) float64 {
	in, cached, out := u["input"].(float64), u["cached"].(float64), u["output"].(float64)
	return ((in-cached)*2 + cached*0.5 + out*10) / 1e6
}

func testPrices(t *testing.T) *Prices {
	t.Helper()
	p, err := LoadPrices("testdata/prices/prices.txt")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBudgetUSD: a session's dollars are its calls' usage priced by
// model; past --budget-usd the next request is refused.
func TestBudgetUSD(t *testing.T) {
	var log upstreamLog
	dir := t.TempDir()
	g, url := startGuard(t, Config{Ledger: dir, BudgetUSD: 0.002, Prices: testPrices(t), Policy: Stop, WarnAt: []float64{50}}, toolTurnUpstream(&log))
	verdicts := chatRun(t, url, 6)
	g.Close()
	// Turn k costs (input·2 + 10·10)/10⁶ with input as spentAfter says:
	// 0.0003, 0.0007, then 0.0013 (request 3 carries the 50% note): $0.0010
	// after turn 2 (50% of $0.002, exactly), $0.0023 after turn 3, past
	// the budget: request 4 is refused.
	if diff := cmp.Diff([]string{"pass", "pass", "warn", "stop"}, verdicts); diff != "" {
		t.Errorf("X-Bagen-Guard per request (-want +got):\n%s", diff)
	}
	var sum float64
	for _, c := range events(t, dir, "call") {
		if u, ok := c["usage"].(map[string]any); ok {
			want := callUSD(u)
			if got, _ := c["usd"].(float64); math.Abs(got-want) > 1e-15 {
				t.Errorf("call %v: usd %v, want %v", c["call"], got, want)
			}
			sum += want
		}
	}
	if math.Abs(sum-0.0023) > 1e-12 {
		t.Errorf("session dollars %v, want 0.0023", sum)
	}
	stops := events(t, dir, "stop")
	if len(stops) != 1 || stops[0]["reason"] != "budget_usd" || stops[0]["after_turn"].(float64) != 3 {
		t.Errorf("stops %v, want one budget_usd after turn 3", stops)
	}
	if m := string(metricsText(t, url)); !strings.Contains(m, `bagen_guard_stops_total{reason="budget_usd"} 1`) || !strings.Contains(m, "bagen_guard_usd_total 0.0023") {
		t.Errorf("metrics lack the budget_usd stop or the dollars:\n%s", m)
	}
}

// TestForecast: with an estimator that answers before the first turn,
// the session's forecast is made at its start (the turn-0 probe, which
// the baseline reads as one) and after each estimate, carried by the
// note; dollars are priced at the model's input price before any call
// and at the session's dollars per token after.
func TestForecast(t *testing.T) {
	prompts := make(chan []rollout.Message, 16)
	est, _ := estimatorServer(t, func(int) string { return "<answer>[300, 900]</answer>" })
	var log upstreamLog
	dir := t.TempDir()
	g, url := startGuard(t, Config{Ledger: dir, Budget: 5000, Prices: testPrices(t), Policy: Warn, Wait: true,
		ForecastStart: true, Estimator: recordPrompts{estimatorFor(est.URL), prompts}}, toolTurnUpstream(&log))
	chatRun(t, url, 2)
	g.Close()
	fs := events(t, dir, "forecast")
	if len(fs) != 3 {
		t.Fatalf("%d forecasts, want 3 (start, after turns 1 and 2): %v", len(fs), fs)
	}
	byTurn := map[int]map[string]any{}
	for _, f := range fs {
		byTurn[int(f["after_turn"].(float64))] = f
	}
	rate1 := 0.0003 / 110 // $ per token after turn 1: (100·2 + 10·10)/10⁶ for 110 tokens
	for k, want := range map[int][5]float64{
		0: {0, 300, 900, 300 * 2e-6, 900 * 2e-6},
		1: {110, 410, 1010, 0.0003 + 300*rate1, 0.0003 + 900*rate1},
	} {
		f := byTurn[k]
		got := [5]float64{f["spent"].(float64), f["low"].(float64), f["high"].(float64), f["usd_low"].(float64), f["usd_high"].(float64)}
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-12 {
				t.Errorf("forecast after turn %d: %v, want %v", k, got, want)
				break
			}
		}
	}
	note := lastMessage(t, log.bodies[1])
	if want := fmt.Sprintf("Forecast for the whole session: 410 to 1010 tokens ($%.4f to $%.4f).", 0.0003+300*rate1, 0.0003+900*rate1); !strings.HasSuffix(note, want) {
		t.Errorf("note %q, want it to end %q", note, want)
	}
	v, err := baseline.NewView(<-prompts)
	if err != nil || v.Turns() != 0 {
		t.Errorf("start probe: the baseline reads it as %v turns (%v), want a probe after turn 0", v, err)
	}
	if m := string(metricsText(t, url)); !strings.Contains(m, `bagen_guard_forecasts_total{at="start"} 1`) || !strings.Contains(m, `bagen_guard_forecasts_total{at="turn"} 2`) {
		t.Errorf("metrics lack the forecasts")
	}
}

// TestPricesParse: bad lines name the file, line and field.
func TestPricesParse(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"fields", "m 1 2\n", "p.txt:1: want 4 fields (model input cached_input output), got 3"},
		{"number", "# c\nm 1 x 3\n", `p.txt:2: cached_input: want dollars per million tokens in [0, 1e+06], got "x"`},
		{"negative", "m -1 0 3\n", `p.txt:1: input: want dollars per million tokens in [0, 1e+06], got "-1"`},
		{"nan", "m 1 0 NaN\n", `p.txt:1: output: want dollars per million tokens in [0, 1e+06], got "NaN"`},
		{"glob", "\n[a 1 0 3\n", `p.txt:2: model: glob "[a": syntax error in pattern`},
		{"empty", "# nothing\n", "p.txt:1: no price line (want: MODEL INPUT CACHED_INPUT OUTPUT, $ per million tokens)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePrices("p.txt", []byte(tc.in))
			var pe *PricesError
			if err == nil || err.Error() != tc.want || !errors.As(err, &pe) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
	p := testPrices(t)
	u := &rollout.GuardUsage{Input: 1_000_000, Cached: 400_000, Output: 100_000}
	for model, want := range map[string]float64{
		"claude-sonnet-4-5": 0.6*3 + 0.4*0.30 + 0.1*15, // first match wins
		"gpt-5-codex":       0.6*1.25 + 0.4*0.125 + 0.1*10,
		"m":                 0.6*2 + 0.4*0.5 + 0.1*10,
		"qwen3":             0,
	} {
		if got, ok := p.Cost(model, u); !ok || math.Abs(got-want) > 1e-12 {
			t.Errorf("Cost(%s) = %v, %v; want %v", model, got, ok, want)
		}
	}
	if _, ok := p.Cost("m", &rollout.GuardUsage{Input: -1, Output: 5}); ok {
		t.Error("an unrecorded input is priced")
	}
}

func FuzzParsePrices(f *testing.F) {
	seed, _ := os.ReadFile("testdata/prices/prices.txt")
	f.Add(seed)
	f.Add([]byte("a* 1 2 3\n[ 1 1 1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePrices("f", data)
		if err != nil {
			var pe *PricesError
			if !errors.As(err, &pe) || pe.Line < 0 {
				t.Fatalf("error %v is not a *PricesError", err)
			}
			return
		}
		for _, r := range p.Rows() {
			if r.Input < 0 || r.Cached < 0 || r.Output < 0 || r.Input > maxPrice {
				t.Fatalf("row %+v out of range", r)
			}
			if c, ok := p.Cost(r.Model, &rollout.GuardUsage{Input: 10, Output: 10}); ok && (c < 0 || math.IsNaN(c)) {
				t.Fatalf("cost %v", c)
			}
		}
	})
}

// TestLoopOf: the runs of repeated calls and results at the end of each
// CLI's recorded request, and of the same request with its last turn
// repeated twice more.
func TestLoopOf(t *testing.T) {
	for file, codec := range map[string]Codec{"claude": Anthropic{}, "codex": Responses{}, "qwen": Chat{}} {
		t.Run(file, func(t *testing.T) {
			body, err := os.ReadFile("testdata/requests/" + file + ".json")
			if err != nil {
				t.Fatal(err)
			}
			req, err := codec.Request(body)
			if err != nil {
				t.Fatal(err)
			}
			calls, results, _, _ := loopOf(req.Items)
			if calls != 1 || results != 1 {
				t.Errorf("recorded request: %d calls, %d results in a row, want 1, 1", calls, results)
			}
			// Its last turn (the call and its result) made twice more.
			last := lastTurn(req.Items)
			items := append(append(append([]rollout.Message{}, req.Items...), last...), last...)
			calls, results, detail, _ := loopOf(items)
			if calls != 3 || results != 3 || detail != "made the same tool call" {
				t.Errorf("repeated: %d calls, %d results (%s), want 3, 3", calls, results, detail)
			}
			// A different call between breaks the run of calls, not of
			// results.
			other := []rollout.Message{{Role: "assistant", Content: rollout.RenderToolCall("ls", json.RawMessage(`{}`))}, last[len(last)-1]}
			items = append(append(append([]rollout.Message{}, req.Items...), other...), last...)
			if calls, results, _, _ := loopOf(items); calls != 1 || results != 3 {
				t.Errorf("interrupted: %d calls, %d results, want 1, 3", calls, results)
			}
		})
	}
}

// lastTurn is the items from the request's last assistant message on.
func lastTurn(items []rollout.Message) []rollout.Message {
	i := len(items) - 1
	for items[i].Role != "assistant" {
		i--
	}
	for i > 0 && items[i-1].Role == "assistant" {
		i--
	}
	return items[i:]
}

// TestLoopGate: toolTurnUpstream makes the same call (bash {}) every
// turn and the agent answers "out": with --loop 3 the request after
// turn 3 is refused under stop, warned once under warn.
func TestLoopGate(t *testing.T) {
	for _, policy := range []Policy{Stop, Warn} {
		t.Run(policy.String(), func(t *testing.T) {
			var log upstreamLog
			dir := t.TempDir()
			g, url := startGuard(t, Config{Ledger: dir, Loop: 3, Policy: policy}, toolTurnUpstream(&log))
			verdicts := chatRun(t, url, 6)
			g.Close()
			m := string(metricsText(t, url))
			if policy == Stop {
				stops := events(t, dir, "stop")
				if diff := cmp.Diff([]string{"pass", "pass", "pass", "stop"}, verdicts); diff != "" || len(stops) != 1 || stops[0]["reason"] != "loop" || stops[0]["after_turn"].(float64) != 3 {
					t.Errorf("verdicts %v (-want +got %s), stops %v; want a loop stop after turn 3", verdicts, diff, stops)
				}
				if !strings.Contains(m, `bagen_guard_stops_total{reason="loop"} 1`) {
					t.Errorf("metrics lack the loop stop")
				}
				return
			}
			if diff := cmp.Diff([]string{"pass", "pass", "pass", "warn", "pass", "pass"}, verdicts); diff != "" {
				t.Errorf("X-Bagen-Guard per request (-want +got):\n%s", diff)
			}
			want := "[loop alert] You have made the same tool call 3 times in a row. Doing it again will not give a different result: change your approach or stop."
			if got := lastMessage(t, log.bodies[3]); got != want {
				t.Errorf("request 4: %q, want %q", got, want)
			}
			if !strings.Contains(m, `bagen_guard_warnings_total{reason="loop",threshold=""} 1`) {
				t.Errorf("metrics lack the loop warning")
			}
		})
	}
}

// recordPrompts passes each prompt to seen.
type recordPrompts struct {
	Estimator
	seen chan<- []rollout.Message
}

func (r recordPrompts) Estimate(ctx context.Context, id string, prompt []rollout.Message) (prediction.Prediction, error) {
	select {
	case r.seen <- prompt:
	default:
	}
	return r.Estimator.Estimate(ctx, id, prompt)
}

// TestFamilyBudget: a child session (X-Bagen-Parent-Session) counts
// toward its parent's budget: each has its own ledger file, the child's
// naming the parent, and the family's spending stops both.
func TestFamilyBudget(t *testing.T) {
	var log upstreamLog
	dir := t.TempDir()
	_, url := startGuard(t, Config{Ledger: dir, Budget: 1000, Policy: Stop, WarnAt: []float64{}}, toolTurnUpstream(&log))
	parent := newChatAgent(url, map[string]string{"X-Bagen-Session": "p"})
	child := newChatAgent(url, map[string]string{"X-Bagen-Session": "c", "X-Bagen-Parent-Session": "p"})
	// The parent spends 510 in 3 turns, the child 110, 310, 510: the
	// family is at 1020 after the child's third turn, past 1000.
	if diff := cmp.Diff([]string{"pass", "pass", "pass"}, parent.run(t, 3)); diff != "" {
		t.Errorf("parent (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"pass", "pass", "pass", "stop"}, child.run(t, 5)); diff != "" {
		t.Errorf("child (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"stop"}, parent.run(t, 1)); diff != "" {
		t.Errorf("parent after the child (-want +got):\n%s", diff)
	}
	pid, cid := keyID("p"), keyID("c")
	ledger := readLedger(t, dir)
	if len(ledger) != 2 {
		t.Fatalf("%d ledger files, want 2", len(ledger))
	}
	for id, want := range map[string][2]any{pid: {"", 3.0}, cid: {pid, 3.0}} {
		var evs []map[string]any
		for f, e := range ledger {
			if strings.Contains(f, id) {
				evs = e
			}
		}
		if len(evs) == 0 {
			t.Fatalf("no ledger file for %s", id)
		}
		parentOf, _ := evs[0]["parent"].(string)
		var stop map[string]any
		for _, e := range evs {
			if e["event"] == "stop" {
				stop = e
			}
		}
		if parentOf != want[0] || stop == nil || stop["reason"] != "budget" || stop["after_turn"] != want[1] || stop["spent"] != 1020.0 {
			t.Errorf("session %s: parent %q, stop %v; want parent %q, a budget stop after turn 3 with 1020 spent", id, parentOf, stop, want[0])
		}
	}
	if m := string(metricsText(t, url)); !strings.Contains(m, `bagen_guard_stops_total{reason="budget"} 2`) {
		t.Errorf("metrics lack the two stops")
	}
}

// TestFamilyKeys: the keys of a session and its parent from the headers
// Claude Code's subagents send, and from X-Bagen-Parent-Session.
func TestFamilyKeys(t *testing.T) {
	for _, tc := range []struct {
		name              string
		h                 map[string]string
		id, key, parentOf string
	}{
		{"main", map[string]string{"X-Claude-Code-Session-Id": "S"}, "S", "S", ""},
		{"subagent", map[string]string{"X-Claude-Code-Session-Id": "S", "X-Claude-Code-Agent-Id": "a1"}, "S", "S\x00agent:a1", "S"},
		{"nested", map[string]string{"X-Claude-Code-Session-Id": "S", "X-Claude-Code-Agent-Id": "a2", "X-Claude-Code-Parent-Agent-Id": "a1"}, "S", "S\x00agent:a2", "S\x00agent:a1"},
		{"bagen", map[string]string{"X-Bagen-Session": "c", "X-Bagen-Parent-Session": "p"}, "c", "c", "p"},
		{"self", map[string]string{"X-Bagen-Session": "c", "X-Bagen-Parent-Session": "c"}, "c", "c", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.h {
				h.Set(k, v)
			}
			id, _ := explicitID(h, &Request{})
			if id != tc.id || childKey(h, id) != tc.key || parentKey(h, id) != tc.parentOf {
				t.Errorf("got id %q, key %q, parent %q; want %q, %q, %q", id, childKey(h, id), parentKey(h, id), tc.id, tc.key, tc.parentOf)
			}
		})
	}
}
