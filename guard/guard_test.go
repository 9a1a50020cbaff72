package guard

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"bagen-data/eval/prediction"
	"bagen-data/rollout"
)

// upstreamLog captures what reached a test upstream.
type upstreamLog struct {
	mu     sync.Mutex
	bodies [][]byte
	heads  []http.Header
	paths  []string
}

func (u *upstreamLog) add(r *http.Request) []byte {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.bodies = append(u.bodies, b)
	u.heads = append(u.heads, r.Header.Clone())
	u.paths = append(u.paths, r.URL.Path)
	return b
}

func (u *upstreamLog) n() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.bodies)
}

// startGuard runs a guard in front of upstream on loopback.
func startGuard(t *testing.T, cfg Config, upstream http.Handler) (*Guard, string) {
	t.Helper()
	up := httptest.NewServer(upstream)
	t.Cleanup(up.Close)
	cfg.Upstream = up.URL
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	t.Cleanup(func() { srv.Close(); g.Close() })
	return g, srv.URL
}

func post(t *testing.T, url, body string, h map[string]string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(jsonPost(url, body, h))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// jsonPost is a POST of a JSON body with headers h.
func jsonPost(url, body string, h map[string]string) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	return req
}

// readLedger reads every event of every session file in dir.
func readLedger(t *testing.T, dir string) map[string][]map[string]any {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	out := map[string][]map[string]any{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var ev map[string]any
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out[filepath.Base(f)] = append(out[filepath.Base(f)], ev)
		}
	}
	return out
}

// callUsages are the usage objects of the ledger's answered calls.
func callUsages(evs []map[string]any) []map[string]any {
	var out []map[string]any
	for _, e := range evs {
		if e["event"] == "call" && e["turn"].(float64) > 0 {
			out = append(out, e["usage"].(map[string]any))
		}
	}
	return out
}

// usageMap is a ledger usage object; reasoning is nil where the upstream
// did not break it out.
func usageMap(in, out float64, reasoning any, cached float64) map[string]any {
	return map[string]any{"input": in, "output": out, "reasoning": reasoning, "cached": cached}
}

const chatReply = `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150,"prompt_tokens_details":{"cached_tokens":100},"completion_tokens_details":{"reasoning_tokens":12}}}`

func TestChatPassThrough(t *testing.T) {
	var log upstreamLog
	dir := t.TempDir()
	_, url := startGuard(t, Config{Ledger: filepath.Join(dir, "ledger")}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Upstream", "yes")
		io.WriteString(w, chatReply)
	}))
	body := `{"model":"m","messages":[{"role":"system","content":"sys"},{"role":"user","content":"hi"}]}`
	resp, got := post(t, url+"/v1/chat/completions", body, map[string]string{"Authorization": "Bearer sk-test-123", "X-Custom": "kept"})
	if string(got) != chatReply {
		t.Errorf("agent got %s, want the upstream's bytes %s", got, chatReply)
	}
	if resp.Header.Get("X-Upstream") != "yes" || resp.Header.Get("X-Bagen-Guard") != "pass" {
		t.Errorf("headers %v: want X-Upstream: yes and X-Bagen-Guard: pass", resp.Header)
	}
	if string(log.bodies[0]) != body {
		t.Errorf("upstream got %s, want the agent's bytes %s", log.bodies[0], body)
	}
	if log.heads[0].Get("Authorization") != "Bearer sk-test-123" || log.heads[0].Get("X-Custom") != "kept" {
		t.Errorf("upstream headers %v: want the agent's", log.heads[0])
	}
	if log.paths[0] != "/v1/chat/completions" {
		t.Errorf("upstream path %s", log.paths[0])
	}
	evs := readLedger(t, filepath.Join(dir, "ledger"))
	if len(evs) != 1 {
		t.Fatalf("ledger has %d sessions, want 1", len(evs))
	}
	for _, e := range evs {
		if diff := cmp.Diff([]map[string]any{usageMap(120, 30, 12.0, 100)}, callUsages(e)); diff != "" {
			t.Errorf("usage (-want +got):\n%s", diff)
		}
	}
	st, _ := os.Stat(filepath.Join(dir, "ledger"))
	if st.Mode().Perm() != 0o700 {
		t.Errorf("ledger dir mode %v, want 0700", st.Mode().Perm())
	}
	files, _ := filepath.Glob(filepath.Join(dir, "ledger", "*.jsonl"))
	for _, f := range files {
		st, _ := os.Stat(f)
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", f, st.Mode().Perm())
		}
		data, _ := os.ReadFile(f)
		if bytes.Contains(data, []byte("sk-test-123")) {
			t.Errorf("%s holds the agent's key", f)
		}
	}
}

