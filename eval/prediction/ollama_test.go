package prediction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"bagen-data/rollout"
)

// chatServer speaks Ollama's POST /api/chat (non-streaming): it answers
// "<answer>impossible</answer>" to prompts mentioning "doomed" and an
// interval otherwise, after fail(n) says whether the n-th request (1-based)
// fails and how.
type chatServer struct {
	t        *testing.T
	fail     func(n int64, w http.ResponseWriter) bool
	delay    time.Duration
	requests atomic.Int64
	inFlight atomic.Int64
	maxIn    atomic.Int64
	mu       sync.Mutex
	asked    map[string]int // last user message → times answered
	reqs     []api.ChatRequest
}

func (s *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.requests.Add(1)
	in := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		m := s.maxIn.Load()
		if in <= m || s.maxIn.CompareAndSwap(m, in) {
			break
		}
	}
	if r.Method != http.MethodPost || r.URL.Path != "/api/chat" {
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		return
	}
	if s.fail != nil && s.fail(n, w) {
		return
	}
	var req api.ChatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
		return
	}
	time.Sleep(s.delay)
	last := req.Messages[len(req.Messages)-1].Content
	s.mu.Lock()
	s.asked[last]++
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	answer := "<answer>[100, 200]</answer>"
	if strings.Contains(last, "doomed") {
		answer = "<answer>impossible</answer>"
	}
	json.NewEncoder(w).Encode(api.ChatResponse{Model: req.Model, Message: api.Message{Role: "assistant", Content: answer}, Done: true})
}

