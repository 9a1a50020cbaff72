package eval

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/dataset"
	"bagen-data/eval/prediction"
	"bagen-data/reward"
)

// Hand-computed Warehouse table: replay probes start after turn 1. Each
// dimension scores 1[lo ≤ v ≤ hi]·max(0, 1 − (hi − lo)/v) ([0, 0] scores 1
// at v = 0); R = 1.8 × their mean, S = their mean.
//
//	id  T  truth (time, item-weeks, cost)  answer (time; item-weeks; cost)        cov  miss          MRE (mean over v > 0)          R     S
//	W1  4  possible (6, 1000, 2000)        [4,10]; [900,1100]; [1500,2600]        yes  -             (1/6 + 0 + 0.025)/3 = 23/360   0.75  5/12
//	W2  4  possible (4, 0, 1200)           [1,2]; [0,0]; [1000,1400]              no   optimistic    (0.625 + 0)/2 = 0.3125         1.0   5/9
//	W3  4  possible (2, 50, 400)           time [2,2] only: not an interval        -    -             -                              0.6   1/3
//	X1  3  impossible                      impossible                             -    -             -                              0.2   -
//	X2  3  impossible                      [100, 200] (token format: invalid)      -    -             -                              0     -
//	Y1  2  possible (2, 10, 100)           [3,5]; [20,30]; [50,150]               no   conservative  (1 + 1.5 + 0)/3 = 5/6          0     0
//	Z1  2  possible (2, 10, 100)           [0,1]; [20,30]; [100,100]              no   neither       (0.75 + 1.5 + 0)/3 = 0.75      0.6   1/3
//
// W1 dims: time 1 − 6/6 = 0, item-weeks 1 − 200/1000 = 0.8, cost
// 1 − 1100/2000 = 0.45. W2: time missed (0), item-weeks 1, cost 2/3. Y1:
// time and item-weeks above the truth, cost 1 − 100/100 = 0. Z1: time below,
// item-weeks above, cost 1.
func warehouseTable() []Scored {
	row := func(id string, p, T int64, possible bool, v [reward.NumDims]float64, answer string) Scored {
		t := Truth{CustomID: id, TrajectoryID: id[:1], ProbeAfterTurn: p, TotalTurns: T, Target: reward.WarehouseTarget(reward.WarehouseTruth{Remaining: v, Possible: possible})}
		return NewScored(t, "<think>…</think><answer>"+answer+"</answer>")
	}
	none := [reward.NumDims]float64{}
	return []Scored{
		row("W1", 1, 4, true, [3]float64{6, 1000, 2000}, "time_weeks:[4, 10], warehouse_item_weeks:[900, 1100], cumulative_cost_usd:[1500, 2600]"),
		row("W2", 2, 4, true, [3]float64{4, 0, 1200}, "time_weeks:[1, 2], warehouse_item_weeks:[0, 0], cumulative_cost_usd:[1000, 1400]"),
		row("W3", 3, 4, true, [3]float64{2, 50, 400}, "time_weeks:[2, 2]"),
		row("X1", 1, 3, false, none, "impossible"),
		row("X2", 2, 3, false, none, "[100, 200]"),
		row("Y1", 1, 2, true, [3]float64{2, 10, 100}, "time_weeks:[3, 5], warehouse_item_weeks:[20, 30], cumulative_cost_usd:[50, 150]"),
		row("Z1", 1, 2, true, [3]float64{2, 10, 100}, "time_weeks:[0, 1], warehouse_item_weeks:[20, 30], cumulative_cost_usd:[100, 100]"),
	}
}

