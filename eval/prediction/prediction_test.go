package prediction

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/rollout"
)

func TestRead(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Prediction
		wantErr string
	}{
		{"lines", `{"custom_id":"a","response":"<answer>impossible</answer>"}` + "\n\n" + `{"custom_id":"b","response":"","model":"m","extra":1}`,
			[]Prediction{{CustomID: "a", Response: "<answer>impossible</answer>", Line: 1}, {CustomID: "b", Model: "m", Line: 3}}, ""},
		{"failure line", `{"custom_id":"a","error":"attempt 6 of 6: 503 Service Unavailable: busy","attempts":6}`,
			[]Prediction{{CustomID: "a", Error: "attempt 6 of 6: 503 Service Unavailable: busy", Attempts: 6, Line: 1}}, ""},
		{"server detail", `{"custom_id":"a","response":"r","reasoning":"hm","finish_reason":"length","usage":{"prompt_tokens":10,"completion_tokens":5,"reasoning_tokens":2},"latency_ms":12.5,"model":"m","reported_model":"m-2025"}`,
			[]Prediction{{CustomID: "a", Response: "r", Reasoning: "hm", FinishReason: "length", Usage: &Usage{PromptTokens: 10, CompletionTokens: 5, ReasoningTokens: 2}, LatencyMS: 12.5, Model: "m", Reported: "m-2025", Line: 1}}, ""},
		{"cached tokens", `{"custom_id":"a","response":"r","usage":{"prompt_tokens":10,"completion_tokens":5,"cached_tokens":7}}`,
			[]Prediction{{CustomID: "a", Response: "r", Usage: &Usage{PromptTokens: 10, CompletionTokens: 5, CachedTokens: 7}, Line: 1}}, ""},
		{"more cached than prompt", `{"custom_id":"a","response":"r","usage":{"prompt_tokens":10,"completion_tokens":5,"cached_tokens":11}}`, nil,
			"preds.jsonl:1: usage.cached_tokens: want ≤ prompt_tokens 10, got 11"},
		{"negative usage", `{"custom_id":"a","response":"r","usage":{"prompt_tokens":-1,"completion_tokens":5}}`, nil,
			"preds.jsonl:1: usage: want counts ≥ 0, got {PromptTokens:-1 CompletionTokens:5 ReasoningTokens:0 CachedTokens:0}"},
		{"empty", "", nil, ""},
		{"not json", `{"custom_id":"a","response":"x"}` + "\n{oops\n", nil,
			"preds.jsonl:2: not a JSON object: invalid character 'o' looking for beginning of object key string"},
		{"no id", `{"response":"x"}`, nil, "preds.jsonl:1: custom_id: missing"},
		{"empty id", `{"custom_id":"","response":"x"}`, nil, "preds.jsonl:1: custom_id: missing"},
		{"no response", `{"custom_id":"a"}`, nil, "preds.jsonl:1: response: missing (a line needs a response, or an error for a probe that got none)"},
		{"response and error", `{"custom_id":"a","response":"","error":"x"}`, nil, "preds.jsonl:1: error: a line has either a response or an error, not both"},
		{"response not a string", `{"custom_id":"a","response":3}`, nil,
			"preds.jsonl:1: not a JSON object: json: cannot unmarshal number into Go struct field .response of type string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Read(strings.NewReader(tt.in), "preds.jsonl")
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Read(%q): got error %v, want %q", tt.in, err, tt.wantErr)
				}
				var le *LineError
				if !errors.As(err, &le) {
					t.Errorf("error %v is not a *LineError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Read(%q) (-want +got):\n%s", tt.in, d)
			}
		})
	}
}

func TestReadTestdata(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "preds.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := Read(f, "preds.jsonl")
	if err != nil || len(got) != 3 || got[1].Model != "qwen2.5:7b" || !got[2].Incomplete {
		t.Errorf("got %+v, %v; want 3 predictions, the second by qwen2.5:7b, the third incomplete", got, err)
	}
}

