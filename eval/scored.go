package eval

import (
	"math"

	"bagen-data/dataset"
	"bagen-data/reward"
)

// Scored is one probe of the scored table: its truth, the parsed prediction
// and the prediction's rewards. Build rows with Score (from a parquet row)
// or NewScored (from a probe's truth).
type Scored struct {
	CustomID     string
	TrajectoryID string
	// ProbeAfterTurn and TotalTurns place the probe in its rollout; progress
	// is ProbeAfterTurn / TotalTurns.
	ProbeAfterTurn int64
	TotalTurns     int64
	// TokensUsed and Remaining are the tokens spent before the probe and the
	// true remaining tokens r (both 0 on Warehouse probes).
	TokensUsed int64
	Remaining  int64
	// Possible is the truth: the trajectory finishes within the budget.
	Possible bool

	// Prediction is the parsed answer (reward.Parse) of a token probe.
	Prediction reward.Prediction
	// Missing says no prediction was given for the probe; it is scored as
	// an unparseable answer.
	Missing bool
	// Detail is the prediction scored by reward.Train (the 1.8 / 0.2 rule
	// reward R): its class, whether it is a well-formed interval, coverage
	// and midpoint relative error. On Warehouse probes only Reward and
	// Class are set; the interval fields are those of an answer that is not
	// an interval, and WarehouseDetail holds the dimensions.
	Detail reward.Detail
	// Score is the paper's score S (eq. 4), reward.Paper: coverage ×
	// tightness on possible probes, 0 on impossible ones.
	Score float64

	// Warehouse marks a Warehouse probe: its truth is Resources, the
	// remaining usage per dimension (indexed by reward.Dim), its answer is
	// read by reward.ParseWarehouse into WarehouseAnswer and scored by
	// reward.Train.DetailWarehouse into WarehouseDetail. Prediction is zero.
	Warehouse       bool
	Resources       [reward.NumDims]float64
	WarehouseAnswer reward.Warehouse
	WarehouseDetail reward.WarehouseDetail
}

// Truth is what NewScored needs to know about a probe.
type Truth struct {
	CustomID       string
	TrajectoryID   string
	ProbeAfterTurn int64
	TotalTurns     int64
	TokensUsed     int64
	Remaining      int64
	Possible       bool
	// Warehouse marks a Warehouse probe, whose truth is Resources (the
	// remaining usage per dimension, indexed by reward.Dim) instead of
	// Remaining.
	Warehouse bool
	Resources [reward.NumDims]float64
}

// NewScored parses response and scores it against t: a token probe with
// reward.Parse, reward.Train and reward.Paper, a Warehouse probe with
// reward.ParseWarehouse and the same rules' Warehouse scorers.
func NewScored(t Truth, response string) Scored {
	s := Scored{
		CustomID: t.CustomID, TrajectoryID: t.TrajectoryID,
		ProbeAfterTurn: t.ProbeAfterTurn, TotalTurns: t.TotalTurns,
		TokensUsed: t.TokensUsed, Remaining: t.Remaining, Possible: t.Possible,
	}
	if t.Warehouse {
		s.scoreWarehouse(t, response)
		return s
	}
	p := reward.Parse(response)
	rt := reward.Truth{Remaining: t.Remaining, Possible: t.Possible}
	s.Prediction = p
	s.Detail = reward.Train.Detail(p, rt)
	s.Score = reward.Paper.Score(p, rt)
	return s
}

func (s *Scored) scoreWarehouse(t Truth, response string) {
	p := reward.ParseWarehouse(response)
	wt := reward.WarehouseTruth{Remaining: t.Resources, Possible: t.Possible}
	d := reward.Train.DetailWarehouse(p, wt)
	s.Warehouse, s.Resources = true, t.Resources
	s.WarehouseAnswer, s.WarehouseDetail = p, d
	s.Detail = reward.Detail{Reward: d.Reward, Class: d.Class, RelWidth: math.NaN(), MidRelErr: math.NaN()}
	s.Score = reward.Paper.ScoreWarehouse(p, wt)
}