// sse writes events, flushing each.
func sse(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range events {
		io.WriteString(w, e)
		w.(http.Flusher).Flush()
	}
}

func chatStreamUpstream(log *upstreamLog) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := log.add(r)
		var req struct {
			StreamOptions *struct {
				IncludeUsage bool `json:"include_usage"`
			} `json:"stream_options"`
		}
		json.Unmarshal(body, &req)
		events := []string{
			"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n",
			"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\",\"tool_calls\":[{\"index\":0,\"id\":\"call_x1\",\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"cmd\\\":\"}}]},\"finish_reason\":null}]}\n\n",
			"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"ls\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
		}
		if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
			events = append(events, "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":9,\"total_tokens\":59}}\n\n")
		}
		sse(w, append(events, "data: [DONE]\n\n")...)
	})
}

func TestChatStreamUsage(t *testing.T) {
	for _, agentAsks := range []bool{false, true} {
		t.Run(fmt.Sprint("agent asks ", agentAsks), func(t *testing.T) {
			var log upstreamLog
			dir := t.TempDir()
			_, url := startGuard(t, Config{Ledger: dir}, chatStreamUpstream(&log))
			body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`
			if agentAsks {
				body = `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
			}
			_, got := post(t, url+"/v1/chat/completions", body, nil)
			if hasUsage := bytes.Contains(got, []byte(`"usage"`)); hasUsage != agentAsks {
				t.Errorf("agent sees the usage chunk: %v, want %v; stream:\n%s", hasUsage, agentAsks, got)
			}
			if !bytes.HasSuffix(got, []byte("data: [DONE]\n\n")) || bytes.Count(got, []byte("data: ")) != 4+b2i(agentAsks) {
				t.Errorf("stream relayed wrong:\n%s", got)
			}
			want := `{"stream_options":{"include_usage":true},"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`
			if agentAsks {
				want = body
			}
			if string(log.bodies[0]) != want {
				t.Errorf("upstream got %s, want %s", log.bodies[0], want)
			}
			for _, evs := range readLedger(t, dir) {
				if diff := cmp.Diff([]map[string]any{usageMap(50, 9, nil, 0)}, callUsages(evs)); diff != "" {
					t.Errorf("usage (-want +got):\n%s", diff)
				}
				out := evs[1]["output"].([]any)[0].(map[string]any)["text"]
				wantOut := "Hello\n<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"cmd\":\"ls\"}}\n</tool_call>"
				if out != wantOut {
					t.Errorf("output %q, want %q", out, wantOut)
				}
			}
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestAnthropicStreamUsage(t *testing.T) {
	dir := t.TempDir()
	var log upstreamLog
	_, url := startGuard(t, Config{Ledger: dir}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r)
		sse(w,
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":10,\"cache_read_input_tokens\":500,\"cache_creation_input_tokens\":20,\"output_tokens\":1}}}\n\n",
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n",
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Bash\",\"input\":{}}}\n\n",
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"command\\\": \\\"ls\\\"}\"}}\n\n",
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":15}}\n\n",
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":42}}\n\n",
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	body := `{"model":"claude","stream":true,"system":[{"type":"text","text":"sys","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"go"}]}`
	_, got := post(t, url+"/v1/messages", body, map[string]string{"x-api-key": "sk-ant-zzz"})
	if bytes.Count(got, []byte("event: ")) != 10 {
		t.Errorf("stream relayed wrong:\n%s", got)
	}
	if string(log.bodies[0]) != body {
		t.Errorf("upstream got %s, want the agent's bytes", log.bodies[0])
	}
	for _, evs := range readLedger(t, dir) {
		// input = 10 + 500 cache reads + 20 cache writes; the last
		// cumulative output count.
		if diff := cmp.Diff([]map[string]any{usageMap(530, 42, nil, 500)}, callUsages(evs)); diff != "" {
			t.Errorf("usage (-want +got):\n%s", diff)
		}
		if evs[1]["system"] != "sys" || evs[1]["complete"] != true {
			t.Errorf("call event %v", evs[1])
		}
	}
}

func TestResponsesStreamUsage(t *testing.T) {
	dir := t.TempDir()
	_, url := startGuard(t, Config{Ledger: dir}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		sse(w,
			"event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\",\"output\":[]}}\n\n",
			"event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"item\":{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"call_1\",\"name\":\"shell\",\"arguments\":\"{\\\"command\\\":[\\\"ls\\\"]}\"}}\n\n",
			"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"status\":\"completed\",\"output\":[{\"type\":\"reasoning\",\"id\":\"rs_1\"},{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"call_1\",\"name\":\"shell\",\"arguments\":\"{\\\"command\\\":[\\\"ls\\\"]}\"}],\"usage\":{\"input_tokens\":300,\"input_tokens_details\":{\"cached_tokens\":256},\"output_tokens\":80,\"output_tokens_details\":{\"reasoning_tokens\":64},\"total_tokens\":380}}}\n\n")
	}))
	body := `{"model":"gpt","stream":true,"instructions":"be brief","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"list"}]}]}`
	_, got := post(t, url+"/v1/responses", body, nil)
	if bytes.Count(got, []byte("event: ")) != 3 {
		t.Errorf("stream relayed wrong:\n%s", got)
	}
	for _, evs := range readLedger(t, dir) {
		if diff := cmp.Diff([]map[string]any{usageMap(300, 80, 64.0, 256)}, callUsages(evs)); diff != "" {
			t.Errorf("usage (-want +got):\n%s", diff)
		}
	}
}

func TestUpstreamErrorsPassThrough(t *testing.T) {
	for _, code := range []int{429, 500} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			errBody := fmt.Sprintf(`{"error":{"message":"upstream says %d","type":"x"}}`, code)
			_, url := startGuard(t, Config{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "7")
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(code)
				io.WriteString(w, errBody)
			}))
			resp, got := post(t, url+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`, nil)
			if resp.StatusCode != code || string(got) != errBody || resp.Header.Get("Retry-After") != "7" {
				t.Errorf("got %d %s (Retry-After %q), want %d %s (7)", resp.StatusCode, got, resp.Header.Get("Retry-After"), code, errBody)
			}
		})
	}
}

func TestModelsAndMalformedPassThrough(t *testing.T) {
	var log upstreamLog
	_, url := startGuard(t, Config{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := log.add(r)
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet {
			io.WriteString(w, `{"object":"list","data":[{"id":"m"}]}`)
			return
		}
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"error":"not json: %d bytes"}`, len(b))
	}))
	resp, err := http.Get(url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != `{"object":"list","data":[{"id":"m"}]}` {
		t.Errorf("models: %s", b)
	}
	r2, got := post(t, url+"/v1/chat/completions", `{not json`, nil)
	if r2.StatusCode != 400 || string(got) != `{"error":"not json: 9 bytes"}` || string(log.bodies[1]) != `{not json` {
		t.Errorf("malformed: %d %s, upstream got %q", r2.StatusCode, got, log.bodies[1])
	}
}

