package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/prometheus/client_golang/prometheus"

	"bagen-data/grpo"
	"bagen-data/internal/httpd"
	"bagen-data/probes"
)

// testServer is a real server on a loopback port.
type testServer struct {
	url    string
	reg    *prometheus.Registry
	cancel context.CancelFunc
	done   chan error
}

func start(t testing.TB, cfg Config) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if cfg.Name == "" {
		cfg.Name = "head"
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &testServer{url: "http://" + ln.Addr().String(), reg: cfg.Registry, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- Serve(ctx, ln, cfg) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Error("server did not stop within 30s")
		}
	})
	return s
}

// testState is a random head over 64-dimensional embeddings (the tiny
// model's) in the default action space.
func testState() *grpo.State {
	rng := rand.New(rand.NewPCG(1, 2))
	return &grpo.State{Model: "tiny-qwen", Policy: grpo.NewHead(64+grpo.NumNumeric, 8, grpo.DefaultBins, len(grpo.DefaultWidths), rng)}
}

// estimator answers with testState's head over the Ollama at host.
func estimator(t testing.TB, host, model, cache string) *grpo.Estimator {
	t.Helper()
	u, err := url.Parse(host)
	if err != nil {
		t.Fatal(err)
	}
	enc := &grpo.Encoder{Client: api.NewClient(u, http.DefaultClient), Model: model, Cache: cache, Retries: -1}
	est, err := grpo.NewEstimator(enc, testState(), 7)
	if err != nil {
		t.Fatal(err)
	}
	return est
}