func TestComputeWarehouse(t *testing.T) {
	got := Compute(warehouseTable())
	got.Bins = nil
	want := Metrics{
		Probes: 7, TruePossible: 5, TrueImpossible: 2,
		Confusion: Confusion{
			Possible:   Counts{Possible: 5},
			Impossible: Counts{Impossible: 1, Invalid: 1},
		},
		Accuracy: 6.0 / 7, RecallPossible: 1, RecallImpossible: 0.5, PrecisionImpossible: 1,
		// W1, W2, X1, Y1, Z1; W3 lacks two dimensions, X2 is a token answer.
		FormatValid: 5.0 / 7,
		// F1 possible = 10/10; F1 impossible = 2/(2 + 0 FP + 1 FN) = 2/3.
		F1All: (1 + 2.0/3) / 2, FailF1: 2.0 / 3,
		// First probes W1, X1, Y1, Z1 (p = 1): all right.
		F1First: 1, FirstTurnProbes: 4,
		Intervals: 4, Covered: 1, Coverage: 0.25, HitRate: 0.2,
		// MRE sorted [23/360, 0.3125, 0.75, 5/6]: P50 at h = 1.5 →
		// 0.3125 + 0.5·0.4375 = 0.53125; P90 at h = 2.7 → 0.75 + 0.7/12.
		MREP50: 0.53125, MREP90: 0.75 + 0.7/12,
		MREMean:  (23.0/360 + 0.3125 + 0.75 + 5.0/6) / 4,
		MRECount: 4,
		// R: (0.75 + 1 + 0.6 + 0.2 + 0 + 0 + 0.6) / 7; S: (5/12 + 5/9 + 1/3
		// + 0 + 1/3) / 5 = 59/180.
		Reward: 3.15 / 7, Score: 59.0 / 180,
		RewardPossible: 2.95 / 5, RewardImpossible: 0.1,
		// S of the intervals W1 W2 Y1 Z1: 5/12 + 5/9 + 0 + 1/3; W1 covers.
		ScoreIntervals: (5.0/12 + 5.0/9 + 1.0/3) / 4, ScoreCovered: 5.0 / 12,
		Misses: 3, Optimistic: 1, Conservative: 1, OptimisticShare: 1.0 / 3, ConservativeShare: 1.0 / 3,
		TaskSuccess: NaN, MeanTurns: 2.75, // no task success on Warehouse probes
		Dims: []DimMetrics{
			// W1 W2 W3 Y1 Z1, covered W1 W3; MRE [0, 1/6, 0.625, 0.75, 1].
			{Dim: "time_weeks", Intervals: 5, Covered: 2, Coverage: 0.4, MREP50: 0.625, MREP90: 0.9},
			// W1 W2 Y1 Z1, covered W1 W2; MRE [0, 1.5, 1.5] (W2's v = 0).
			{Dim: "warehouse_item_weeks", Intervals: 4, Covered: 2, Coverage: 0.5, MREP50: 1.5, MREP90: 1.5},
			// All four covered; MRE [0, 0, 0, 0.025].
			{Dim: "cumulative_cost_usd", Intervals: 4, Covered: 4, Coverage: 1, MREP50: 0, MREP90: 0.0175},
		},
		// W, Y, Z successful, X failed and stopped at X1; no tokens.
		EarlyStop: EarlyStop{
			Trajectories: 4, Successful: 3, Failed: 1, SuccessProbes: 5,
			FalseAbortRate: 0, SuccessDrop: 0, StoppedFailed: 1, StoppedFailedShare: 1, SavedShare: NaN,
			AbortedSuccessfulShare: 0,
			// Six probes answered up to the stops (X2 comes after X's stop
			// at X1, which lists no turns), none with usage.
			Net: Net{EstimatorProbes: 6, WithoutUsage: 6, Share: NaN, WithoutTurns: 1},
		},
	}
	// No probe before the first turn: the live replay is the same one.
	// No tokens: no curve.
	if live := got.EarlyStop.Live; live == nil || live.Trajectories != 4 || live.StoppedFailed != 1 || live.NotAsked != 0 {
		t.Errorf("live replay: got %+v, want the same trajectories, none left out", live)
	}
	if got.EarlyStop.Curve != nil {
		t.Errorf("curve on Warehouse probes: got %v, want none", got.EarlyStop.Curve)
	}
	got.EarlyStop.Live = nil
	if d := cmp.Diff(want, got, approx); d != "" {
		t.Errorf("Compute mismatch (-want +got):\n%s", d)
	}
}

