package guard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bagen-data/internal/httpd"
	"bagen-data/probes"
	"bagen-data/rollout"
)

// TestWarnNoteEachFormat checks where the warn note goes in each format.
func TestWarnNoteEachFormat(t *testing.T) {
	const note = "[budget alert] test"
	tests := []struct {
		codec      Codec
		body, want string
	}{
		{Chat{}, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			`{"messages":[{"role":"user","content":"hi"},{"content":"[budget alert] test","role":"user"}],"model":"m"}`},
		{Responses{}, `{"model":"m","input":"hi"}`,
			`{"input":[{"content":"hi","role":"user"},{"content":[{"text":"[budget alert] test","type":"input_text"}],"role":"user","type":"message"}],"model":"m"}`},
		{Anthropic{}, `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}]}`,
			`{"messages":[{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"},{"text":"[budget alert] test","type":"text"}],"role":"user"}],"model":"m"}`},
	}
	for _, tt := range tests {
		req, err := tt.codec.Request([]byte(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		got, err := tt.codec.Outgoing([]byte(tt.body), req, note)
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: got %s (%v), want %s", tt.codec.Name(), got, err, tt.want)
		}
		if same, _ := tt.codec.Outgoing([]byte(tt.body), req, ""); string(same) != tt.body {
			t.Errorf("%s: without a note got %s, want the body untouched", tt.codec.Name(), same)
		}
	}
}

func TestWarnPolicyReachesUpstream(t *testing.T) {
	est, _ := estimatorServer(t, func(int) string { return "<answer>[300, 900]</answer>" })
	var log upstreamLog
	_, url := startGuard(t, Config{Estimator: estimatorFor(est.URL), Budget: 5000, Policy: Warn, Wait: true}, toolTurnUpstream(&log))
	history := []json.RawMessage{json.RawMessage(`{"role":"user","content":"fix it"}`)}
	_, got := post(t, url+"/v1/chat/completions", chatBody(history), nil)
	history = agentNext(t, history, got)
	resp, _ := post(t, url+"/v1/chat/completions", chatBody(history), nil)
	var req chatRequest
	json.Unmarshal(log.bodies[1], &req)
	last := partsText(req.Messages[len(req.Messages)-1].Content)
	want := "[budget alert] After turn 1 you have used 110 of your 5000-token budget (4890 left). Estimated tokens still needed: 300 to 900." +
		" Forecast for the whole session: 410 to 1010 tokens." // 110 spent + [300, 900]
	if last != want || resp.Header.Get("X-Bagen-Guard") != "warn" {
		t.Errorf("last message %q (X-Bagen-Guard %q), want %q (warn)", last, resp.Header.Get("X-Bagen-Guard"), want)
	}
}

func TestBudgetCapStops(t *testing.T) {
	var log upstreamLog
	_, url := startGuard(t, Config{Budget: 250, Policy: Stop, StopAs: Message}, toolTurnUpstream(&log))
	history := []json.RawMessage{json.RawMessage(`{"role":"user","content":"fix it"}`)}
	for turn := 1; turn <= 3; turn++ {
		resp, got := post(t, url+"/v1/chat/completions", chatBody(history), nil)
		if turn == 3 {
			want := "bagen-data guard stopped this session after turn 2: it has spent 310 tokens, past its budget of 250"
			var r chatResponse
			json.Unmarshal(got, &r)
			if resp.Header.Get("X-Bagen-Guard") != "stop" || partsText(r.Choices[0].Message.Content) != want {
				t.Errorf("turn 3: %s, want %q", got, want)
			}
			break
		}
		history = agentNext(t, history, got)
	}
	if log.n() != 2 {
		t.Errorf("upstream saw %d calls, want 2", log.n())
	}
}

func TestBodyLimit(t *testing.T) {
	var log upstreamLog
	_, url := startGuard(t, Config{Limits: httpd.Limits{MaxBody: 64}}, toolTurnUpstream(&log))
	resp, got := post(t, url+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"`+strings.Repeat("x", 100)+`"}]}`, nil)
	want := `{"error":"bagen-data guard: request body too large: 155 bytes, limit 64"}`
	if resp.StatusCode != 413 || string(got) != want || log.n() != 0 {
		t.Errorf("got %d %s (upstream saw %d), want 413 %s", resp.StatusCode, got, log.n(), want)
	}
}

// TestCutStreamCountsRelayed: an Anthropic stream cut after message_start
// and one delta counts the input and the output reported so far.
func TestCutStreamCountsRelayed(t *testing.T) {
	dir := t.TempDir()
	_, url := startGuard(t, Config{Ledger: dir}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		sse(w,
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":40,\"output_tokens\":1}}}\n\n",
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"part\"}}\n\n")
		// The connection ends here, mid-message.
	}))
	post(t, url+"/v1/messages", `{"model":"c","stream":true,"messages":[{"role":"user","content":"go"}]}`, nil)
	time.Sleep(50 * time.Millisecond)
	for _, evs := range readLedger(t, dir) {
		c := evs[1]
		if c["complete"] != false || c["usage"].(map[string]any)["input"] != 40.0 || c["usage"].(map[string]any)["output"] != 1.0 {
			t.Errorf("cut call %v: want incomplete with input 40, output 1", c)
		}
		if c["output"].([]any)[0].(map[string]any)["text"] != "part" {
			t.Errorf("cut call output %v, want the relayed text", c["output"])
		}
	}
}

// TestGracefulShutdownMidStream: after the context ends, a stream in
// flight is relayed to its end and Serve returns nil; new connections are
// refused.
func TestGracefulShutdownMidStream(t *testing.T) {
	release := make(chan struct{})
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		sse(w, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
		<-release
		sse(w, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\n\n",
			"data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}\n\n", "data: [DONE]\n\n")
	})
	upSrv := newLoopback(t, up)
	g, err := New(Config{Upstream: upSrv, Limits: httpd.Limits{DrainTimeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- g.Serve(ctx, l) }()
	url := "http://" + l.Addr().String()
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1024)
	n, _ := resp.Body.Read(buf)
	first := string(buf[:n])
	cancel()
	refused := false
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && !refused; time.Sleep(20 * time.Millisecond) {
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Get(url + "/healthz")
		if err != nil {
			refused = true
		} else {
			resp.Body.Close()
		}
	}
	if !refused {
		t.Errorf("new requests were still served 5 s into the shutdown")
	}
	close(release)
	rest, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	all := first + string(rest)
	if !strings.HasSuffix(all, "data: [DONE]\n\n") || strings.Contains(all, "usage") {
		t.Errorf("stream after shutdown began:\n%s", all)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return")
	}
}

func newLoopback(t *testing.T, h http.Handler) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String()
}

// TestResponsesChain: requests that send only their new turn with
// previous_response_id stay one session, and the probe sees the whole
// chain.
func TestResponsesChain(t *testing.T) {
	dir := t.TempDir()
	n := 0
	var mu sync.Mutex
	var probeLens []int
	est := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []json.RawMessage `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		probeLens = append(probeLens, len(body.Messages))
		mu.Unlock()
		io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"<answer>[1, 2]</answer>"},"finish_reason":"stop"}]}`)
	}))
	defer est.Close()
	g, url := startGuard(t, Config{Ledger: dir, Estimator: estimatorFor(est.URL), Task: probes.Tasks["sokoban"], Wait: true}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n++
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"resp_`+string(rune('0'+n))+`","status":"completed","output":[{"type":"message","id":"m`+string(rune('0'+n))+`","role":"assistant","content":[{"type":"output_text","text":"ans"}]}],"usage":{"input_tokens":`+string(rune('0'+n))+`00,"output_tokens":10}}`)
	}))
	post(t, url+"/v1/responses", `{"model":"m","input":"first"}`, nil)
	post(t, url+"/v1/responses", `{"model":"m","previous_response_id":"resp_1","input":"second"}`, nil)
	post(t, url+"/v1/responses", `{"model":"m","previous_response_id":"resp_2","input":"third"}`, nil)
	g.Close()
	// The probe after turn k shows the whole chain: the system prompt, k
	// turns and the question.
	if !slices.Equal(probeLens, []int{4, 6, 8}) {
		t.Errorf("probe lengths %v, want [4 6 8]", probeLens)
	}
	evs := readLedger(t, dir)
	if len(evs) != 1 {
		t.Fatalf("%d sessions, want 1", len(evs))
	}
	for _, e := range evs {
		var inputs []string
		for _, ev := range e {
			if ev["event"] == "call" {
				inputs = append(inputs, ev["input"].([]any)[0].(map[string]any)["text"].(string))
			}
		}
		if strings.Join(inputs, ",") != "first,second,third" {
			t.Errorf("inputs %v", inputs)
		}
	}
}