// estimatorServer is a loopback OpenAI-compatible estimator answering
// answer(n) to its n-th request (from 1).
func estimatorServer(t *testing.T, answer func(n int) string) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		k := int(n.Add(1))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"e","model":"est","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":700,"completion_tokens":20}}`, answer(k))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func estimatorFor(url string) Estimator {
	return NewEstimator(&prediction.OpenAI{BaseURL: url, Model: "est"}, prediction.Retry{Attempts: 2, Backoff: time.Millisecond})
}

// toolTurnUpstream answers each chat request with a tool call whose id
// is unique to the request, and usage growing with the history.
func toolTurnUpstream(log *upstreamLog) http.Handler {
	var n atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := log.add(r)
		var req chatRequest
		json.Unmarshal(body, &req)
		k := n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c%d","choices":[{"index":0,"message":{"role":"assistant","content":"step","tool_calls":[{"id":"call_%d","type":"function","function":{"name":"bash","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":%d,"completion_tokens":10}}`,
			k, k, 100*len(req.Messages))
	})
}

// agentTurn is the chat request after history: the history, the last
// reply's message and a tool result.
func agentNext(t *testing.T, history []json.RawMessage, reply []byte) []json.RawMessage {
	var resp chatResponse
	if err := json.Unmarshal(reply, &resp); err != nil {
		t.Fatalf("reply %s: %v", reply, err)
	}
	msg, _ := json.Marshal(resp.Choices[0].Message)
	id := resp.Choices[0].Message.ToolCalls[0].ID
	return append(history, msg, json.RawMessage(fmt.Sprintf(`{"role":"tool","tool_call_id":%q,"content":"out"}`, id)))
}

