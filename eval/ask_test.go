package eval

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"bagen-data/dataset"
	"bagen-data/eval/prediction"
	"bagen-data/internal/openai"
	"bagen-data/rollout"
)

// askRows are three probes: trajectory a's two (r = 700 and 400, truly
// possible) and b's one (r = 2600, impossible), each prompt naming it.
func askRows(t *testing.T) string {
	t.Helper()
	row := func(id, prompt string, turns, used, r int64, possible bool) dataset.RLRow {
		return dataset.RLRow{Prompt: []rollout.Message{{Role: "user", Content: prompt}},
			ExtraInfo: dataset.ExtraInfo{CustomID: id, TrajectoryID: id[:1], Split: dataset.SplitEval, TotalTurns: turns,
				TokensUsed: used, RemainingTokens: r, IsPossible: possible, Budget: 5000}}
	}
	rows := []dataset.RLRow{
		row("a_probe_after_turn_0", "A0", 2, 300, 700, true),
		row("a_probe_after_turn_1", "A1", 2, 600, 400, true),
		row("b_probe_after_turn_0", "B0", 3, 300, 2600, false),
	}
	path := filepath.Join(t.TempDir(), "test.parquet")
	if err := dataset.WriteFile(t.Context(), path, rows); err != nil {
		t.Fatal(err)
	}
	return path
}

// askServer is a Chat Completions server on loopback answering A0 with
// [600, 800] (covers 700), A1 with [100, 200] (misses 400) and B0 with
// impossible, each with 30 prompt tokens (10 cached) and 12 completion
// tokens (4 reasoning); with fail set it answers B0 with a 500. It
// records the requests' bodies and headers.
type askServer struct {
	mu      sync.Mutex
	fail    bool
	bodies  []openai.ChatRequest
	raw     []map[string]any
	headers []http.Header
}

func (s *askServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req openai.ChatRequest
	var raw map[string]any
	body, _ := io.ReadAll(r.Body)
	if r.URL.Path != "/v1/chat/completions" || json.Unmarshal(body, &req) != nil || json.Unmarshal(body, &raw) != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.bodies, s.raw, s.headers = append(s.bodies, req), append(s.raw, raw), append(s.headers, r.Header.Clone())
	fail := s.fail
	s.mu.Unlock()
	var prompt string
	json.Unmarshal(req.Messages[0].Content, &prompt)
	answer := map[string]string{"A0": "<answer>[600, 800]</answer>", "A1": "<answer>[100, 200]</answer>", "B0": "<answer>impossible</answer>"}[prompt]
	if fail && prompt == "B0" {
		http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusInternalServerError)
		return
	}
	stop, reasoning := "stop", int64(4)
	w.Write(openai.Marshal(openai.ChatCompletion{ID: "c", Object: openai.ObjectCompletion, Model: req.Model,
		Choices: []openai.Choice{{Message: &openai.Message{Role: "assistant", Content: openai.Text(answer)}, FinishReason: &stop}},
		Usage: &openai.Usage{PromptTokens: 30, CompletionTokens: 12, TotalTokens: 42, PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 10},
			CompletionTokensDetails: &openai.CompletionTokensDetails{ReasoningTokens: &reasoning}}}))
}

func (s *askServer) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

// TestDoEndpoint asks a Chat Completions server over loopback through
// Do, then reruns the same Job: the second run asks nothing and scores the
// same. It pins the request sent, the Outcome and the spend.
func TestDoEndpoint(t *testing.T) {
	srv := &askServer{}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	data := askRows(t)
	out := filepath.Join(t.TempDir(), "preds.jsonl")
	job := Job{Data: data, Endpoint: hs.URL, Model: "m", APIKey: "k", Header: http.Header{"X-Gateway": {"g"}},
		Extra: map[string]any{"top_p": 0.5}, Seed: 7, SendSeed: true, Out: out, Bootstrap: new(0),
		Estimator: prediction.Prices{In: 1, Cached: 0.5, Out: 2}}
	o, err := Do(t.Context(), job)
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.requests(); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
	raw, h := srv.raw[0], srv.headers[0]
	if raw["model"] != "m" || raw["seed"] != 7.0 || raw["max_tokens"] != 512.0 || raw["temperature"] != 0.0 || raw["top_p"] != 0.5 ||
		h.Get("Authorization") != "Bearer k" || h.Get("X-Gateway") != "g" {
		t.Errorf("request: body %v, headers %v; want model m, seed 7, max_tokens 512, temperature 0, top_p 0.5, the key and X-Gateway", raw, h)
	}
	// Each answer cost 30 prompt tokens (10 cached) and 12 completion
	// tokens (4 reasoning): 3 × (20 × $1 + 10 × $0.5 + 12 × $2) per million.
	o.Asked.Stats.Wall = 0
	wantAsked := &Asked{Log: out, Before: 0, Stats: prediction.Stats{Probes: 3, Answered: 3, Requests: 3,
		PromptTokens: 90, CompletionTokens: 36, ReasoningTokens: 12, CachedTokens: 30}}
	if d := cmp.Diff(wantAsked, o.Asked); d != "" {
		t.Errorf("asked (-want +got):\n%s", d)
	}
	checkAskRun(t, o, hs.URL, out, 147e-6)
	// The rerun reads the three answers back and asks nothing.
	again, err := Do(t.Context(), job)
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.requests(); n != 3 || again.Asked.Before != 3 || again.Asked.Stats.Probes != 0 {
		t.Errorf("rerun: %d requests in all, asked %+v; want 3, 3 from before, none asked", n, again.Asked)
	}
	checkAskRun(t, again, hs.URL, out, 147e-6)
	// Another model cannot append to the log.
	job.Model = "other"
	if _, err := Do(t.Context(), job); !errors.Is(err, prediction.ErrModel) {
		t.Errorf("another model on the log: got %v, want ErrModel", err)
	}
}

