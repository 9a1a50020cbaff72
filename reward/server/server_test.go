package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"bagen-data/internal/httpd"
	"bagen-data/reward"
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
	ctx, cancel := context.WithCancel(context.Background())
	s := &testServer{url: "http://" + ln.Addr().String(), reg: cfg.Registry, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- Serve(ctx, ln, cfg) }()
	t.Cleanup(func() { s.stop(t) })
	return s
}

// stop cancels the server's context and returns Serve's result.
func (s *testServer) stop(t testing.TB) error {
	t.Helper()
	s.cancel()
	select {
	case err, ok := <-s.done:
		if ok {
			close(s.done)
		}
		return err
	case <-time.After(60 * time.Second):
		t.Fatal("server did not stop within 60s")
		return nil
	}
}

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("POST %s: Content-Type %q, want application/json", url, ct)
	}
	return resp.StatusCode, string(b)
}

func promptFixture(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/prompt.txt")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func jsonList(ss ...string) string {
	b, _ := json.Marshal(ss)
	return string(b)
}

// TestOpenRLHF sends what OpenRLHF sends: query = prompt + response with
// the chat template's special tokens. The probe prompt itself contains
// <answer>[est_low, est_high]</answer>, so scoring the whole query would
// read the instructions as the answer and give 0.
func TestOpenRLHF(t *testing.T) {
	s := start(t, Config{})
	prompt := promptFixture(t)
	if !strings.Contains(prompt, "<answer>[est_low, est_high]</answer>") {
		t.Fatal("fixture prompt lacks the output-format example")
	}
	responses := []string{
		"<think>about 150 more</think><answer>[140, 160]</answer>",
		"<answer>impossible</answer>",
		"<answer>[100, 200]</answer>",
		"no answer",
	}
	labels := []string{
		`{"remaining_tokens":150,"is_possible":true,"ground_truth":"[135, 165]"}`,
		`{"remaining_tokens":0,"is_possible":false,"ground_truth":"impossible"}`,
		"150",
		"impossible",
	}
	var queries, prompts []string
	for _, r := range responses {
		queries = append(queries, prompt+r+"<|im_end|>\n<|endoftext|>")
		prompts = append(prompts, prompt)
	}
	want := `{"rewards":[1.56,0.2,0.6000000000000001,0],"scores":[1.56,0.2,0.6000000000000001,0],` +
		`"extra_logs":{"covered":[1,0,1,0],"interval":[1,0,1,0],"pred_class":[1,2,1,0],"truth_possible":[1,0,1,0]}}`
	tests := []struct {
		name, body string
	}{
		{"with prompts", `{"query":` + jsonList(queries...) + `,"prompts":` + jsonList(prompts...) + `,"labels":` + jsonList(labels...) + `}`},
		{"without prompts: after the last assistant marker", `{"query":` + jsonList(queries...) + `,"labels":` + jsonList(labels...) + `}`},
		{"null prompts", `{"prompts":null,"query":` + jsonList(queries...) + `,"labels":` + jsonList(labels...) + `}`},
		{"prompts that are not prefixes fall back", `{"query":` + jsonList(queries...) + `,"prompts":` + jsonList("x", "y", "z", "w") + `,"labels":` + jsonList(labels...) + `,"extra":{"k":[1]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := post(t, s.url+"/get_reward", tt.body)
			if code != 200 || body != want {
				t.Fatalf("POST /get_reward = %d %s\nwant 200 %s", code, body, want)
			}
		})
	}
	t.Run("a bare response query", func(t *testing.T) {
		code, body := post(t, s.url+"/get_reward", `{"query":["<answer>[150, 150]</answer>"],"labels":["150"]}`)
		want := `{"rewards":[1.8],"scores":[1.8],"extra_logs":{"covered":[1],"interval":[1],"pred_class":[1],"truth_possible":[1]}}`
		if code != 200 || body != want {
			t.Fatalf("POST /get_reward = %d %s, want 200 %s", code, body, want)
		}
	})
}

func TestSlime(t *testing.T) {
	s := start(t, Config{})
	prompt := promptFixture(t)
	tests := []struct {
		name, response, label, want string
	}{
		{"interval", "<answer>[140, 160]</answer><|im_end|>", `{"remaining_tokens":150,"is_possible":true,"ground_truth":"[135, 165]"}`, "1.56"},
		{"impossible", "<answer>impossible</answer>", "impossible", "0.2"},
		{"scalar", "<answer>150</answer>", "150", "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"prompt":` + jsonString(prompt) + `,"response":` + jsonString(tt.response) + `,"label":` + jsonString(tt.label) + `,"metadata":{"a":1}}`
			code, got := post(t, s.url+"/slime", body)
			if code != 200 || got != tt.want {
				t.Fatalf("POST /slime = %d %s, want 200 %s", code, got, tt.want)
			}
		})
	}
}