// closedHost is an address nothing listens on.
func closedHost(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// probeMessages is a Sokoban probe after two turns, as build renders it.
func probeMessages() []map[string]string {
	turns := []probes.TurnTokens{{In: 120, Out: 30}, {In: 80, Out: 25}}
	return []map[string]string{
		{"role": "system", "content": probes.SokobanSystem},
		{"role": "user", "content": "Grid 0"},
		{"role": "assistant", "content": "<answer>Up</answer>"},
		{"role": "user", "content": "Grid 1"},
		{"role": "assistant", "content": "<answer>Left</answer>"},
		{"role": "user", "content": probes.Tasks["sokoban"].ProbeText(turns, 2, 2500, false)},
	}
}

func chatBody(model string, msgs any, extra string) string {
	b, _ := json.Marshal(msgs)
	return `{"model":` + quote(model) + `,"messages":` + string(b) + extra + `}`
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func do(t testing.TB, method, url, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Close {
		resp.Header.Set("Connection", "close") // net/http moves it to resp.Close
	}
	return resp.StatusCode, resp.Header, string(b)
}

// TestBadRequests pins the status and the whole OpenAI-shaped error of
// each kind of bad request. None reaches Ollama (there is none).
func TestBadRequests(t *testing.T) {
	s := start(t, Config{Estimator: estimator(t, closedHost(t), "tiny-qwen", ""), Limits: httpd.Limits{MaxBody: 4096}})
	chat := s.url + "/v1/chat/completions"
	msgs := probeMessages()
	large := chatBody("head", []map[string]string{{"role": "user", "content": strings.Repeat("x", 5000)}}, "")
	tests := []struct {
		name, method, url, body string
		code                    int
		want                    string
	}{
		{"not JSON", "POST", chat, `{"model":`, 400,
			`{"error":{"message":"body: want a JSON object: invalid JSON at byte 9: unexpected end of JSON input","type":"invalid_request_error","param":"body","code":null}}`},
		{"an array", "POST", chat, `[1]`, 400,
			`{"error":{"message":"body: want a JSON object: got an array","type":"invalid_request_error","param":"body","code":null}}`},
		{"null", "POST", chat, `null`, 400,
			`{"error":{"message":"body: want a JSON object: got null","type":"invalid_request_error","param":"body","code":null}}`},
		{"empty", "POST", chat, ``, 400,
			`{"error":{"message":"body: want a JSON object: empty body","type":"invalid_request_error","param":"body","code":null}}`},
		{"no model", "POST", chat, `{"messages":[{"role":"user","content":"x"}]}`, 400,
			`{"error":{"message":"model: required","type":"invalid_request_error","param":"model","code":null}}`},
		{"model a number", "POST", chat, `{"model":7,"messages":[]}`, 400,
			`{"error":{"message":"model: want a string, got the number 7","type":"invalid_request_error","param":"model","code":null}}`},
		{"no messages", "POST", chat, `{"model":"head"}`, 400,
			`{"error":{"message":"messages: required","type":"invalid_request_error","param":"messages","code":null}}`},
		{"messages null", "POST", chat, `{"model":"head","messages":null}`, 400,
			`{"error":{"message":"messages: required","type":"invalid_request_error","param":"messages","code":null}}`},
		{"seed too large", "POST", chat, chatBody("head", msgs, `,"seed":1e30`), 400,
			`{"error":{"message":"seed: want a 64-bit integer, got the number 1e30","type":"invalid_request_error","param":"seed","code":null}}`},
		{"messages an object", "POST", chat, `{"model":"head","messages":{}}`, 400,
			`{"error":{"message":"messages: want an array, got an object","type":"invalid_request_error","param":"messages","code":null}}`},
		{"messages empty", "POST", chat, `{"model":"head","messages":[]}`, 400,
			`{"error":{"message":"messages: empty","type":"invalid_request_error","param":"messages","code":null}}`},
		{"message a string", "POST", chat, `{"model":"head","messages":["hi"]}`, 400,
			`{"error":{"message":"messages[0]: want an object, got a string","type":"invalid_request_error","param":"messages[0]","code":null}}`},
		{"role a number", "POST", chat, `{"model":"head","messages":[{"role":1,"content":"x"}]}`, 400,
			`{"error":{"message":"messages[0].role: want string, got number","type":"invalid_request_error","param":"messages[0].role","code":null}}`},
		{"role tool", "POST", chat, `{"model":"head","messages":[{"role":"tool","content":"x"}]}`, 400,
			`{"error":{"message":"messages[0].role: want \"system\", \"user\" or \"assistant\", got \"tool\"","type":"invalid_request_error","param":"messages[0].role","code":null}}`},
		{"content a number", "POST", chat, `{"model":"head","messages":[{"role":"user","content":5}]}`, 400,
			`{"error":{"message":"messages[0].content: want a string or an array of text parts, got the number 5","type":"invalid_request_error","param":"messages[0].content","code":null}}`},
		{"content missing", "POST", chat, `{"model":"head","messages":[{"role":"user"}]}`, 400,
			`{"error":{"message":"messages[0].content: required","type":"invalid_request_error","param":"messages[0].content","code":null}}`},
		{"image part", "POST", chat, `{"model":"head","messages":[{"role":"user","content":[{"type":"image_url","image_url":{}}]}]}`, 400,
			`{"error":{"message":"messages[0].content[0].type: want \"text\": the estimator reads text only","type":"invalid_request_error","param":"messages[0].content[0].type","code":null}}`},
		{"temperature a string", "POST", chat, chatBody("head", msgs, `,"temperature":"hot"`), 400,
			`{"error":{"message":"temperature: want a number, got a string","type":"invalid_request_error","param":"temperature","code":null}}`},
		{"temperature 3", "POST", chat, chatBody("head", msgs, `,"temperature":3`), 400,
			`{"error":{"message":"temperature: want 0 to 2, got 3","type":"invalid_request_error","param":"temperature","code":null}}`},
		{"seed a float", "POST", chat, chatBody("head", msgs, `,"seed":1.5`), 400,
			`{"error":{"message":"seed: want a 64-bit integer, got a number","type":"invalid_request_error","param":"seed","code":null}}`},
		{"stream a string", "POST", chat, chatBody("head", msgs, `,"stream":"yes"`), 400,
			`{"error":{"message":"stream: want true or false, got a string","type":"invalid_request_error","param":"stream","code":null}}`},
		{"n 2", "POST", chat, chatBody("head", msgs, `,"n":2`), 400,
			`{"error":{"message":"n: want 1 (one answer per request), got 2","type":"invalid_request_error","param":"n","code":null}}`},
		{"another model", "POST", chat, chatBody("gpt-4o", msgs, ""), 404,
			`{"error":{"message":"model not found: \"gpt-4o\"; this server answers as \"head\"","type":"invalid_request_error","param":"model","code":"model_not_found"}}`},
		{"not a probe", "POST", chat, chatBody("head", []map[string]string{{"role": "user", "content": "How many tokens will I need?"}}, ""), 400,
			`{"error":{"message":"messages[0].content: not a budget probe of a known task: no estimation prompt of searchr1, sokoban, swebench, warehouse ends the message (want \"Based on the provided\" … filled by the renderer)","type":"invalid_request_error","param":"messages[0].content","code":"not_a_budget_probe"}}`},
		{"ends with the assistant", "POST", chat, chatBody("head", msgs[:5], ""), 400,
			`{"error":{"message":"messages[4].role: not a budget probe of a known task: the last message must be the user's estimation prompt, got role \"assistant\"","type":"invalid_request_error","param":"messages[4].role","code":"not_a_budget_probe"}}`},
		{"too large", "POST", chat, large, 413,
			`{"error":{"message":"request body too large: ` + strconv.Itoa(len(large)) + ` bytes, limit 4096","type":"invalid_request_error","param":null,"code":null}}`},
		{"GET chat", "GET", chat, "", 405,
			`{"error":{"message":"method not allowed: GET /v1/chat/completions, want POST","type":"invalid_request_error","param":null,"code":null}}`},
		{"no such path", "GET", s.url + "/v1/completions", "", 404,
			`{"error":{"message":"not found: no route /v1/completions","type":"not_found_error","param":null,"code":null}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, hdr, body := do(t, tt.method, tt.url, tt.body)
			if code != tt.code || body != tt.want || hdr.Get("Content-Type") != "application/json" {
				t.Errorf("got %d %s %s\nwant %d %s", code, hdr.Get("Content-Type"), body, tt.code, tt.want)
			}
		})
	}
}

// TestOllamaUnreachable: a probe the server cannot embed gets 503 with the
// reason, which clients retry.
func TestOllamaUnreachable(t *testing.T) {
	host := closedHost(t)
	s := start(t, Config{Estimator: estimator(t, host, "tiny-qwen", "")})
	code, _, body := do(t, "POST", s.url+"/v1/chat/completions", chatBody("head", probeMessages(), ""))
	var e struct {
		Error struct{ Message, Type, Code string }
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatal(err)
	}
	if code != 503 || e.Error.Code != "ollama_unavailable" || e.Error.Type != "server_error" ||
		!strings.HasPrefix(e.Error.Message, "ollama unavailable: show tiny-qwen: ") || !strings.Contains(e.Error.Message, "connection refused") {
		t.Errorf("got %d %s, want 503 ollama_unavailable naming the refused connection", code, body)
	}
}

func TestModelsHealthMetrics(t *testing.T) {
	created := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	s := start(t, Config{Estimator: estimator(t, closedHost(t), "tiny-qwen", ""), Name: "my-head", Created: created})
	code, _, body := do(t, "GET", s.url+"/v1/models", "")
	if want := `{"object":"list","data":[{"id":"my-head","object":"model","created":1795593600,"owned_by":"bagen-data"}]}`; code != 200 || body != want {
		t.Errorf("/v1/models: %d %s, want 200 %s", code, body, want)
	}
	if code, _, body := do(t, "GET", s.url+"/healthz", ""); code != 200 || body != `{"status":"ok"}` {
		t.Errorf("/healthz: %d %s", code, body)
	}
	code, hdr, body := do(t, "GET", s.url+"/metrics", "")
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") ||
		!strings.Contains(body, `bagen_grpo_requests_total{code="200",route="models"} 1`) ||
		!strings.Contains(body, `bagen_grpo_requests_total{code="200",route="healthz"} 1`) {
		t.Errorf("/metrics: %d %s\n%s", code, hdr.Get("Content-Type"), body)
	}
}

// TestProtocolErrorShape: a request net/http rejects before routing gets
// the OpenAI error shape too, counted under route="protocol".
func TestProtocolErrorShape(t *testing.T) {
	s := start(t, Config{Estimator: estimator(t, closedHost(t), "tiny-qwen", "")})
	c, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("GARBAGE\r\n\r\n"))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	want := `{"error":{"message":"bad request: malformed request line or header","type":"invalid_request_error","param":null,"code":null}}`
	if resp.StatusCode != 400 || string(b) != want {
		t.Errorf("got %d %s, want 400 %s", resp.StatusCode, b, want)
	}
}

// TestDrain: once the context is cancelled /healthz answers 503 during the
// grace, chat requests are still answered, and Serve returns nil.
func TestDrain(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	cfg := Config{Estimator: estimator(t, closedHost(t), "tiny-qwen", ""), Name: "head", Limits: httpd.Limits{DrainGrace: 300 * time.Millisecond}}
	go func() { done <- Serve(ctx, ln, cfg) }()
	u := "http://" + ln.Addr().String()
	if code, _, _ := do(t, "GET", u+"/healthz", ""); code != 200 {
		t.Fatalf("/healthz before the drain: %d", code)
	}
	cancel()
	time.Sleep(50 * time.Millisecond)
	code, hdr, body := do(t, "GET", u+"/healthz", "")
	if want := `{"error":{"message":"draining","type":"server_error","param":null,"code":null}}`; code != 503 || body != want || hdr.Get("Connection") != "close" {
		t.Errorf("/healthz while draining: %d %s (Connection %q), want 503 %s and Connection: close", code, body, hdr.Get("Connection"), want)
	}
	if code, _, _ := do(t, "GET", u+"/v1/models", ""); code != 200 {
		t.Errorf("/v1/models while draining: %d, want 200", code)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return")
	}
}

func TestConfigValidate(t *testing.T) {
	err := Config{Limits: httpd.Limits{MaxBody: -1, DrainGrace: time.Minute}}.Validate()
	want := "invalid server config: Estimator: none; Name: empty; MaxBody: -1 is negative; DrainGrace: 1m0s exceeds DrainTimeout 25s"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// FuzzDecodeChat: any body decodes or fails with a *FieldError naming a
// field; nothing panics.
func FuzzDecodeChat(f *testing.F) {
	f.Add(chatBody("head", probeMessages(), `,"temperature":0.5,"seed":-3,"stream":true,"stream_options":{"include_usage":true}`))
	f.Add(`{"model":"head","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`)
	f.Add(`{"model":"head","messages":[{"role":"user","content":null}],"n":1}`)
	f.Add(`[]`)
	f.Add(`{"model":"head","messages":null,"seed":1e30}`)
	f.Fuzz(func(t *testing.T, body string) {
		req, err := decodeChat([]byte(body))
		if err != nil {
			fe, ok := err.(*FieldError)
			if !ok || fe.Path == "" {
				t.Fatalf("%q: %v is not a *FieldError naming a field", body, err)
			}
			return
		}
		if len(req.Messages) == 0 || req.Temperature < 0 || req.Temperature > MaxTemperature {
			t.Fatalf("%q: decoded %+v", body, req)
		}
	})
}

// TestModelsListAccounting: /v1/models says which token accounting the
// head learned on, for a client to compare with its own.
func TestModelsListAccounting(t *testing.T) {
	st := testState()
	st.Accounting = probes.AccountingReplay
	u, _ := url.Parse(closedHost(t))
	est, err := grpo.NewEstimator(&grpo.Encoder{Client: api.NewClient(u, http.DefaultClient), Model: "tiny-qwen", Retries: -1}, st, 7)
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, Config{Estimator: est, Name: "my-head"})
	code, _, body := do(t, "GET", s.url+"/v1/models", "")
	if want := `{"object":"list","data":[{"id":"my-head","object":"model","created":0,"owned_by":"bagen-data","accounting":"replay"}]}`; code != 200 || body != want {
		t.Errorf("/v1/models: %d %s, want 200 %s", code, body, want)
	}
}
