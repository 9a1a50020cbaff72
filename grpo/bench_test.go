package grpo

import (
	"context"
	"math/rand/v2"
	"testing"

	"bagen-data/reward"
)

// benchData is n RL probes with dim-dimensional random embeddings (3584 is
// Qwen2.5-7B's hidden size) and a few eval probes.
func benchData(n, dim int) *Data {
	rng := rand.New(rand.NewPCG(5, 5))
	ps, _, rows := synthProbes(n, 11, "b")
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = make([]float32, dim)
		for j := range vecs[i] {
			vecs[i][j] = float32(rng.NormFloat64())
		}
	}
	for i := range ps {
		ps[i].Target = ""
	}
	d, err := NewData(Sources{RL: ps, Eval: ps[:8], EvalRows: rows[:8]}, append(vecs, vecs[:8]...), Space{})
	if err != nil {
		panic(err)
	}
	return d
}

// BenchmarkGRPOEpoch measures policy steps per second of zero-RL GRPO
// (16 prompts × 16 samples a step, 2 updates) on 7B-sized embeddings,
// cached: no Ollama in the loop.
func BenchmarkGRPOEpoch(b *testing.B) {
	data := benchData(160, 3584)
	cfg := Config{Init: InitRandom, Epochs: new(1)}
	var steps int
	b.ResetTimer()
	for range b.N {
		res, err := Train(context.Background(), cfg, data, Options{Out: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		steps += res.Steps
	}
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
}

// BenchmarkExpectedReward is the per-probe cost of the exact expected
// reward over the 201 actions.
func BenchmarkExpectedReward(b *testing.B) {
	h, s := testSamples()
	d := h.Forward(s.X[0])
	sp := Space{Bins: h.Bins, Widths: []float64{0.1, 0.3}}
	for range b.N {
		ExpectedReward(d, sp, 2500, reward.Truth{Remaining: 400, Possible: true})
	}
}