func TestNative(t *testing.T) {
	s := start(t, Config{})
	body := `{"items":[
		{"response":"<answer>[100, 150]</answer>","remaining_tokens":150,"is_possible":true},
		{"response":"\u003canswer\u003eimpossible\u003c/answer\u003e","remaining_tokens":0,"is_possible":false},
		{"response":"<answer>150</answer>","label":"150"},
		{"response":"<answer>time_weeks:[2, 4], warehouse_item_weeks:[100, 150], cumulative_cost_usd:[1000, 2000]</answer>","is_possible":true,"time_weeks":3,"warehouse_item_weeks":120,"cumulative_cost_usd":1500}
	]}`
	want := `{"rewards":[1.2000000000000002,0.2,0,0.75],"details":[` +
		`{"reward":1.2000000000000002,"class":"possible","interval":true,"covered":true,"width":50,"rel_width":0.3333333333333333,"mid_rel_err":0.16666666666666666},` +
		`{"reward":0.2,"class":"impossible","interval":false,"covered":false,"width":0,"rel_width":null,"mid_rel_err":null},` +
		`{"reward":0,"class":"possible","interval":false,"covered":false,"width":0,"rel_width":null,"mid_rel_err":null},` +
		`{"reward":0.75,"class":"possible","dims":{` +
		`"time_weeks":{"score":0.33333333333333337,"interval":true,"covered":true,"width":2,"rel_width":0.6666666666666666,"mid_rel_err":0},` +
		`"warehouse_item_weeks":{"score":0.5833333333333333,"interval":true,"covered":true,"width":50,"rel_width":0.4166666666666667,"mid_rel_err":0.041666666666666664},` +
		`"cumulative_cost_usd":{"score":0.33333333333333337,"interval":true,"covered":true,"width":1000,"rel_width":0.6666666666666666,"mid_rel_err":0}}}]}`
	code, got := post(t, s.url+"/v1/rewards", body)
	if code != 200 || got != want {
		t.Fatalf("POST /v1/rewards = %d\n%s\nwant 200\n%s", code, got, want)
	}
	var decoded struct{ Rewards []float64 }
	if err := json.Unmarshal([]byte(got), &decoded); err != nil || len(decoded.Rewards) != 4 {
		t.Fatalf("response is not valid JSON with 4 rewards: %v", err)
	}
}

// The flags that make each trainer send the label column, as the server
// names them.
const (
	openRLHFHint = "start OpenRLHF with --data.label_key label (v0.10.2 and later; --label_key label before) so that it sends the label column"
	slimeHint    = "start slime with --label-key label (and --rm-type remote_rm) so that it sends the label column"
)

// wantEndpoints is the endpoint list a 404 answers with, URLs on host.
func wantEndpoints(host string) string {
	return "POST /get_reward (OpenRLHF v0.10.2 and later: --reward.remote_url http://" + host + "/get_reward --data.label_key label; " +
		"before v0.10.2: --remote_rm_url http://" + host + "/get_reward --label_key label); " +
		"POST /slime (slime: --rm-type remote_rm --rm-url http://" + host + "/slime --label-key label); " +
		"POST /v1/rewards (verl and TRL: examples/verl/bagen_reward.py and examples/trl/bagen_reward.py with BAGEN_REWARD_URL=http://" + host + "); " +
		"GET /healthz (readiness); GET /metrics (Prometheus)"
}