func newChatServer(t *testing.T) (*chatServer, *api.Client) {
	s := &chatServer{t: t, asked: map[string]int{}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return s, api.NewClient(u, srv.Client())
}

func ollama(c Chatter, model string) *Ollama { return &Ollama{API: c, Model: model, Seed: 42} }

func probes(n int) []Probe {
	var out []Probe
	for i := range n {
		text := fmt.Sprintf("probe %d", i)
		if i%3 == 0 {
			text += " doomed"
		}
		out = append(out, Probe{CustomID: fmt.Sprintf("t%d_probe_after_turn_0", i),
			Messages: []rollout.Message{{Role: "system", Content: "sys"}, {Role: "user", Content: text}}})
	}
	return out
}

func collect(t *testing.T, ctx context.Context, c Client, ps []Probe, opt Options) (map[string]string, error) {
	var mu sync.Mutex
	got := map[string]string{}
	_, err := Ask(ctx, c, ps, opt, func(p Prediction) error {
		mu.Lock()
		defer mu.Unlock()
		if _, dup := got[p.CustomID]; dup {
			t.Errorf("%s saved twice", p.CustomID)
		}
		got[p.CustomID] = p.Response
		if p.Failed() {
			got[p.CustomID] = "error: " + p.Error
		}
		return nil
	})
	return got, err
}

func TestAskRequest(t *testing.T) {
	s, c := newChatServer(t)
	ps := probes(3)
	ps = append(ps, ps[1]) // a duplicated probe is asked once
	got, err := collect(t, t.Context(), ollama(c, "qwen"), ps, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"t0_probe_after_turn_0": "<answer>impossible</answer>",
		"t1_probe_after_turn_0": "<answer>[100, 200]</answer>",
		"t2_probe_after_turn_0": "<answer>[100, 200]</answer>",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("answers: got %v, want %v", got, want)
	}
	if n := s.requests.Load(); n != 3 {
		t.Errorf("requests: got %d, want 3", n)
	}
	req := s.reqs[0]
	opts, _ := json.Marshal(req.Options)
	if req.Model != "qwen" || req.Stream == nil || *req.Stream || string(opts) != `{"num_predict":512,"seed":42,"temperature":0}` ||
		len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.Messages[0].Content != "sys" {
		t.Errorf("request: model %q stream %v options %s messages %+v", req.Model, req.Stream, opts, req.Messages)
	}
}

func TestAskConcurrency(t *testing.T) {
	s, c := newChatServer(t)
	s.delay = 30 * time.Millisecond
	var last atomic.Int64
	_, err := collect(t, t.Context(), ollama(c, "m"), probes(12), Options{Concurrency: 3,
		Progress: func(p Progress) { last.Store(int64(p.Done*100 + p.Total)) }})
	if err != nil {
		t.Fatal(err)
	}
	if m := s.maxIn.Load(); m != 3 {
		t.Errorf("max requests in flight: got %d, want 3", m)
	}
	if got := last.Load(); got != 12*100+12 {
		t.Errorf("last progress: got %d/%d, want 12/12", got/100, got%100)
	}
}

func TestAskRetries(t *testing.T) {
	tests := []struct {
		name     string
		fail     func(n int64, w http.ResponseWriter) bool
		wantReqs int64
		wantErr  string
	}{
		{"503 then success", func(n int64, w http.ResponseWriter) bool {
			if n <= 2 {
				http.Error(w, `{"error":"server busy"}`, http.StatusServiceUnavailable)
				return true
			}
			return false
		}, 3, ""},
		{"dropped connection then success", func(n int64, w http.ResponseWriter) bool {
			if n == 1 {
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.Close()
				return true
			}
			return false
		}, 2, ""},
		{"unknown model is not retried", func(n int64, w http.ResponseWriter) bool {
			http.Error(w, `{"error":"model \"m\" not found, try pulling it first"}`, http.StatusNotFound)
			return true
		}, 1, `t0_probe_after_turn_0: 404 Not Found: model "m" not found, try pulling it first (not retried)`},
		{"gives up after the attempts", func(n int64, w http.ResponseWriter) bool {
			http.Error(w, `{"error":"boom"}`, http.StatusInternalServerError)
			return true
		}, 3, "1 probes without an answer (t0_probe_after_turn_0; last: attempt 3 of 3: 500 Internal Server Error: boom)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := newChatServer(t)
			s.fail = tt.fail
			got, err := collect(t, t.Context(), ollama(c, "m"), probes(1), Options{Retry: Retry{Attempts: 3, Backoff: time.Millisecond}})
			if n := s.requests.Load(); n != tt.wantReqs {
				t.Errorf("requests: got %d, want %d", n, tt.wantReqs)
			}
			if tt.wantErr == "" {
				if err != nil || got["t0_probe_after_turn_0"] != "<answer>impossible</answer>" {
					t.Errorf("got %v, %v; want the answer", got, err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("got error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestResumeAfterInterrupt stops a run part-way, then resumes it: every
// probe is answered exactly once across the two runs and the log holds all.
func TestResumeAfterInterrupt(t *testing.T) {
	s, c := newChatServer(t)
	path := filepath.Join(t.TempDir(), "preds.jsonl")
	ps := probes(10)

	log, _, err := OpenLog(path, "m")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	opt := Options{Concurrency: 1, Progress: func(p Progress) {
		if p.Done == 4 {
			cancel() // interrupted after four answers
		}
	}}
	if _, err := Resume(ctx, ollama(c, "m"), ps, log, opt); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: got %v, want context.Canceled", err)
	}
	log.Close()

	log, have, err := OpenLog(path, "m")
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if len(have) != 4 {
		t.Fatalf("after the interruption: %d answers saved, want 4", len(have))
	}
	st, err := Resume(t.Context(), ollama(c, "m"), ps, log, Options{})
	if err != nil || st.Probes != 6 || st.Answered != 6 || st.Requests != 6 {
		t.Fatalf("resume: %+v, %v; want 6 asked and answered in 6 requests", st, err)
	}
	if st, _ := Resume(t.Context(), ollama(c, "m"), ps, log, Options{}); st.Probes != 0 {
		t.Errorf("a complete log asked %d more", st.Probes)
	}
	for text, n := range s.asked {
		if n != 1 {
			t.Errorf("%q asked %d times, want 1", text, n)
		}
	}
	if len(s.asked) != 10 {
		t.Errorf("distinct probes asked: got %d, want 10", len(s.asked))
	}
}

// TestAskIncomplete keeps an answer the server did not mark done, flagged,
// without retrying: the same prompt would be cut off again.
func TestAskIncomplete(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		json.NewEncoder(w).Encode(api.ChatResponse{Message: api.Message{Role: "assistant", Content: "\n\n<answer>[1"}, Done: false})
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	var got []Prediction
	_, err := Ask(t.Context(), &Ollama{API: api.NewClient(u, srv.Client()), Model: "m"}, probes(1), Options{}, func(p Prediction) error {
		p.LatencyMS = 0
		got = append(got, p)
		return nil
	})
	want := []Prediction{{CustomID: "t0_probe_after_turn_0", Response: "\n\n<answer>[1", Model: "m", Incomplete: true, Attempts: 1}}
	if err != nil || requests.Load() != 1 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %+v, %v after %d requests; want %+v after 1", got, err, requests.Load(), want)
	}
	line := string(Marshal(got[0]))
	if line != `{"custom_id":"t0_probe_after_turn_0","response":"\n\n\u003canswer\u003e[1","attempts":1,"model":"m","incomplete":true}`+"\n" {
		t.Errorf("line: %s", line)
	}
	back, err := Read(strings.NewReader(line), "x")
	if err != nil || !back[0].Incomplete {
		t.Errorf("read back: %+v, %v", back, err)
	}
}