// TestExplicitSessionHeaders: ids from each client's header keep calls
// of different runs apart even when their requests are identical.
func TestExplicitSessionHeaders(t *testing.T) {
	dir := t.TempDir()
	var log upstreamLog
	_, url := startGuard(t, Config{Ledger: dir}, toolTurnUpstream(&log))
	body := `{"model":"m","messages":[{"role":"user","content":"same"}]}`
	for _, h := range []map[string]string{
		{"X-Bagen-Session": "a"}, {"X-Bagen-Session": "a"}, {"X-Claude-Code-Session-Id": "b"}, {"session_id": "c"},
		{"x-litellm-session-id": "d"}, {"X-Codex-Turn-Metadata": `{"session_id":"e"}`},
	} {
		post(t, url+"/v1/chat/completions", body, h)
	}
	post(t, url+"/v1/chat/completions", `{"model":"m","metadata":{"user_id":"user_abc_account__session_f00"},"messages":[{"role":"user","content":"same"}]}`, nil)
	evs := readLedger(t, dir)
	var calls []int
	for _, e := range evs {
		calls = append(calls, len(callUsages(e)))
	}
	slices.Sort(calls)
	if !slices.Equal(calls, []int{1, 1, 1, 1, 1, 2}) {
		t.Errorf("%d sessions with %v answered calls, want 6 (one with 2)", len(evs), calls)
	}
}