// TestBadRequests checks that every kind of bad input gets its status and
// an {"error": …} naming the field and index, and that the server keeps
// serving afterwards.
func TestBadRequests(t *testing.T) {
	s := start(t, Config{Limits: httpd.Limits{MaxBody: 1024}})
	tests := []struct {
		name, method, path, body string
		code                     int
		err                      string
	}{
		{"invalid JSON", "POST", "/get_reward", `{"query": [`, 400, "query: offset 11: unexpected end of input"},
		{"not an object", "POST", "/get_reward", `[1]`, 400, "body: offset 0: want object, got array"},
		{"query item not a string", "POST", "/get_reward", `{"query":["a",5],"labels":["1","2"]}`, 400, "query[1]: offset 14: want string, got number"},
		{"labels not a list", "POST", "/get_reward", `{"query":["a"],"labels":"1"}`, 400, "labels: offset 24: want array, got string"},
		{"unequal lengths", "POST", "/get_reward", `{"query":["a","b"],"labels":["1"]}`, 400, "labels: has 1 items, query has 2"},
		{"unequal prompts", "POST", "/get_reward", `{"query":["a"],"prompts":["p","q"],"labels":["1"]}`, 400, "prompts: has 2 items, query has 1"},
		{"unreadable label", "POST", "/get_reward", `{"query":["a","b"],"labels":["1","many"]}`, 400, `labels[1]: invalid label: want a JSON object, "impossible" or a non-negative integer, got "many"`},
		{"label missing a field", "POST", "/get_reward", `{"query":["a"],"labels":["{\"remaining_tokens\":3}"]}`, 400, "labels[0]: invalid label: is_possible: missing"},
		{"empty batch", "POST", "/get_reward", `{"query":[],"labels":[]}`, 400, "query: empty batch"},
		{"missing labels", "POST", "/get_reward", `{"query":["a"]}`, 400, "labels: missing; " + openRLHFHint},
		{"empty labels (OpenRLHF without --data.label_key)", "POST", "/get_reward", `{"query":["a","b"],"prompts":["p","q"],"labels":["",""]}`, 400, "labels[0]: empty; " + openRLHFHint},
		{"missing query", "POST", "/get_reward", `{"labels":["1"]}`, 400, "query: missing"},
		{"trailing garbage", "POST", "/get_reward", `{"query":["a"],"labels":["1"]}}`, 400, "body: not valid JSON: offset 31: invalid character '}' after top-level value"},
		{"not JSON", "POST", "/get_reward", `hello`, 400, "body: not valid JSON: offset 1: invalid character 'h' looking for beginning of value"},
		{"empty body", "POST", "/v1/rewards", ``, 400, "body: not valid JSON: offset 0: unexpected end of JSON input"},
		{"slime not JSON", "POST", "/slime", `nul`, 400, "body: not valid JSON: offset 3: unexpected end of input"},
		{"slime missing label", "POST", "/slime", `{"prompt":"p","response":"r"}`, 400, "label: missing, null or empty; " + slimeHint},
		{"slime null label (slime without --label-key)", "POST", "/slime", `{"prompt":"p","response":"r","label":null}`, 400, "label: missing, null or empty; " + slimeHint},
		{"slime empty label", "POST", "/slime", `{"prompt":"p","response":"r","label":""}`, 400, "label: missing, null or empty; " + slimeHint},
		{"slime label wrong type", "POST", "/slime", `{"response":"r","label":150}`, 400, "label: offset 24: want string, got number"},
		{"slime bad label", "POST", "/slime", `{"response":"r","label":"-3"}`, 400, `label: invalid label: want a JSON object, "impossible" or a non-negative integer, got "-3"`},
		{"native missing remaining", "POST", "/v1/rewards", `{"items":[{"response":"r","is_possible":false},{"response":"r","is_possible":true}]}`, 400, "items[1].remaining_tokens: missing"},
		{"native wrong type", "POST", "/v1/rewards", `{"items":[{"response":"r","is_possible":"yes"}]}`, 400, "items[0].is_possible: offset 40: want boolean, got string"},
		{"native fractional remaining", "POST", "/v1/rewards", `{"items":[{"response":"r","is_possible":true,"remaining_tokens":1.5}]}`, 400, "items[0].remaining_tokens: offset 64: want an integer, got 1.5"},
		{"native negative remaining", "POST", "/v1/rewards", `{"items":[{"response":"r","is_possible":true,"remaining_tokens":-1}]}`, 400, "items[0].remaining_tokens: want a non-negative integer, got -1"},
		{"native missing response", "POST", "/v1/rewards", `{"items":[{"is_possible":true}]}`, 400, "items[0].response: missing"},
		{"native item not an object", "POST", "/v1/rewards", `{"items":[{"response":"r","is_possible":false},3]}`, 400, "items[1]: offset 47: want object, got number"},
		{"native warehouse missing dim", "POST", "/v1/rewards", `{"items":[{"response":"r","is_possible":true,"time_weeks":1}]}`, 400, "items[0].warehouse_item_weeks: missing"},
		{"native bad label", "POST", "/v1/rewards", `{"items":[{"response":"r","label":"{}"}]}`, 400, "items[0].label: invalid label: is_possible: missing"},
		{"native empty", "POST", "/v1/rewards", `{"items":[]}`, 400, "items: empty batch"},
		{"native no items", "POST", "/v1/rewards", `{}`, 400, "items: missing"},
		{"oversize", "POST", "/v1/rewards", `{"items":[` + strings.Repeat(" ", 2048) + `]}`, 413, "request body too large: 2060 bytes, limit 1024"},
		{"GET on a POST route", "GET", "/get_reward", ``, 405, "method not allowed: GET /get_reward, want POST"},
		{"POST on healthz", "POST", "/healthz", `{}`, 405, "method not allowed: POST /healthz, want GET"},
		{"POST on metrics", "POST", "/metrics", `{}`, 405, "method not allowed: POST /metrics, want GET"},
		{"unknown path", "POST", "/nope", `{}`, 404, "not found: no route /nope; endpoints: " + wantEndpoints(strings.TrimPrefix(s.url, "http://"))},
		{"the base URL (slime's --rm-url help)", "POST", "/", `{"prompt":"p","response":"r","label":"impossible"}`, 404, "not found: no route /; endpoints: " + wantEndpoints(strings.TrimPrefix(s.url, "http://"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, s.url+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got struct{ Error string }
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
				t.Fatalf("body is not JSON: %v", err)
			}
			if resp.StatusCode != tt.code || got.Error != tt.err {
				t.Fatalf("%s %s = %d %q\nwant %d %q", tt.method, tt.path, resp.StatusCode, got.Error, tt.code, tt.err)
			}
			if tt.code == 405 && resp.Header.Get("Allow") == "" {
				t.Errorf("405 without an Allow header")
			}
		})
	}
	t.Run("oversize chunked body", func(t *testing.T) {
		// No Content-Length: the limit trips while reading.
		body := io.MultiReader(strings.NewReader(`{"items":[`), strings.NewReader(strings.Repeat(" ", 4096)), strings.NewReader(`]}`))
		resp, err := http.Post(s.url+"/v1/rewards", "application/json", body)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if want := `{"error":"request body too large: limit 1024 bytes"}`; resp.StatusCode != 413 || string(b) != want {
			t.Fatalf("chunked oversize = %d %s, want 413 %s", resp.StatusCode, b, want)
		}
	})
	resp, err := http.Get(s.url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != `{"status":"ok"}` {
		t.Fatalf("GET /healthz after bad requests = %d %s, want 200 {\"status\":\"ok\"}", resp.StatusCode, b)
	}
}

func TestMetrics(t *testing.T) {
	s := start(t, Config{})
	post(t, s.url+"/get_reward", `{"query":["<answer>[140, 160]</answer>","<answer>impossible</answer>"],"labels":["150","impossible"]}`)
	post(t, s.url+"/slime", `{"response":"<answer>[1, 2]</answer>","label":"impossible"}`)
	post(t, s.url+"/v1/rewards", `{"items":[]}`)
	resp, err := http.Get(s.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, line := range []string{
		`bagen_reward_requests_total{code="200",route="get_reward"} 1`,
		`bagen_reward_requests_total{code="200",route="slime"} 1`,
		`bagen_reward_requests_total{code="400",route="v1_rewards"} 1`,
		`bagen_reward_items_scored_total{route="get_reward"} 2`,
		`bagen_reward_items_scored_total{route="slime"} 1`,
		`bagen_reward_request_duration_seconds_count{route="get_reward"} 1`,
		`bagen_reward_reward_bucket{truth="possible",le="1.4"} 0`,
		`bagen_reward_reward_bucket{truth="possible",le="1.6"} 1`,
		`bagen_reward_reward_sum{truth="possible"} 1.56`,
		`bagen_reward_reward_count{truth="impossible"} 2`,
		`bagen_reward_reward_bucket{truth="impossible",le="0"} 1`,
		`bagen_reward_reward_bucket{truth="impossible",le="0.2"} 2`,
	} {
		if !strings.Contains(string(b), line+"\n") {
			t.Errorf("/metrics lacks %q", line)
		}
	}
}

func TestAccessLog(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == "time" || a.Key == "duration" || a.Key == "remote" {
				return slog.Attr{}
			}
			return a
		},
	}))
	s := start(t, Config{Log: log})
	post(t, s.url+"/get_reward", `{"query":["<answer>[140, 160]</answer>"],"labels":["150"]}`)
	post(t, s.url+"/slime", `{}`)
	if err := s.stop(t); err != nil {
		t.Fatal(err)
	}
	want := `{"level":"INFO","msg":"request","method":"POST","path":"/get_reward","status":200,"items":1}` + "\n" +
		`{"level":"INFO","msg":"request","method":"POST","path":"/slime","status":400,"items":0}` + "\n"
	if buf.String() != want {
		t.Fatalf("access log =\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestConfig(t *testing.T) {
	_, err := New(Config{Limits: httpd.Limits{MaxBody: -1, ReadTimeout: -time.Second}, Rule: reward.Rule{Possible: -1}})
	want := "invalid server config: MaxBody: -1 is negative; ReadTimeout: -1s is negative; Rule: weights -1 and 0 must be non-negative"
	if err == nil || err.Error() != want || !errors.Is(err, ErrConfig) {
		t.Fatalf("New(bad config) error = %v, want %q", err, want)
	}
	reg := prometheus.NewRegistry()
	if _, err := New(Config{Registry: reg}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Registry: reg}); err == nil || !errors.Is(err, ErrConfig) {
		t.Fatalf("New with an already used registry: error = %v, want ErrConfig", err)
	}
}

