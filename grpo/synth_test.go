package grpo

import (
	"fmt"
	"math"
	"math/rand/v2"

	"bagen-data/dataset"
	"bagen-data/reward"
)

// synthProbes returns n probes with budget 2500 whose truth is a function
// of a 4-dimensional "embedding": impossible when e0 < 0, otherwise
// r = 20·100^u tokens with u = min(|e1|/2, 1), from 20 to 2000. SFT probes
// carry the pct30 target answer.
func synthProbes(n int, seed uint64, prefix string) ([]Probe, [][]float32, []dataset.RLRow) {
	rng := rand.New(rand.NewPCG(seed, 7))
	var ps []Probe
	var vecs [][]float32
	var rows []dataset.RLRow
	for i := range n {
		e := []float32{float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64()), 1}
		possible := e[0] >= 0
		r := int64(math.Round(20 * math.Pow(100, math.Min(math.Abs(float64(e[1]))/2, 1))))
		target := "<answer>impossible</answer>"
		if possible {
			target = fmt.Sprintf("<answer>[%d, %d]</answer>", max(1, int64(math.Floor(float64(r)*0.7))), int64(math.Floor(float64(r)*1.3)))
		}
		id := fmt.Sprintf("%s%d_probe_after_turn_%d", prefix, i/3, i%3)
		turns := make([]dataset.TurnTokens, i%3)
		for k := range turns {
			turns[k] = dataset.TurnTokens{Turn: int64(k + 1), InputTokens: 100, OutputTokens: 50}
		}
		p := Probe{ID: id, Prompt: id, Budget: 2500, Turns: turns, Truth: reward.Truth{Remaining: r, Possible: possible}, Target: target}
		ps = append(ps, p)
		vecs = append(vecs, e)
		rows = append(rows, dataset.RLRow{ExtraInfo: dataset.ExtraInfo{
			CustomID: id, TrajectoryID: fmt.Sprintf("%s%d", prefix, i/3), ProbeAfterTurn: int64(i % 3), TotalTurns: 3,
			TokensUsed: 150 * int64(i%3), RemainingTokens: r, IsPossible: possible, Budget: 2500, PerTurnTokens: turns,
		}})
	}
	return ps, vecs, rows
}

// synthData is a small learnable data set: 240 SFT, 240 RL and 60 eval
// probes.
func synthData() *Data {
	sft, v1, _ := synthProbes(240, 1, "sft")
	rl, v2, _ := synthProbes(240, 2, "rl")
	ev, v3, rows := synthProbes(60, 3, "ev")
	for i := range rl {
		rl[i].Target = ""
	}
	d, err := NewData(Sources{SFT: sft, RL: rl, Eval: ev, EvalRows: rows}, append(append(v1, v2...), v3...), Space{})
	if err != nil {
		panic(err)
	}
	return d
}