// checkAskRun pins the scored run of askServer's answers: all three
// feasibility calls right, one of the two intervals covering, and the
// estimator's dollars; only its prices given, the net is half priced.
func checkAskRun(t *testing.T, o Outcome, endpoint, out string, dollars float64) {
	t.Helper()
	r, m := o.Run, o.Run.Metrics
	if r.Name != "m" || r.Model != "m" || r.Endpoint != endpoint || r.Predictions != out || !o.Scores.OneToOne() || o.Failed != nil || o.Cut != 0 || !o.HalfPriced {
		t.Errorf("run %q model %q endpoint %q predictions %q, one to one %v, failed %v, cut %d, half priced %v",
			r.Name, r.Model, r.Endpoint, r.Predictions, o.Scores.OneToOne(), o.Failed, o.Cut, o.HalfPriced)
	}
	if m.Probes != 3 || m.Accuracy != 1 || m.Intervals != 2 || m.Covered != 1 || m.Coverage != 0.5 {
		t.Errorf("metrics: %d probes, accuracy %v, %d intervals, %d covered, coverage %v; want 3, 1, 2, 1, 0.5",
			m.Probes, m.Accuracy, m.Intervals, m.Covered, m.Coverage)
	}
	s := r.Spend
	if s == nil || s.Requests != 3 || s.Answered != 3 || s.PromptTokens != 90 || s.CachedTokens != 30 || s.CompletionTokens != 36 ||
		s.ReasoningTokens != 12 || s.Dollars == nil || *s.Dollars != dollars || s.PriceCached == nil || *s.PriceCached != 0.5 {
		t.Errorf("spend %+v, want 3 requests and answers, 90 (30 cached) + 36 (12 reasoning) tokens, $%g", s, dollars)
	}
}

// TestDoFailedProbe: a probe whose retries run out is in Outcome.Failed,
// not the error, and scored as unanswered; its attempts count as requests.
func TestDoFailedProbe(t *testing.T) {
	srv := &askServer{fail: true}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	out := filepath.Join(t.TempDir(), "preds.jsonl")
	o, err := Do(t.Context(), Job{Data: askRows(t), Endpoint: hs.URL + "/v1", Model: "m", Out: out, Bootstrap: new(0),
		Ask: prediction.Options{Retry: prediction.Retry{Attempts: 2, Backoff: time.Millisecond}}})
	if err != nil {
		t.Fatal(err)
	}
	if o.Failed == nil || !cmp.Equal(o.Failed.IDs, []string{"b_probe_after_turn_0"}) {
		t.Errorf("failed: got %v, want b_probe_after_turn_0", o.Failed)
	}
	if n := srv.requests(); n != 4 || o.Run.Spend == nil || o.Run.Spend.Requests != 4 || o.Run.Spend.Failed != 1 || o.Run.Spend.Dollars != nil {
		t.Errorf("%d requests, spend %+v; want 4 (b twice), 1 failed, no dollars", n, o.Run.Spend)
	}
	j := o.Scores.Matched
	if !cmp.Equal(j.Missing, []string{"b_probe_after_turn_0"}) || !cmp.Equal(j.Failed, j.Missing) || o.HalfPriced {
		t.Errorf("join: missing %v, failed %v, half priced %v", j.Missing, j.Failed, o.HalfPriced)
	}
}

// TestDoPredictionsFile scores a saved predictions file as it is: no
// model, no spend beyond what its lines say, the run named after the file.
func TestDoPredictionsFile(t *testing.T) {
	preds := filepath.Join(t.TempDir(), "saved.jsonl")
	lines := `{"custom_id":"a_probe_after_turn_0","response":"<answer>[600, 800]</answer>"}
{"custom_id":"b_probe_after_turn_0","response":"<answer>[1, 2]</answer>","finish_reason":"length"}
`
	if err := os.WriteFile(preds, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := Do(t.Context(), Job{Data: askRows(t), Predictions: preds, Bootstrap: new(0)})
	if err != nil {
		t.Fatal(err)
	}
	m := o.Run.Metrics
	if o.Run.Name != "saved" || o.Run.Model != "" || o.Asked != nil || o.Run.Spend != nil || o.Cut != 1 ||
		!cmp.Equal(o.Scores.Missing, []string{"a_probe_after_turn_1"}) || m.Accuracy != Num(1)/3 {
		t.Errorf("run %q model %q asked %v spend %v cut %d missing %v accuracy %v; want saved, none, 1 cut, a_probe_after_turn_1 missing, 1/3",
			o.Run.Name, o.Run.Model, o.Asked, o.Run.Spend, o.Cut, o.Scores.Missing, m.Accuracy)
	}
	if _, err := Do(t.Context(), Job{Data: askRows(t), Predictions: preds, Strict: true}); !errors.As(err, new(*JoinError)) {
		t.Errorf("strict: got %v, want a *JoinError", err)
	}
}

// TestJobValidate reports every bad field at once, before any input is
// read.
func TestJobValidate(t *testing.T) {
	j := Job{Predictions: "p.jsonl", Endpoint: "localhost:8000", Extra: map[string]any{"model": "x"}}
	want := "data: none given\nanswers: want one of a predictions file, an Ollama model and an endpoint, got 2\n" +
		"model: none given\nendpoint \"localhost:8000\": want http(s)://host[:port][/v1]\nextra body: \"model\" is set by the client"
	if _, err := Do(t.Context(), j); err == nil || err.Error() != want {
		t.Errorf("got %v, want\n%s", err, want)
	}
	if err := (Job{Data: "d", Ollama: "m"}).Validate(); err != nil {
		t.Errorf("an Ollama job: %v", err)
	}
}