// TruthOf reads a probe's truth from an RL or eval parquet row. The
// trajectory is extra_info.trajectory_id, or the custom_id before
// "_probe_after_turn_" when that is empty. A label column carrying the
// Warehouse dimensions (reward.ParseTarget) gives a Warehouse truth;
// otherwise the truth is extra_info's remaining_tokens and is_possible. An
// unreadable label is an error, returned with the extra_info truth.
func TruthOf(row dataset.RLRow) (Truth, error) {
	x := row.ExtraInfo
	traj := x.TrajectoryID
	if traj == "" {
		traj = dataset.TrajectoryOf(x.CustomID)
	}
	t := Truth{
		CustomID: x.CustomID, TrajectoryID: traj,
		ProbeAfterTurn: x.ProbeAfterTurn, TotalTurns: x.TotalTurns,
		TokensUsed: x.TokensUsed, Remaining: x.RemainingTokens, Possible: x.IsPossible,
	}
	if row.Label == "" {
		return t, nil
	}
	target, err := reward.ParseTarget(row.Label)
	if err != nil {
		return t, err
	}
	if target.Warehouse {
		t.Warehouse, t.Resources, t.Possible = true, target.Resources.Remaining, target.Resources.Possible
	}
	return t, nil
}

// Class is the predicted feasibility class.
func (s Scored) Class() reward.Class { return s.Detail.Class }

// FormatValid reports whether the answer has the required format inside
// <answer> tags: "impossible", or an interval on token probes (a scalar
// does not count) and an interval for each of the three dimensions on
// Warehouse probes.
func (s Scored) FormatValid() bool {
	if s.Warehouse {
		a := s.WarehouseAnswer
		if a.Kind == reward.Impossible {
			return true
		}
		for _, d := range a.Dims {
			if !d.Set {
				return false
			}
		}
		return a.Kind == reward.Interval
	}
	return s.Prediction.Kind == reward.Interval || s.Prediction.Kind == reward.Impossible
}

// Mid returns the interval midpoint (L+H)/2 of a token probe's answer.
func (s Scored) Mid() float64 {
	return (float64(s.Prediction.Low) + float64(s.Prediction.High)) / 2
}

// interval reports a well-formed interval answer, the ones Cover and MRE
// score: L ≤ H on token probes, and L ≤ H in all three dimensions on
// Warehouse probes.
func (s Scored) interval() bool {
	if !s.Warehouse {
		return s.Detail.Interval
	}
	for _, d := range s.WarehouseDetail.Dims {
		if !d.Interval {
			return false
		}
	}
	return true
}

// covered reports that the interval holds the truth: r on token probes,
// every dimension's remaining usage on Warehouse probes.
func (s Scored) covered() bool {
	if !s.Warehouse {
		return s.Detail.Covered
	}
	for _, d := range s.WarehouseDetail.Dims {
		if !d.Covered {
			return false
		}
	}
	return true
}

// midRelErr is the midpoint relative error, NaN when undefined: the
// detail's on token probes, the mean over the dimensions whose truth is
// positive on Warehouse probes.
func (s Scored) midRelErr() float64 {
	if !s.Warehouse {
		if math.IsInf(s.Detail.MidRelErr, 0) {
			return math.NaN()
		}
		return s.Detail.MidRelErr
	}
	var sum float64
	var n int
	for _, d := range s.WarehouseDetail.Dims {
		if e := d.MidRelErr; !math.IsNaN(e) && !math.IsInf(e, 0) {
			sum += e
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// Direction of an interval miss.
const (
	missNeither = iota
	missOptimistic
	missConservative
)

// missDirection says which way an uncovered interval misses: optimistic
// when it lies below the truth, conservative when above. On Warehouse
// probes the uncovered dimensions decide: optimistic when every one lies
// below its truth (H < v), conservative when every one lies above (L > v),
// neither when they disagree.
func (s Scored) missDirection() int {
	if !s.Warehouse {
		switch mid := s.Mid(); {
		case mid < float64(s.Remaining):
			return missOptimistic
		case mid > float64(s.Remaining):
			return missConservative
		}
		return missNeither
	}
	var below, above int
	for d, dd := range s.WarehouseDetail.Dims {
		if dd.Covered {
			continue
		}
		if s.WarehouseAnswer.Dims[d].High < s.Resources[d] {
			below++
		} else {
			above++
		}
	}
	switch {
	case below > 0 && above == 0:
		return missOptimistic
	case above > 0 && below == 0:
		return missConservative
	}
	return missNeither
}