// TestWarehouseRows pins the per-row view the metrics read.
func TestWarehouseRows(t *testing.T) {
	tests := []struct {
		id                       string
		class                    reward.Class
		valid, interval, covered bool
		direction                int
		mre, reward, score       float64
	}{
		{"W1", reward.ClassPossible, true, true, true, 0, 23.0 / 360, 0.75, 5.0 / 12},
		{"W2", reward.ClassPossible, true, true, false, -1, 0.3125, 1, 5.0 / 9},
		{"W3", reward.ClassPossible, false, false, false, 0, 0, 0.6, 1.0 / 3},
		{"X1", reward.ClassImpossible, true, false, false, 0, 0, 0.2, 0},
		{"X2", reward.ClassInvalid, false, false, false, 0, 0, 0, 0},
		{"Y1", reward.ClassPossible, true, true, false, 1, 5.0 / 6, 0, 0},
		{"Z1", reward.ClassPossible, true, true, false, 0, 0.75, 0.6, 1.0 / 3},
	}
	rows := warehouseTable()
	for i, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			r := rows[i]
			if r.CustomID != tt.id {
				t.Fatalf("row %d is %s, want %s", i, r.CustomID, tt.id)
			}
			got := []any{r.Class(), r.FormatValid(), r.WellFormed(), r.AllCovered()}
			if d := cmp.Diff([]any{tt.class, tt.valid, tt.interval, tt.covered}, got); d != "" {
				t.Errorf("class, format-valid, interval, covered (-want +got):\n%s", d)
			}
			if r.WellFormed() && !r.AllCovered() && r.Miss() != tt.direction {
				t.Errorf("miss direction: got %d, want %d", r.Miss(), tt.direction)
			}
			if r.WellFormed() && !cmp.Equal(r.MidRelErr(), tt.mre, approxFloat) {
				t.Errorf("MRE: got %v, want %v", r.MidRelErr(), tt.mre)
			}
			if !cmp.Equal(r.Detail.Reward, tt.reward, approxFloat) || !cmp.Equal(r.Score, tt.score, approxFloat) {
				t.Errorf("R, S: got %v, %v; want %v, %v", r.Detail.Reward, r.Score, tt.reward, tt.score)
			}
		})
	}
}

var approxFloat = cmp.Comparer(func(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 })

