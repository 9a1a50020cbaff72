package eval_test

import (
	"fmt"
	"os"
	"strings"

	"bagen-data/dataset"
	"bagen-data/eval"
	"bagen-data/eval/prediction"
	"bagen-data/reward"
)

func ExampleCompute() {
	rows := []eval.Scored{
		// Trajectory a succeeds: 500 tokens remain after the first probe, 200
		// after the second.
		eval.NewScored(eval.Truth{CustomID: "a_probe_after_turn_0", TrajectoryID: "a", TotalTurns: 2,
			TokensUsed: 300, Target: eval.Tokens(500, true)}, "<answer>[400, 600]</answer>"),
		eval.NewScored(eval.Truth{CustomID: "a_probe_after_turn_1", TrajectoryID: "a", ProbeAfterTurn: 1, TotalTurns: 2,
			TokensUsed: 600, Target: eval.Tokens(200, true)}, "<answer>[100, 150]</answer>"),
		// Trajectory b fails.
		eval.NewScored(eval.Truth{CustomID: "b_probe_after_turn_0", TrajectoryID: "b", TotalTurns: 3,
			TokensUsed: 300, Target: eval.Tokens(2600, false)}, "<think>The box is stuck.</think><answer>impossible</answer>"),
	}
	m := eval.Compute(rows)
	fmt.Println("Acc", m.Accuracy.Pct(), "Fail-F1", m.FailF1.Pct())
	fmt.Println("Cover", m.Coverage.Pct(), "MRE P50", m.MREP50.Pct())
	fmt.Println("R", m.Reward.Fixed(3), "S", m.Score.Fixed(3))
	fmt.Println("optimistic misses", m.Optimistic, "of", m.Misses)
	fmt.Println("tokens saved on failed", m.EarlyStop.SavedShare.Pct())
	// Output:
	// Acc 100.0% Fail-F1 100.0%
	// Cover 50.0% MRE P50 18.8%
	// R 0.427 S 0.300
	// optimistic misses 1 of 1
	// tokens saved on failed 89.7%
}

func ExampleWriteCompare() {
	runs := []eval.Run{
		{Name: "SFT pct30 e5", Metrics: eval.Metrics{Accuracy: 0.911, RecallPossible: 0.953, RecallImpossible: 0.868,
			Coverage: 0.374, MREP50: 0.539, MREP90: 0.864, Reward: 0.210}},
		{Name: "Zero RL no think", Metrics: eval.Metrics{Accuracy: 0.5, RecallPossible: 0, RecallImpossible: 1,
			Coverage: eval.NaN, MREP50: eval.NaN, MREP90: eval.NaN, Reward: 0.1}},
	}
	eval.WriteCompare(os.Stdout, runs)
	// Output:
	// SFT/RL sweep layout
	// run                 Acc  Rec pos  Rec imp  Cover  MRE P50  MRE P90      R
	// SFT pct30 e5      91.1%    95.3%    86.8%  37.4%    53.9%    86.4%  0.210
	// Zero RL no think  50.0%     0.0%   100.0%      -        -        -  0.100
	//
	// overall layout (Success and Turns describe the probed rollouts; Reward is S over truly possible probes, ≤ Hit)
	// model             Success  Turns  F1@1  F1@All  Fail F1   Hit  Reward
	// SFT pct30 e5         0.0%   0.00  0.0%    0.0%     0.0%  0.0%   0.000
	// Zero RL no think     0.0%   0.00  0.0%    0.0%     0.0%  0.0%   0.000
	//
	// early stop layout (gross saved share as the paper reports it; net of the estimator's tokens up to each stop)
	// run               false aborts  runs aborted  saved  estimator tokens  net tokens   net  net $
	// SFT pct30 e5              0.0%          0.0%   0.0%                 -           -  0.0%      -
	// Zero RL no think          0.0%          0.0%   0.0%                 -           -  0.0%      -
}

func ExamplePercentileLinear() {
	mre := []float64{0.5, 0, 1.0 / 3, 0}
	fmt.Printf("P50 %.4f P90 %.4f\n", eval.PercentileLinear(mre, 50), eval.PercentileLinear(mre, 90))
	// Output: P50 0.1667 P90 0.4500
}

func ExampleCompute_warehouse() {
	// A Warehouse probe: 6 weeks, 1000 item-weeks and $2000 of cost remain.
	truth := eval.Truth{CustomID: "w_probe_after_turn_1", TrajectoryID: "w", ProbeAfterTurn: 1, TotalTurns: 4,
		Target: reward.WarehouseTarget(reward.WarehouseTruth{Remaining: [3]float64{6, 1000, 2000}, Possible: true})}
	rows := []eval.Scored{eval.NewScored(truth,
		"<answer>time_weeks:[4, 10], warehouse_item_weeks:[900, 1100], cumulative_cost_usd:[1500, 2600]</answer>")}
	m := eval.Compute(rows)
	fmt.Println("Cover", m.Coverage.Pct(), "MRE P50", m.MREP50.Pct(), "R", m.Reward.Fixed(3))
	for _, d := range m.Dims {
		fmt.Println(d.Dim, "MRE", d.MREP50.Pct())
	}
	// Output:
	// Cover 100.0% MRE P50 6.4% R 0.750
	// time_weeks MRE 16.7%
	// warehouse_item_weeks MRE 0.0%
	// cumulative_cost_usd MRE 2.5%
}

func ExampleJoin() {
	row := func(id string) dataset.RLRow { return dataset.RLRow{ExtraInfo: dataset.ExtraInfo{CustomID: id}} }
	// Oversampling repeated probe a; c has no answer; z is no probe.
	rows := []dataset.RLRow{row("a"), row("b"), row("a"), row("c")}
	lines := `{"custom_id":"a","response":"<answer>[1, 2]</answer>"}
{"custom_id":"b","response":"<answer>impossible</answer>"}
{"custom_id":"c","error":"attempt 6 of 6: 503 Service Unavailable: busy","attempts":6}
{"custom_id":"z","response":"<answer>impossible</answer>"}
`
	preds, _ := prediction.Read(strings.NewReader(lines), "preds.jsonl")
	set, _ := prediction.NewSet(preds, "preds.jsonl")
	m := eval.Join(rows, set)
	fmt.Println(m.Summary())
	for _, p := range m.Probes {
		fmt.Printf("%s: row %d, %d copies, answered %t\n", p.Row.ExtraInfo.CustomID, p.Index, p.Copies, p.Answered)
	}
	// Output:
	// 3 probes (4 data rows), 1 without a prediction (c) of which 1 failed to answer, 1 predictions for unknown ids (z)
	// a: row 0, 2 copies, answered true
	// b: row 1, 1 copies, answered true
	// c: row 3, 1 copies, answered false
}