// TestSideCalls: in a session whose requests offer tools, requests
// offering none (titles, next-speaker checks) are side calls: recorded,
// never turns; one before the first tools request is dropped from the
// run once that arrives.
func TestSideCalls(t *testing.T) {
	dir := t.TempDir()
	var log upstreamLog
	_, url := startGuard(t, Config{Ledger: dir}, toolTurnUpstream(&log))
	h := map[string]string{"X-Claude-Code-Session-Id": "run-1"}
	post(t, url+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"title this"}]}`, h)
	history := []json.RawMessage{json.RawMessage(`{"role":"user","content":"fix it"}`)}
	withTools := func(history []json.RawMessage) string {
		b, _ := json.Marshal(map[string]any{"model": "m", "messages": history, "tools": []any{map[string]any{"type": "function"}}})
		return string(b)
	}
	_, got := post(t, url+"/v1/chat/completions", withTools(history), h)
	history = agentNext(t, history, got)
	post(t, url+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"next speaker?"}]}`, h)
	post(t, url+"/v1/chat/completions", withTools(history), h)
	srcs, _ := rollout.Expand([]string{dir})
	var turns []int64
	for _, src := range srcs {
		rollout.Scan(context.Background(), src, func(rec rollout.Record) error {
			tr, err := rollout.Decode(rec)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range tr.API {
				turns = append(turns, a.Input)
			}
			return nil
		})
	}
	if !slices.Equal(turns, []int64{100, 300}) {
		t.Errorf("turn inputs %v, want [100 300] (the two tools calls)", turns)
	}
}

