package prediction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"bagen-data/rollout"
)

// stub is a Chat Completions server: it records each request and answers
// with reply(n) for the n-th (1-based).
type stub struct {
	mu      sync.Mutex
	bodies  []map[string]any
	headers []http.Header
	paths   []string
	n       atomic.Int64
	reply   func(n int64, w http.ResponseWriter)
}

func (s *stub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.n.Add(1)
	var body map[string]any
	json.NewDecoder(r.Body).Decode(&body)
	s.mu.Lock()
	s.bodies, s.headers, s.paths = append(s.bodies, body), append(s.headers, r.Header.Clone()), append(s.paths, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
	if r.URL.Path == "/v1/models" {
		io.WriteString(w, `{"object":"list","data":[{"id":"qwen"},{"id":"llama"}]}`)
		return
	}
	s.reply(n, w)
}

const completion = `{"id":"x","model":"qwen-2025-01","choices":[{"index":0,"message":{"role":"assistant","content":"<answer>[1, 2]</answer>","reasoning_content":"think"},"finish_reason":"stop"}],"usage":{"prompt_tokens":30,"completion_tokens":12,"completion_tokens_details":{"reasoning_tokens":5},"prompt_tokens_details":{"cached_tokens":8}}}`

func ok(n int64, w http.ResponseWriter) { io.WriteString(w, completion) }

func newStub(t *testing.T, reply func(int64, http.ResponseWriter)) (*stub, string) {
	s := &stub{reply: reply}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv.URL
}

func TestOpenAIRequest(t *testing.T) {
	s, u := newStub(t, ok)
	seed := int64(7)
	c := &OpenAI{BaseURL: u, Model: "qwen", APIKey: "k", Header: http.Header{"X-Gateway": {"g"}}, MaxTokens: 64, Seed: &seed,
		Extra: map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": false}, "temperature": 0.6}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	p := Probe{CustomID: "a", Messages: []rollout.Message{{Role: "system", Content: "sys"}, {Role: "user", Content: "u"}}}
	got, err := c.Complete(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	got.LatencyMS = 0
	want := Prediction{CustomID: "a", Response: "<answer>[1, 2]</answer>", Reasoning: "think", FinishReason: "stop",
		Usage: &Usage{PromptTokens: 30, CompletionTokens: 12, ReasoningTokens: 5, CachedTokens: 8}, Model: "qwen", Reported: "qwen-2025-01"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("prediction (-want +got):\n%s", d)
	}
	body, _ := json.Marshal(s.bodies[0])
	wantBody := `{"chat_template_kwargs":{"enable_thinking":false},"max_tokens":64,"messages":[{"content":"sys","role":"system"},{"content":"u","role":"user"}],"model":"qwen","seed":7,"stream":false,"temperature":0.6}`
	if string(body) != wantBody {
		t.Errorf("body:\n%s\nwant\n%s", body, wantBody)
	}
	h := s.headers[0]
	if s.paths[0] != "POST /v1/chat/completions" || h.Get("Authorization") != "Bearer k" || h.Get("X-Gateway") != "g" {
		t.Errorf("request %s with headers %v", s.paths[0], h)
	}
}

func TestOpenAIEndpoint(t *testing.T) {
	for _, tt := range []struct{ base, want string }{
		{"http://h:8000", "http://h:8000/v1/chat/completions"},
		{"http://h:8000/", "http://h:8000/v1/chat/completions"},
		{"http://h:8000/v1", "http://h:8000/v1/chat/completions"},
		{"http://h:8000/v1/chat/completions", "http://h:8000/v1/chat/completions"},
		{"https://api.example.com/v1beta/openai/", "https://api.example.com/v1beta/openai/chat/completions"},
	} {
		got, err := (&OpenAI{BaseURL: tt.base}).endpoint("/chat/completions")
		if err != nil || got != tt.want {
			t.Errorf("%s: got %q, %v; want %q", tt.base, got, err, tt.want)
		}
	}
	err := (&OpenAI{BaseURL: "h:8000", MaxTokens: -1, Extra: map[string]any{"model": "x"}}).Validate()
	want := "model: none given\nendpoint \"h:8000\": want http(s)://host[:port][/v1]\nmax tokens: want ≥ 0, got -1\nextra body: \"model\" is set by the client"
	if err == nil || err.Error() != want {
		t.Errorf("Validate: got %v, want %q", err, want)
	}
}

// TestOpenAIErrors pins what each failure does: the requests made, the
// waits between them and the error.
func TestOpenAIErrors(t *testing.T) {
	tests := []struct {
		name      string
		reply     func(n int64, w http.ResponseWriter)
		wantReqs  int64
		wantWaits []time.Duration
		wantErr   string
	}{
		{"429 honours Retry-After", func(n int64, w http.ResponseWriter) {
			if n == 1 {
				w.Header().Set("Retry-After", "3")
				w.WriteHeader(http.StatusTooManyRequests)
				io.WriteString(w, `{"error":{"message":"slow down","type":"rate_limit"}}`)
				return
			}
			ok(n, w)
		}, 2, []time.Duration{3 * time.Second}, ""},
		{"5xx backs off", func(n int64, w http.ResponseWriter) {
			if n <= 2 {
				http.Error(w, "bad gateway", http.StatusBadGateway)
				return
			}
			ok(n, w)
		}, 3, []time.Duration{375 * time.Millisecond, 750 * time.Millisecond}, ""},
		{"truncated body retried", func(n int64, w http.ResponseWriter) {
			if n == 1 {
				io.WriteString(w, completion[:40])
				return
			}
			ok(n, w)
		}, 2, []time.Duration{375 * time.Millisecond}, ""},
		{"400 not retried", func(n int64, w http.ResponseWriter) {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"object":"error","message":"max_tokens is too large","code":400}`)
		}, 1, nil, "400 Bad Request: max_tokens is too large (not retried)"},
		{"401 not retried", func(n int64, w http.ResponseWriter) {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"invalid key"}`)
		}, 1, nil, "401 Unauthorized: invalid key (not retried)"},
		{"404 lists the models", func(n int64, w http.ResponseWriter) {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"message":"The model 'qwn' does not exist."}}`)
		}, 2, nil, `404 Not Found: The model 'qwn' does not exist.; model "qwn"? the server has: llama, qwen (not retried)`},
		{"attempts run out", func(n int64, w http.ResponseWriter) {
			http.Error(w, "", http.StatusServiceUnavailable)
		}, 3, []time.Duration{375 * time.Millisecond, 750 * time.Millisecond}, "attempt 3 of 3: 503 Service Unavailable: (empty body)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, u := newStub(t, tt.reply)
			c := &OpenAI{BaseURL: u + "/v1", Model: "qwn"}
			var waits []time.Duration
			r := Retry{Attempts: 3, Rand: func() float64 { return 0.5 },
				Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
			_, err := r.Do(t.Context(), func(ctx context.Context) error { _, err := c.Complete(ctx, Probe{CustomID: "a"}); return err })
			if n := s.n.Load(); n != tt.wantReqs {
				t.Errorf("requests: got %d, want %d", n, tt.wantReqs)
			}
			if !cmp.Equal(waits, tt.wantWaits) {
				t.Errorf("waits: got %v, want %v", waits, tt.wantWaits)
			}
			if (err == nil) != (tt.wantErr == "") || err != nil && err.Error() != tt.wantErr {
				t.Errorf("error: got %v, want %q", err, tt.wantErr)
			}
			if strings.Contains(tt.wantErr, "not retried") && !errors.Is(err, ErrPermanent) {
				t.Errorf("%v does not wrap ErrPermanent", err)
			}
		})
	}
}

func TestRetryTimeout(t *testing.T) {
	n := 0
	r := Retry{Attempts: 2, Timeout: 20 * time.Millisecond, Backoff: time.Millisecond}
	attempts, err := r.Do(t.Context(), func(ctx context.Context) error {
		n++
		<-ctx.Done()
		return ctx.Err()
	})
	if attempts != 2 || n != 2 || err == nil || err.Error() != "attempt 2 of 2: no answer within 20ms: context deadline exceeded" {
		t.Errorf("got %d attempts, %v", attempts, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := r.Do(ctx, func(ctx context.Context) error { return ctx.Err() }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v", err)
	}
}

// TestRetryTimeoutDefault pins the zero Timeout as DefaultTimeout (each
// attempt's context ends 2 min after it starts) and NoTimeout as no
// deadline but the caller's.
func TestRetryTimeoutDefault(t *testing.T) {
	for _, tt := range []struct {
		name    string
		timeout time.Duration
		want    time.Duration // 0: no deadline
	}{
		{"zero is the default", 0, 2 * time.Minute},
		{"set", 90 * time.Second, 90 * time.Second},
		{"negative is no bound", NoTimeout, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var deadline time.Time
			var has bool
			start := time.Now()
			_, err := Retry{Timeout: tt.timeout}.Do(t.Context(), func(ctx context.Context) error {
				deadline, has = ctx.Deadline()
				return nil
			})
			end := time.Now()
			switch {
			case err != nil:
				t.Fatal(err)
			case tt.want == 0 && has:
				t.Errorf("deadline %v after the start, want none", deadline.Sub(start))
			case tt.want > 0 && (!has || deadline.Before(start.Add(tt.want)) || deadline.After(end.Add(tt.want))):
				t.Errorf("deadline %v (set %v) after the start, want %v", deadline.Sub(start), has, tt.want)
			}
		})
	}
}

// TestAskFailuresAndRate records a probe whose retries run out as a
// failure line, keeps answering the others and paces requests.
func TestAskFailuresAndRate(t *testing.T) {
	_, u := newStub(t, func(n int64, w http.ResponseWriter) { ok(n, w) })
	bad := &failing{Client: &OpenAI{BaseURL: u, Model: "qwen"}, fail: "t1_probe_after_turn_0"}
	var got []string
	start := time.Now()
	st, err := Ask(t.Context(), bad, probes(4), Options{Concurrency: 2, Rate: 50, Retry: Retry{Attempts: 2, Backoff: time.Millisecond}},
		func(p Prediction) error {
			got = append(got, fmt.Sprintf("%s %q %d", p.CustomID, p.Error, p.Attempts))
			return nil
		})
	var fe *FailedError
	if !errors.As(err, &fe) || err.Error() != "1 probes without an answer (t1_probe_after_turn_0; last: attempt 2 of 2: connection reset)" {
		t.Errorf("got %v, want a FailedError", err)
	}
	if st.Answered != 3 || st.Failed != 1 || st.Requests != 5 || st.PromptTokens != 90 || st.CompletionTokens != 36 || st.ReasoningTokens != 15 || st.CachedTokens != 24 {
		t.Errorf("stats %+v", st)
	}
	if el := time.Since(start); el < 80*time.Millisecond {
		t.Errorf("5 requests at 50/s took %v, want ≥ 80ms", el)
	}
	if len(got) != 4 || !strings.Contains(strings.Join(got, "\n"), `t1_probe_after_turn_0 "attempt 2 of 2: connection reset" 2`) {
		t.Errorf("saved:\n%s", strings.Join(got, "\n"))
	}
	if d := st.Dollars(Prices{In: 2.5, Cached: 1.25, Out: 10}); fmt.Sprintf("%.6f", d) != "0.000555" {
		t.Errorf("dollars: got %v, want (90−24)×2.5e-6 + 24×1.25e-6 + 36×10e-6 = 0.000555", d)
	}
}

type failing struct {
	Client
	fail string
}

func (f *failing) Complete(ctx context.Context, p Probe) (Prediction, error) {
	if p.CustomID == f.fail || f.fail == "*" {
		return Prediction{}, errors.New("connection reset")
	}
	return f.Client.Complete(ctx, p)
}

// FuzzDecodeChat feeds the answer parser arbitrary bodies: it returns a
// prediction or an error wrapping ErrAnswer, never panics, and reads
// errorMessage and retryAfter's inputs too.
func FuzzDecodeChat(f *testing.F) {
	f.Add([]byte(completion))
	f.Add([]byte(completion[:57]))
	f.Add([]byte(`{"choices":[{"message":{"content":null,"reasoning":"r"}}]}`))
	f.Add([]byte(`{"error":{"message":"m"}}`))
	f.Add([]byte(`Thu, 01 Jan 2099 00:00:00 GMT`))
	f.Add([]byte(`1e300`))
	f.Add([]byte(`+Inf`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := decodeChat(data); err != nil && !errors.Is(err, ErrAnswer) {
			t.Fatalf("error %v does not wrap ErrAnswer", err)
		}
		if m := errorMessage(data); m == "" {
			t.Fatal("empty error message")
		}
		if d := retryAfter(string(data), time.Unix(0, 0)); d < 0 {
			t.Fatalf("negative Retry-After %v", d)
		}
	})
}

func TestProgress(t *testing.T) {
	p := Progress{Done: 30, Failed: 10, Total: 100, Elapsed: 20 * time.Second}
	if r, eta := p.Rate(), p.ETA(); r != 2 || eta != 30*time.Second {
		t.Errorf("rate %v, ETA %v; want 2/s and 30s for the 60 left", r, eta)
	}
	if eta := (Progress{Total: 5}).ETA(); eta != 0 {
		t.Errorf("ETA before any probe: %v, want 0 (unknown)", eta)
	}
}

// FuzzOpenAIConfig feeds the endpoint URL and the extra body (the
// --endpoint and --extra-body flags) arbitrary text: a configuration that
// validates builds a request body that is a JSON object carrying the model
// and the messages, whatever the extra keys say.
func FuzzOpenAIConfig(f *testing.F) {
	f.Add("http://127.0.0.1:8000", []byte(`{"chat_template_kwargs":{"enable_thinking":false}}`))
	f.Add("https://api.example.com/v1beta/openai/", []byte(`{"model":"x"}`))
	f.Add("127.0.0.1:8000/v1", []byte(`[1]`))
	f.Add("http://h/v1/chat/completions?x=1#y", []byte(`{"messages":null,"seed":1e400}`))
	f.Fuzz(func(t *testing.T, base string, extra []byte) {
		c := &OpenAI{BaseURL: base, Model: "m"}
		if json.Unmarshal(extra, &c.Extra) != nil {
			return
		}
		if c.Validate() != nil {
			return
		}
		if u, err := c.endpoint("/chat/completions"); err != nil || !strings.HasSuffix(u, "/chat/completions") {
			t.Fatalf("endpoint of %q: %q, %v", base, u, err)
		}
		b, err := c.Body([]rollout.Message{{Role: "user", Content: "u"}})
		if err != nil {
			return // an extra value JSON cannot encode
		}
		var back struct {
			Model    string           `json:"model"`
			Messages []map[string]any `json:"messages"`
			Stream   bool             `json:"stream"`
		}
		if err := json.Unmarshal(b, &back); err != nil || back.Model != "m" || len(back.Messages) != 1 || back.Stream {
			t.Fatalf("body %s: %+v, %v", b, back, err)
		}
	})
}

// TestAskStopsWhenServerDown stops after as many failed probes in a row
// as run at once, at least four, without asking the rest.
func TestAskStopsWhenServerDown(t *testing.T) {
	down := &failing{fail: "*"}
	var saved int
	st, err := Ask(t.Context(), down, probes(10), Options{Concurrency: 1, Retry: Retry{Attempts: 1}},
		func(Prediction) error { saved++; return nil })
	want := "4 probes in a row got no answer, stopping (last t3_probe_after_turn_0: attempt 1 of 1: connection reset)"
	if err == nil || err.Error() != want || saved != 4 || st.Failed != 4 || st.Requests != 4 {
		t.Errorf("got %v after %d saved, %+v; want %q after 4", err, saved, st, want)
	}
}

// TestBodyBytes pins a request body: keys in encoding/json's map order,
// <, > and & escaped as encoding/json escapes them, invalid UTF-8
// replaced, an empty content kept.
func TestBodyBytes(t *testing.T) {
	seed := int64(3)
	o := &OpenAI{Model: "m", BaseURL: "http://x", Seed: &seed, Extra: map[string]any{"top_p": 0.5}}
	got, err := o.Body([]rollout.Message{{Role: "user", Content: "a<b>&c \u2028 \xff \"q\" é"}, {Role: "assistant", Content: ""}})
	want := `{"max_tokens":512,"messages":[{"role":"user","content":"a\u003cb\u003e\u0026c \u2028 \ufffd \"q\" é"},{"role":"assistant","content":""}],"model":"m","seed":3,"stream":false,"temperature":0,"top_p":0.5}`
	if err != nil || string(got) != want {
		t.Errorf("got %s, %v\nwant %s", got, err, want)
	}
}