func TestTruthOf(t *testing.T) {
	row := func(label string) dataset.RLRow {
		return dataset.RLRow{Label: label, ExtraInfo: dataset.ExtraInfo{
			CustomID: "w_probe_after_turn_2", ProbeAfterTurn: 2, TotalTurns: 5, TokensUsed: 300, RemainingTokens: 700, IsPossible: true,
		}}
	}
	base := Truth{CustomID: "w_probe_after_turn_2", TrajectoryID: "w", ProbeAfterTurn: 2, TotalTurns: 5, TokensUsed: 300, Target: Tokens(700, true)}
	impossible := func(r int64) Truth {
		t := base
		t.Target = Tokens(r, false)
		return t
	}
	withWarehouse := func(possible bool, v [reward.NumDims]float64) Truth {
		t := base
		t.Target = reward.WarehouseTarget(reward.WarehouseTruth{Remaining: v, Possible: possible})
		return t
	}
	tests := []struct {
		name, label string
		want        Truth
		err         string
	}{
		{"no label: extra_info", "", base, ""},
		{"token label", `{"remaining_tokens":700,"is_possible":true,"ground_truth":"[490, 910]"}`, base, ""},
		// An impossible label keeps its remaining tokens (the early stop
		// saves them); one that gives none takes extra_info's.
		{"impossible label", `{"remaining_tokens":2200,"is_possible":false,"ground_truth":"impossible"}`, impossible(2200), ""},
		{"impossible label without remaining tokens", `{"is_possible":false}`, impossible(700), ""},
		{"bare impossible label", "impossible", impossible(700), ""},
		{"warehouse possible",
			`{"time_weeks":20,"warehouse_item_weeks":168156,"cumulative_cost_usd":968798.33,"is_possible":true,"ground_truth":"…"}`,
			withWarehouse(true, [3]float64{20, 168156, 968798.33}), ""},
		// The label's is_possible wins over extra_info's.
		{"warehouse impossible",
			`{"time_weeks":2,"warehouse_item_weeks":2200,"cumulative_cost_usd":68700.5,"is_possible":false,"ground_truth":"impossible"}`,
			withWarehouse(false, [3]float64{}), ""},
		{"warehouse missing a dimension", `{"time_weeks":2,"is_possible":true}`, base,
			"invalid label: warehouse_item_weeks: missing"},
		{"garbage", "soon", base, `invalid label: want a JSON object, "impossible" or a non-negative integer, got "soon"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := TruthOf(row(tt.label))
			if d := cmp.Diff(tt.want, got, cmp.AllowUnexported(reward.Target{})); d != "" {
				t.Errorf("TruthOf(%s) mismatch (-want +got):\n%s", tt.label, d)
			}
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("TruthOf(%s): got error %v, want none", tt.label, err)
			case tt.err != "" && (err == nil || err.Error() != tt.err || !errors.Is(err, reward.ErrLabel)):
				t.Errorf("TruthOf(%s): got error %v, want %q wrapping reward.ErrLabel", tt.label, err, tt.err)
			}
		})
	}
}

func TestScoreLabelErrors(t *testing.T) {
	rows := []dataset.RLRow{
		{ExtraInfo: dataset.ExtraInfo{CustomID: "a_probe_after_turn_1"}, Label: `{"is_possible":false}`},
		{ExtraInfo: dataset.ExtraInfo{CustomID: "b_probe_after_turn_1"}, Label: `{"time_weeks":1}`},
	}
	j := Score(rows, prediction.FromResponses(map[string]string{"a_probe_after_turn_1": "<answer>impossible</answer>"}))
	if len(j.LabelErrors) != 1 {
		t.Fatalf("got %d label errors, want 1: %v", len(j.LabelErrors), j.LabelErrors)
	}
	e := j.LabelErrors[0]
	if want := "row 1 (b_probe_after_turn_1): label: invalid label: is_possible: missing"; e.Error() != want || !errors.Is(e, reward.ErrLabel) {
		t.Errorf("got %q, want %q wrapping reward.ErrLabel", e.Error(), want)
	}
	if got := j.Rows[0].Detail.Reward; got != 0.2 {
		t.Errorf("row 0 reward: got %v, want 0.2", got)
	}
}

func TestWarehouseGroundTruth(t *testing.T) {
	// The probes' ground-truth answers score R = 1.8 and S = 1, cover every
	// dimension and have no error, including a dimension with v = 0.
	v := [reward.NumDims]float64{20, 0, 968798.33}
	r := NewScored(Truth{TrajectoryID: "w", ProbeAfterTurn: 1, TotalTurns: 12, Target: reward.WarehouseTarget(reward.WarehouseTruth{Remaining: v, Possible: true})},
		"<answer>time_weeks:[20, 20], warehouse_item_weeks:[0, 0], cumulative_cost_usd:[968798.33, 968798.33]</answer>")
	if r.Detail.Reward != 1.8 || r.Score != 1 || !r.WellFormed() || !r.AllCovered() || r.MidRelErr() != 0 {
		t.Errorf("got R %v, S %v, interval %t, covered %t, MRE %v; want 1.8, 1, true, true, 0",
			r.Detail.Reward, r.Score, r.WellFormed(), r.AllCovered(), r.MidRelErr())
	}
}