// TestLedgerStartsWithFirstTurn: a session file appears with the first
// answered turn and holds the failed call before it.
func TestLedgerStartsWithFirstTurn(t *testing.T) {
	dir := t.TempDir()
	var fail atomic.Bool
	fail.Store(true)
	_, url := startGuard(t, Config{Ledger: dir}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if fail.Load() {
			w.WriteHeader(503)
			io.WriteString(w, `{"error":"busy"}`)
			return
		}
		io.WriteString(w, chatReply)
	}))
	body := `{"model":"m","messages":[{"role":"user","content":"x"}]}`
	post(t, url+"/v1/chat/completions", body, nil)
	if evs := readLedger(t, dir); len(evs) != 0 {
		t.Fatalf("ledger has %d sessions before any answer, want 0", len(evs))
	}
	fail.Store(false)
	post(t, url+"/v1/chat/completions", body, nil) // the retry joins the session
	evs := readLedger(t, dir)
	if len(evs) != 1 {
		t.Fatalf("ledger has %d sessions, want 1", len(evs))
	}
	for _, e := range evs {
		var got []string
		for _, ev := range e {
			got = append(got, fmt.Sprintf("%s %v", ev["event"], ev["status"]))
		}
		if want := []string{"session <nil>", "call 503", "call 200"}; !slices.Equal(got, want) {
			t.Errorf("events %v, want %v", got, want)
		}
	}
}

func TestUnreachableUpstream(t *testing.T) {
	g, err := New(Config{Upstream: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	srv := newLoopback(t, g)
	resp, got := post(t, srv+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`, nil)
	want := `{"error":"bagen-data guard: upstream 127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused"}`
	if resp.StatusCode != 502 || string(got) != want {
		t.Errorf("got %d %s, want 502 %s", resp.StatusCode, got, want)
	}
}

// TestSessionBound: past MaxSessions the least recently used session is
// forgotten, with its index entries.
func TestSessionBound(t *testing.T) {
	ss := newSessions(2)
	var evicted []string
	ss.onEvict = func(s *Session) { evicted = append(evicted, s.ID) }
	var ids []string
	for i := 0; i < 3; i++ {
		req := &Request{Items: nil}
		h := http.Header{"X-Bagen-Session": {fmt.Sprint("run-", i)}}
		s, _, _, _ := ss.resolve(h, req, prefixHashes(nil))
		ss.answered(s, 0, 0, []string{fmt.Sprint("call-", i)})
		ids = append(ids, s.ID)
	}
	if ss.count() != 2 || !slices.Equal(evicted, ids[:1]) || len(ss.byID) != 2 || len(ss.byKey) != 2 {
		t.Errorf("held %d, evicted %v (want %v), byID %d, byKey %d", ss.count(), evicted, ids[:1], len(ss.byID), len(ss.byKey))
	}
}

func TestStopAsAuto(t *testing.T) {
	tests := []struct {
		ua   string
		want StopAs
	}{
		{"claude-cli/2.1.331 (external, sdk-cli)", Message},
		{"codex_exec/0.169.0 (Debian 13; x86_64) dumb (codex_exec; 0.169.0)", Message},
		{"QwenCode/0.24.4 (linux; x64)", Message},
		{"", Message},
		{"litellm/1.74.0", ContextLimit},
		{"OpenAI/Python 1.99.9", ContextLimit},
		{"AsyncOpenAI/Python 1.99.9", ContextLimit},
		{"Anthropic/Python 0.60.0", ContextLimit},
		{"inspect_ai/0.3.120", ContextLimit},
	}
	for _, tt := range tests {
		if got := Auto.resolve(http.Header{"User-Agent": {tt.ua}}); got != tt.want {
			t.Errorf("User-Agent %q: got %v, want %v", tt.ua, got, tt.want)
		}
		if got := Message.resolve(http.Header{"User-Agent": {tt.ua}}); got != Message {
			t.Errorf("message with User-Agent %q: got %v", tt.ua, got)
		}
	}
}