func TestNewSet(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		answers  map[string]string
		failed   []string
		requests int
		wantErr  string
	}{
		{"repeated line kept once",
			`{"custom_id":"a","response":"x","attempts":1}` + "\n" + `{"custom_id":"a","response":"x","attempts":2}` + "\n" + `{"custom_id":"b","response":"y"}`,
			map[string]string{"a": "x", "b": "y"}, nil, 3, ""},
		{"two responses", `{"custom_id":"a","response":"x"}` + "\n\n" + `{"custom_id":"a","response":"z"}`,
			nil, nil, 0, `p.jsonl:3: custom_id "a": two different responses (line 1 has another)`},
		{"answer after failure", `{"custom_id":"a","error":"boom","attempts":6}` + "\n" + `{"custom_id":"a","response":"x","attempts":1}`,
			map[string]string{"a": "x"}, nil, 7, ""},
		{"failure after answer", `{"custom_id":"a","response":"x"}` + "\n" + `{"custom_id":"a","error":"boom"}`,
			map[string]string{"a": "x"}, nil, 0, ""},
		{"failure only", `{"custom_id":"a","error":"boom","attempts":6}` + "\n" + `{"custom_id":"b","response":""}`,
			map[string]string{"b": ""}, []string{"a"}, 6, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			preds, err := Read(strings.NewReader(tt.in), "p.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			s, err := NewSet(preds, "p.jsonl")
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || !errors.Is(err, ErrDuplicate) {
					t.Fatalf("got %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			var failed []string
			for _, id := range s.IDs() {
				if p, ok := s.Answer(id); ok {
					got[id] = p.Response
				}
				if _, ok := s.Failure(id); ok {
					failed = append(failed, id)
				}
			}
			if d := cmp.Diff(tt.answers, got); d != "" {
				t.Errorf("answers (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.failed, failed); d != "" {
				t.Errorf("failed (-want +got):\n%s", d)
			}
			if r := s.Spend().Requests; r != tt.requests {
				t.Errorf("requests: got %d, want %d", r, tt.requests)
			}
		})
	}
}

func FuzzRead(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join("testdata", "preds.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"custom_id":"a","response":"<answer>[1, 2]</answer>"}` + "\n"))
	f.Add([]byte("\n\n{\"custom_id\":\"\\u00e9\",\"response\":\"\"}"))
	f.Add([]byte(`{"custom_id":1}`))
	f.Add([]byte(`{"custom_id":"a","response":"r","usage":{"prompt_tokens":9,"completion_tokens":3,"reasoning_tokens":1,"cached_tokens":4}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		preds, err := Read(strings.NewReader(string(data)), "f")
		if err != nil {
			return
		}
		for _, p := range preds {
			if u := p.Usage; u != nil && (u.CachedTokens > u.PromptTokens || u.CachedTokens < 0 || u.ReasoningTokens > u.CompletionTokens) {
				t.Errorf("read an impossible usage %+v", *u)
			}
		}
		// What was read writes back and reads the same.
		var b strings.Builder
		for _, p := range preds {
			b.Write(Marshal(p))
		}
		again, err := Read(strings.NewReader(b.String()), "f")
		for i := range preds {
			preds[i].Line = 0
		}
		for i := range again {
			again[i].Line = 0
		}
		if err != nil || !cmp.Equal(preds, again) {
			t.Fatalf("round trip: %v, %v -> %v", preds, err, again)
		}
	})
}

func TestLogResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "preds.jsonl")
	l, preds, err := OpenLog(path, "m1")
	if err != nil || len(preds) != 0 {
		t.Fatalf("new log: %v, %v", preds, err)
	}
	for _, id := range []string{"a", "b"} {
		if err := l.Append(Prediction{CustomID: id, Response: "r" + id}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	// The process dies while writing a third line.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"custom_id":"c","resp`)
	f.Close()

	l, preds, err = OpenLog(path, "m1")
	if err != nil {
		t.Fatal(err)
	}
	want := []Prediction{{CustomID: "a", Response: "ra", Model: "m1", Line: 1}, {CustomID: "b", Response: "rb", Model: "m1", Line: 2}}
	if d := cmp.Diff(want, preds); d != "" {
		t.Errorf("reopened (-want +got):\n%s", d)
	}
	if !l.Has("a") || l.Has("c") {
		t.Errorf("Has: a %t, c %t; want true, false", l.Has("a"), l.Has("c"))
	}
	l.Append(Prediction{CustomID: "c", Response: "rc"})
	l.Close()
	data, _ := os.ReadFile(path)
	wantFile := `{"custom_id":"a","response":"ra","model":"m1"}` + "\n" +
		`{"custom_id":"b","response":"rb","model":"m1"}` + "\n" +
		`{"custom_id":"c","response":"rc","model":"m1"}` + "\n"
	if string(data) != wantFile {
		t.Errorf("file:\n%s\nwant:\n%s", data, wantFile)
	}

	if _, _, err := OpenLog(path, "m2"); !errors.Is(err, ErrModel) {
		t.Errorf("other model: got %v, want ErrModel", err)
	}
}

func TestLogKeepsCompleteLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "preds.jsonl")
	os.WriteFile(path, []byte(`{"custom_id":"a","response":"x"}`), 0o644)
	l, preds, err := OpenLog(path, "")
	if err != nil || len(preds) != 1 {
		t.Fatalf("got %v, %v; want the one line", preds, err)
	}
	l.Append(Prediction{CustomID: "b", Response: "y"})
	l.Close()
	data, _ := os.ReadFile(path)
	if want := `{"custom_id":"a","response":"x"}` + "\n" + `{"custom_id":"b","response":"y"}` + "\n"; string(data) != want {
		t.Errorf("file: got %q, want %q", data, want)
	}
}

// TestResumeFile resumes a ledger holding one answer to the same request
// and one failure: it asks only the failed and the missing probes.
func TestResumeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.jsonl")
	var asked []string
	c := clientFunc(func(p Probe) (Prediction, error) {
		asked = append(asked, p.CustomID)
		return Prediction{CustomID: p.CustomID, Response: "r"}, nil
	})
	ps := probes(3)
	key := RequestKey(c, "m", ps[0].Messages)
	os.WriteFile(path, []byte(`{"custom_id":"t0_probe_after_turn_0","response":"x","model":"m","request_sha256":"`+key+`"}`+"\n"+
		`{"custom_id":"t1_probe_after_turn_0","error":"attempt 6 of 6: 503","model":"m"}`+"\n"), 0o644)
	before, st, err := ResumeFile(t.Context(), c, ps, path, "m", Options{Concurrency: 1})
	if err != nil || before != 1 || st.Answered != 2 || st.Stale != 0 || !cmp.Equal(asked, []string{"t1_probe_after_turn_0", "t2_probe_after_turn_0"}) {
		t.Errorf("got before %d, %+v, %v, asked %v; want 1 before and t1, t2 asked", before, st, err, asked)
	}
	set, err := ReadFile(path)
	if err != nil || set.Answers() != 3 || set.Failures() != 0 || set.Lines() != 4 {
		t.Errorf("ledger: %v; want 3 answers and 4 lines", err)
	}
}

// TestResumeStale reuses a ledger on probes with the same custom_ids but
// other prompts (data built with another budget), then with other
// sampling: every probe is asked again, counted stale, and Only gives the
// answers to the requests of the run, not the first run's.
func TestResumeStale(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.jsonl")
	answer := func(p Probe) (Prediction, error) {
		return Prediction{CustomID: p.CustomID, Response: p.Messages[1].Content}, nil
	}
	first := probes(3)
	if before, st, err := ResumeFile(t.Context(), clientFunc(answer), first, path, "m", Options{}); err != nil || before != 0 || st.Answered != 3 {
		t.Fatalf("first run: before %d, %+v, %v", before, st, err)
	}
	second := probes(3)
	for i := range second {
		second[i].Messages = []rollout.Message{second[i].Messages[0], {Role: "user", Content: "budget 3000: " + second[i].Messages[1].Content}}
	}
	other := &Ollama{Model: "m", Temperature: 0.7}
	runs := []struct {
		name  string
		c     Client
		ps    []Probe
		stale int
	}{
		{"same prompts", clientFunc(answer), first, 0},
		{"other prompts", clientFunc(answer), second, 3},
		{"other prompts again", clientFunc(answer), second, 0},
		{"back to the first prompts", clientFunc(answer), first, 0},
		{"other sampling", &sampled{other, answer}, first, 3},
	}
	for _, r := range runs {
		before, st, err := ResumeFile(t.Context(), r.c, r.ps, path, "m", Options{})
		if err != nil || before != 3-r.stale || st.Probes != r.stale || st.Stale != r.stale {
			t.Errorf("%s: before %d, %+v, %v; want %d reused, %d asked again", r.name, before, st, err, 3-r.stale, r.stale)
		}
		set, err := ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		only := set.Only(RequestKeys(r.c, "m", r.ps))
		for _, p := range r.ps {
			if a, ok := only.Answer(p.CustomID); !ok || a.Response != p.Messages[1].Content {
				t.Errorf("%s: %s: got %q, %t; want the answer to %q", r.name, p.CustomID, a.Response, ok, p.Messages[1].Content)
			}
		}
	}
}

// sampled is a client with an Ollama's sampling settings that answers by
// a function.
type sampled struct {
	*Ollama
	f func(Probe) (Prediction, error)
}

func (s *sampled) Complete(_ context.Context, p Probe) (Prediction, error) { return s.f(p) }

type clientFunc func(Probe) (Prediction, error)

func (f clientFunc) Complete(_ context.Context, p Probe) (Prediction, error) { return f(p) }
