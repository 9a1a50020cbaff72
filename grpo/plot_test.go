package grpo

import (
	"bytes"
	"strings"
	"testing"

	"bagen-data/eval"
)

func TestPlot(t *testing.T) {
	recs := []Record{
		{Type: "epoch", Phase: "init", Eval: &EpochEval{Train: TrainReward{Reward: 0.1}, Eval: Headline{"reward": 0.1, "accuracy": 0.5, "coverage": eval.NaN}}},
		{Type: "grpo_step", Phase: "grpo", Epoch: 1, Step: 1, GRPO: &GRPOStep{Reward: 0.2, RewardPossible: 0.3, RewardImpossible: eval.NaN}},
		{Type: "grpo_step", Phase: "grpo", Epoch: 1, Step: 2, GRPO: &GRPOStep{Reward: 0.4, RewardPossible: 0.5, RewardImpossible: 0.2}},
		{Type: "epoch", Phase: "grpo", Epoch: 1, Step: 2, Eval: &EpochEval{Train: TrainReward{Reward: 0.3}, Eval: Headline{"reward": 0.25, "accuracy": 0.9, "coverage": 0.4}}},
	}
	var a, b bytes.Buffer
	if err := Plot(&a, recs); err != nil {
		t.Fatal(err)
	}
	if err := Plot(&b, recs); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two renderings differ")
	}
	page := a.String()
	for _, want := range []string{
		// step chart: 420 px wide plot from x=50; y from 0 to 1 over 250 px from y=10.
		`<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="50.00,210.00 540.00,160.00"/>`,
		// the impossible-probe series starts undefined: one point, no line.
		`<text x="540.00" y="276" font-size="11" text-anchor="middle">2</text>`,
		// epoch chart: coverage is undefined at init, so its line has one point.
		`<circle cx="540.00" cy="160.00" r="3" fill="#9467bd"/>`,
		`>grpo 1</text>`,
		`>init</text>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if n := strings.Count(page, "<svg "); n != 2 {
		t.Errorf("%d charts, want 2", n)
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "http://") && !strings.Contains(page, `xmlns="http://www.w3.org/2000/svg"`) {
		t.Error("page is not self-contained")
	}
}
