package prediction

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"bagen-data/internal/ollamatest"
)

// TestRealOllama asks a real Ollama server (the tiny Qwen2 model of
// internal/ollamatest) twice into two logs: greedy decoding with a fixed
// seed gives the same answers both times.
func TestRealOllama(t *testing.T) {
	s := ollamatest.Start(t)
	ps := probes(3)
	run := func(name string) []Prediction {
		log, _, err := OpenLog(filepath.Join(t.TempDir(), name), s.Model)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		asked, err := Resume(t.Context(), s.Client(), ps, log, Options{Model: s.Model, Seed: 42, NumPredict: 24, Concurrency: 2})
		if err != nil || asked != 3 {
			t.Fatalf("asked %d, %v; want 3\n%s", asked, err, s.Logs())
		}
		t.Logf("3 probes, 24 tokens each: %v", time.Since(start))
		log.Close()
		_, preds, err := OpenLog(log.path, s.Model)
		if err != nil {
			t.Fatal(err)
		}
		return preds
	}
	first, second := run("a.jsonl"), run("b.jsonl")
	if len(first) != 3 {
		t.Fatalf("got %d predictions, want 3", len(first))
	}
	byID := func(ps []Prediction) map[string]string {
		m, err := Map(ps)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if d := cmp.Diff(byID(first), byID(second)); d != "" {
		t.Errorf("two greedy runs differ (-first +second):\n%s", d)
	}
	for _, p := range first {
		if p.Model != s.Model || p.Response == "" {
			t.Errorf("prediction %+v: want model %q and a response", p, s.Model)
		}
	}
}
