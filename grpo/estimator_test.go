package grpo

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

func TestTempered(t *testing.T) {
	d := Dist{Kind: [2]float64{math.Log(0.75), math.Log(0.25)},
		Centre: []float64{math.Log(0.5), math.Log(0.3), math.Log(0.2)}, Width: []float64{math.Log(0.9), math.Log(0.1)}}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	one := d.Tempered(1)
	for i, v := range d.Centre {
		if !near(one.Centre[i], v) {
			t.Errorf("temperature 1: centre %d log-prob %v, want %v", i, one.Centre[i], v)
		}
	}
	// At temperature 2 each probability becomes √p / Σ√p.
	two := d.Tempered(2)
	want := math.Sqrt(0.75) / (math.Sqrt(0.75) + math.Sqrt(0.25))
	if got := math.Exp(two.Kind[0]); !near(got, want) {
		t.Errorf("temperature 2: p(interval) %v, want %v", got, want)
	}
	if d.Kind[0] != math.Log(0.75) {
		t.Error("Tempered modified its input")
	}
	cold := d.Tempered(1e-3)
	if g := cold.Greedy(); g != d.Greedy() || math.Exp(cold.Centre[0]) < 0.999999 {
		t.Errorf("temperature 0.001: greedy %+v, p(centre 0) %v; want the greedy action almost surely", g, math.Exp(cold.Centre[0]))
	}
}

func TestNewEstimatorChecksHead(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	good := func() *State {
		return &State{Policy: NewHead(10, 4, DefaultBins, len(DefaultWidths), rng)}
	}
	if _, err := NewEstimator(&Encoder{}, good(), 1); err != nil {
		t.Fatalf("a sound head: %v", err)
	}
	tests := []struct {
		name    string
		breakIt func(*State)
		want    string
	}{
		{"no head", func(s *State) { s.Policy = nil }, "invalid checkpoint: no policy head"},
		{"short W1", func(s *State) { s.Policy.W1 = s.Policy.W1[:39] }, "invalid checkpoint: head W1: 39 values, want 40 (in 10, hidden 4)"},
		{"bins of another space", func(s *State) { s.Config.Space.Bins = 20 },
			"invalid checkpoint: head of 40 centre bins and 5 widths, its action space 20 and 5"},
		{"no numeric features", func(s *State) { *s = State{Policy: NewHead(6, 4, DefaultBins, len(DefaultWidths), rng)} },
			"invalid checkpoint: head of 6 inputs and 4 hidden units, want more than the 6 numeric features and at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := good()
			tt.breakIt(st)
			_, err := NewEstimator(&Encoder{}, st, 1)
			if err == nil || err.Error() != tt.want || !errors.Is(err, ErrCheckpoint) {
				t.Errorf("got %v, want %s", err, tt.want)
			}
		})
	}
}

func TestRunName(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "my-run")
	ckpt := filepath.Join(run, CheckpointDir, "grpo-02")
	if err := os.MkdirAll(ckpt, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ckpt, StateFile), []byte("x"), 0o644)
	for _, p := range []string{run, ckpt, filepath.Join(ckpt, StateFile)} {
		if got := RunName(p); got != "my-run" {
			t.Errorf("RunName(%s) = %q before eval.json, want the directory's name", p, got)
		}
	}
	os.WriteFile(filepath.Join(run, EvalFile), []byte(`{"name": "sft-e5"}`), 0o644)
	for _, p := range []string{run, ckpt, filepath.Join(ckpt, StateFile)} {
		if got := RunName(p); got != "sft-e5" {
			t.Errorf("RunName(%s) = %q, want eval.json's name", p, got)
		}
	}
}