func chatBody(history []json.RawMessage) string {
	b, _ := json.Marshal(map[string]any{"model": "m", "messages": history})
	return string(b)
}

func TestStopOnImpossible(t *testing.T) {
	est, asked := estimatorServer(t, func(n int) string {
		if n >= 2 {
			return "<think>no</think><answer>impossible</answer>"
		}
		return "<answer>[100, 200]</answer>"
	})
	for _, mode := range []StopAs{Message, ContextLimit} {
		t.Run(mode.String(), func(t *testing.T) {
			asked.Store(0)
			var log upstreamLog
			dir := t.TempDir()
			_, url := startGuard(t, Config{Ledger: dir, Estimator: estimatorFor(est.URL), Budget: 5000, Policy: Stop, StopAs: mode, Wait: true},
				toolTurnUpstream(&log))
			history := []json.RawMessage{json.RawMessage(`{"role":"user","content":"fix it"}`)}
			var resp *http.Response
			var got []byte
			for turn := 1; turn <= 4; turn++ {
				resp, got = post(t, url+"/v1/chat/completions", chatBody(history), nil)
				if turn <= 2 {
					history = agentNext(t, history, got)
				}
			}
			if log.n() != 2 {
				t.Errorf("upstream saw %d calls, want 2", log.n())
			}
			if resp.Header.Get("X-Bagen-Guard") != "stop" {
				t.Errorf("X-Bagen-Guard %q, want stop", resp.Header.Get("X-Bagen-Guard"))
			}
			want := "bagen-data guard stopped this session after turn 2: the estimate is that the task cannot be finished within the budget of 5000 tokens (310 spent)"
			switch mode {
			case Message:
				var r chatResponse
				json.Unmarshal(got, &r)
				if resp.StatusCode != 200 || partsText(r.Choices[0].Message.Content) != want || len(r.Choices[0].Message.ToolCalls) != 0 {
					t.Errorf("got %d %s, want a final message saying %q", resp.StatusCode, got, want)
				}
			case ContextLimit:
				wantBody := `{"error":{"code":"context_length_exceeded","message":"This model's maximum context length is exceeded: ` + want + `","param":"messages","type":"invalid_request_error"}}`
				if resp.StatusCode != 400 || string(got) != wantBody {
					t.Errorf("got %d %s, want 400 %s", resp.StatusCode, got, wantBody)
				}
			}
			for _, evs := range readLedger(t, dir) {
				var kinds []string
				for _, e := range evs {
					kinds = append(kinds, e["event"].(string))
				}
				wantKinds := []string{"session", "call", "estimate", "forecast", "call", "estimate", "stop", "call", "call"}
				if diff := cmp.Diff(wantKinds, kinds); diff != "" {
					t.Errorf("ledger events (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestContextErrorPerFormat(t *testing.T) {
	const text = "bagen-data guard stopped this session (test)"
	tests := []struct {
		codec Codec
		want  string
	}{
		{Chat{}, `{"error":{"code":"context_length_exceeded","message":"This model's maximum context length is exceeded: bagen-data guard stopped this session (test)","param":"messages","type":"invalid_request_error"}}`},
		{Responses{}, `{"error":{"code":"context_length_exceeded","message":"This model's maximum context length is exceeded: bagen-data guard stopped this session (test)","param":"messages","type":"invalid_request_error"}}`},
		{Anthropic{}, `{"error":{"message":"prompt is too long: bagen-data guard stopped this session (test)","type":"invalid_request_error"},"type":"error"}`},
	}
	for _, tt := range tests {
		if got := string(tt.codec.ContextError(text)); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.codec.Name(), got, tt.want)
		}
		if bytes.Contains(bytes.ToLower(tt.codec.ContextError(text)), []byte("rate limit")) {
			t.Errorf("%s: error mentions rate limits", tt.codec.Name())
		}
	}
}

// TestAnswerStreams checks that a guard answer on a stream reads back, with
// the format's own stream reader, as a complete reply saying the text.
func TestAnswerStreams(t *testing.T) {
	for _, c := range []Codec{Chat{}, Responses{}, Anthropic{}} {
		t.Run(c.Name(), func(t *testing.T) {
			req := &Request{Model: "m", Stream: true}
			ctype, body := c.Answer(req, "stop now")
			if ctype != "text/event-stream" {
				t.Fatalf("content type %s", ctype)
			}
			st := c.Stream(req)
			r := &sseReader{src: bytes.NewReader(body), obs: st, closer: io.NopCloser(nil)}
			relayed, _ := io.ReadAll(r)
			if !bytes.Equal(relayed, body) {
				t.Errorf("relayed %q, want %q", relayed, body)
			}
			got := st.Reply()
			want := []rollout.Message{{Role: "assistant", Content: "stop now"}}
			if diff := cmp.Diff(want, got.Items); diff != "" || !got.Complete {
				t.Errorf("reply complete=%v (-want +got):\n%s", got.Complete, diff)
			}
			req.Stream = false
			_, whole := c.Answer(req, "stop now")
			if diff := cmp.Diff(want, c.Reply(whole).Items); diff != "" {
				t.Errorf("non-stream (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEstimatorDownFailsOpen(t *testing.T) {
	var log upstreamLog
	dir := t.TempDir()
	_, url := startGuard(t, Config{Ledger: dir, Estimator: estimatorFor("http://127.0.0.1:1"), Budget: 5000, Policy: Stop, Wait: true},
		toolTurnUpstream(&log))
	history := []json.RawMessage{json.RawMessage(`{"role":"user","content":"fix it"}`)}
	for turn := 1; turn <= 3; turn++ {
		resp, got := post(t, url+"/v1/chat/completions", chatBody(history), nil)
		if resp.StatusCode != 200 || resp.Header.Get("X-Bagen-Guard") != "pass" {
			t.Fatalf("turn %d: %d %s", turn, resp.StatusCode, resp.Header.Get("X-Bagen-Guard"))
		}
		history = agentNext(t, history, got)
	}
	if log.n() != 3 {
		t.Errorf("upstream saw %d calls, want 3", log.n())
	}
	// The third estimate starts once the third answer is through, and its
	// failure and its verdict are counted one after the other: wait for
	// all of them.
	wants := []string{"bagen_guard_estimator_failures_total 3", `bagen_guard_estimates_total{verdict="unestimated"} 3`, `bagen_guard_calls_total{code="200",format="chat"} 3`}
	var m []byte
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		m = metricsText(t, url)
		all := true
		for _, want := range wants {
			all = all && bytes.Contains(m, []byte(want))
		}
		if all {
			break
		}
	}
	for _, want := range wants {
		if !bytes.Contains(m, []byte(want)) {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
}

// sameReplyModel is a deterministic model: the same history gets the
// same reply, ids included (a tool call call_<k> for a history of k
// messages, with 100·k prompt tokens), so only the guard's bookkeeping
// tells identical runs apart.
var sameReplyModel = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	json.NewDecoder(r.Body).Decode(&req)
	k := len(req.Messages)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"c","choices":[{"index":0,"message":{"role":"assistant","content":"step","tool_calls":[{"id":"call_%d","type":"function","function":{"name":"bash","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":%d,"completion_tokens":10}}`, k, 100*k)
})

// TestParallelIdenticalRuns runs 64 identical sessions of one client that
// sends no id, at once: each must stay its own session.
func TestParallelIdenticalRuns(t *testing.T) {
	dir := t.TempDir()
	_, url := startGuard(t, Config{Ledger: dir}, sameReplyModel)
	const runs, turns = 64, 4
	var wg sync.WaitGroup
	for i := 0; i < runs; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			history := []json.RawMessage{json.RawMessage(`{"role":"user","content":"same task"}`)}
			for turn := 0; turn < turns; turn++ {
				_, got := post(t, url+"/v1/chat/completions", chatBody(history), nil)
				history = agentNext(t, history, got)
			}
		}()
	}
	wg.Wait()
	evs := readLedger(t, dir)
	if len(evs) != runs {
		t.Fatalf("%d sessions, want %d", len(evs), runs)
	}
	for f, e := range evs {
		var ins []float64
		for _, u := range callUsages(e) {
			ins = append(ins, u["input"].(float64))
		}
		if diff := cmp.Diff([]float64{100, 300, 500, 700}, ins); diff != "" {
			t.Errorf("%s inputs (-want +got):\n%s", f, diff)
		}
	}
}

// TestLedgerReadsAsTrajectory converts a ledger the guard wrote.
func TestLedgerReadsAsTrajectory(t *testing.T) {
	est, _ := estimatorServer(t, func(n int) string {
		if n >= 2 {
			return "<answer>impossible</answer>"
		}
		return "<answer>[100, 200]</answer>"
	})
	var log upstreamLog
	dir := t.TempDir()
	_, url := startGuard(t, Config{Ledger: dir, Estimator: estimatorFor(est.URL), Budget: 5000, Policy: Stop, StopAs: Message, Wait: true},
		toolTurnUpstream(&log))
	history := []json.RawMessage{json.RawMessage(`{"role":"system","content":"you fix bugs"}`), json.RawMessage(`{"role":"user","content":"fix it"}`)}
	for turn := 1; turn <= 3; turn++ {
		_, got := post(t, url+"/v1/chat/completions", chatBody(history), nil)
		if turn <= 2 {
			history = agentNext(t, history, got)
		}
	}
	trajs := decodeLedger(t, dir)
	if len(trajs) != 1 {
		t.Fatalf("%d trajectories, want 1", len(trajs))
	}
	line, err := rollout.MarshalCanonical(trajs[0])
	if err != nil {
		t.Fatal(err)
	}
	id := trajs[0].ID
	call := `<tool_call>\n{\"name\": \"bash\", \"arguments\": {}}\n</tool_call>`
	want := `{"custom_id":"` + id + `","budget":5000,"messages":[{"role":"system","content":"you fix bugs"},{"role":"user","content":"fix it"},{"role":"assistant","content":"step\n` + call + `"},{"role":"user","content":"out"},{"role":"assistant","content":"step\n` + call + `"}],` +
		`"per_turn_api_tokens":[{"input":200,"output":10,"reasoning":null,"cached":0},{"input":400,"output":10,"reasoning":null,"cached":0}],"api_inputs":"request",` +
		`"metadata":{"success":false,"outcome_source":"none","guard":{"policy":"stop","budget":5000,"estimates":[` +
		`{"after_turn":1,"response":"<answer>[100, 200]</answer>","verdict":"interval","interval":[100,200],"estimator_input_tokens":700,"estimator_output_tokens":20,"latency_ms":LAT1},` +
		`{"after_turn":2,"response":"<answer>impossible</answer>","verdict":"impossible","interval":null,"estimator_input_tokens":700,"estimator_output_tokens":20,"latency_ms":LAT2}],"stopped_after_turn":2}}}`
	got := string(line)
	for _, e := range trajs[0].Extra.Guard.Estimates {
		got = strings.Replace(got, fmt.Sprintf(`"latency_ms":%s`, jsonNum(e.LatencyMS)), `"latency_ms":LAT`+fmt.Sprint(e.AfterTurn), 1)
	}
	if got != want {
		t.Errorf("canonical line\n got %s\nwant %s", got, want)
	}
	back, err := rollout.Decode(rollout.Record{Data: line, Pos: rollout.Position{File: "x", Line: 1, Index: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(trajs[0].Extra.Guard, back.Extra.Guard); diff != "" {
		t.Errorf("metadata.guard round trip (-want +got):\n%s", diff)
	}
}

// decodeLedger reads a ledger directory as convert does: one trajectory
// per session file.
func decodeLedger(t *testing.T, dir string) []rollout.Trajectory {
	t.Helper()
	srcs, err := rollout.Expand([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var trajs []rollout.Trajectory
	for _, src := range srcs {
		err := rollout.Scan(context.Background(), src, func(rec rollout.Record) error {
			tr, err := rollout.Decode(rec)
			trajs = append(trajs, tr)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return trajs
}

func jsonNum(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

func metricsText(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	m, _ := io.ReadAll(resp.Body)
	return m
}

// TestIdenticalRunFindsNoUnrecordedTurn: while a session's answered turn
// is still being counted, an identical run's next request (the same
// history, the same reply ids) cannot find that session: it continues
// its own, and each file holds its turns in order.
func TestIdenticalRunFindsNoUnrecordedTurn(t *testing.T) {
	dir := t.TempDir()
	_, url := startGuard(t, Config{Ledger: dir}, sameReplyModel)
	held, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	defer func(f func(*Session)) { beforeTurn = f }(beforeTurn)
	beforeTurn = func(*Session) {
		if first.CompareAndSwap(false, true) {
			close(held)
			<-release
		}
	}
	task := []json.RawMessage{json.RawMessage(`{"role":"user","content":"same task"}`)}
	done := make(chan struct{})
	go func() { // run A: its first turn is held as it is counted
		defer close(done)
		post(t, url+"/v1/chat/completions", chatBody(task), nil)
	}()
	<-held
	// Run B, identical: its first turn, then its second.
	_, got := post(t, url+"/v1/chat/completions", chatBody(task), nil)
	post(t, url+"/v1/chat/completions", chatBody(agentNext(t, task, got)), nil)
	close(release)
	<-done
	var files []string
	for _, e := range readLedger(t, dir) {
		var ins []float64
		for _, u := range callUsages(e) {
			ins = append(ins, u["input"].(float64))
		}
		files = append(files, fmt.Sprint(ins))
	}
	sort.Strings(files)
	if want := "[[100 300] [100]]"; fmt.Sprint(files) != want {
		t.Errorf("the files' inputs %v, want %s", files, want)
	}
}