// TestSlowClient checks ReadHeaderTimeout: a client that connects and
// sends half a request line is disconnected.
func TestSlowClient(t *testing.T) {
	s := start(t, Config{Limits: httpd.Limits{ReadHeaderTimeout: 200 * time.Millisecond}})
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("POST /get_reward HTTP/1.1\r\nHost: x\r\n")); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	began := time.Now()
	_, err = io.ReadAll(conn)
	if took := time.Since(began); err != nil || took > 3*time.Second {
		t.Fatalf("slow client held the connection for %v (err %v), want it closed after ~200ms", took, err)
	}
}

// TestGracefulShutdown cancels the server's context under load, with Go's
// HTTP client and no load balancer: every request the server answered
// reaches its client intact, a large request in flight completes, no
// request on a kept-alive connection goes unanswered, and Serve returns
// nil. Without a balancer the clients keep opening connections to this
// server; one whose handshake the kernel completed just as the listener
// closed is reset — counted and logged, as HTTP/1.1 over TCP gives the
// server no way to refuse it gracefully (the README says so).
func TestGracefulShutdown(t *testing.T) {
	s := start(t, Config{Limits: httpd.Limits{DrainGrace: 200 * time.Millisecond}})
	const clients = 16
	small := `{"items":[{"response":"<answer>[140, 160]</answer>","remaining_tokens":150,"is_possible":true}]}`
	var ok, refused, resetNew atomic.Int64
	var bad sync.Map
	var wg sync.WaitGroup
	stopClients := make(chan struct{})
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stopClients:
					return
				default:
				}
				reused := false
				ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
					GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
				})
				req, _ := http.NewRequestWithContext(ctx, "POST", s.url+"/v1/rewards", strings.NewReader(small))
				resp, err := client.Do(req)
				var oe *net.OpError
				switch {
				case errors.As(err, &oe) && oe.Op == "dial":
					refused.Add(1) // the listener has closed; nothing was sent
					continue
				case err != nil && !reused:
					resetNew.Add(1)
					continue
				case err != nil:
					bad.Store(fmt.Sprintf("no response on a kept-alive connection: %v", err), true)
					continue
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(string(b), `{"rewards":[1.56],`) {
					bad.Store(fmt.Sprintf("%d %v %.80s", resp.StatusCode, err, b), true)
					continue
				}
				ok.Add(1)
			}
		}()
	}
	// A big batch that is still being scored when the drain begins.
	var big strings.Builder
	big.WriteString(`{"items":[`)
	const n = 20000
	for i := range n {
		if i > 0 {
			big.WriteByte(',')
		}
		big.WriteString(`{"response":"<answer>[140, 160]</answer>","remaining_tokens":150,"is_possible":true}`)
	}
	big.WriteString(`]}`)
	bigDone := make(chan string, 1)
	time.Sleep(200 * time.Millisecond)
	go func() {
		resp, err := client.Post(s.url+"/v1/rewards", "application/json", strings.NewReader(big.String()))
		if err != nil {
			bigDone <- err.Error()
			return
		}
		defer resp.Body.Close()
		var got struct{ Rewards []float64 }
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
			bigDone <- fmt.Sprintf("status %d, %v", resp.StatusCode, err)
			return
		}
		bigDone <- fmt.Sprintf("%d rewards, first %v", len(got.Rewards), got.Rewards[0])
	}()
	time.Sleep(20 * time.Millisecond)
	if err := s.stop(t); err != nil {
		t.Fatalf("Serve after cancel = %v, want nil", err)
	}
	close(stopClients)
	wg.Wait()
	if got, want := <-bigDone, fmt.Sprintf("%d rewards, first 1.56", n); got != want {
		t.Errorf("big request in flight during shutdown: %s, want %s", got, want)
	}
	bad.Range(func(k, _ any) bool { t.Errorf("bad response: %v", k); return true })
	served := counter(t, s.reg, "bagen_reward_requests_total", map[string]string{"route": "v1_rewards", "code": "200"})
	if ok.Load() == 0 || served != float64(ok.Load()+1) {
		t.Fatalf("server answered %v requests with 200, clients received %d (+1 big): lost %v", served, ok.Load(), served-float64(ok.Load()+1))
	}
	t.Logf("%d small requests answered, %d connections refused after the grace, %d new connections reset as the listener closed",
		ok.Load(), refused.Load(), resetNew.Load())
}

func counter(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if matches(m, labels) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func matches(m *dto.Metric, labels map[string]string) bool {
	n := 0
	for _, lp := range m.GetLabel() {
		if v, ok := labels[lp.GetName()]; ok {
			if v != lp.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(labels)
}
