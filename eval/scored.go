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
	// true remaining tokens r.
	TokensUsed int64
	Remaining  int64
	// Possible is the truth: the trajectory finishes within the budget.
	Possible bool

	// Prediction is the parsed answer (reward.Parse).
	Prediction reward.Prediction
	// Missing says no prediction was given for the probe; it is scored as
	// an unparseable answer.
	Missing bool
	// Detail is the prediction scored by reward.Train (the 1.8 / 0.2 rule
	// reward R): its class, whether it is a well-formed interval, coverage
	// and midpoint relative error.
	Detail reward.Detail
	// Score is the paper's score S (eq. 4), reward.Paper: coverage ×
	// tightness on possible probes, 0 on impossible ones.
	Score float64
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
}

// NewScored parses response and scores it against t with reward.Train and
// reward.Paper.
func NewScored(t Truth, response string) Scored {
	p := reward.Parse(response)
	rt := reward.Truth{Remaining: t.Remaining, Possible: t.Possible}
	return Scored{
		CustomID: t.CustomID, TrajectoryID: t.TrajectoryID,
		ProbeAfterTurn: t.ProbeAfterTurn, TotalTurns: t.TotalTurns,
		TokensUsed: t.TokensUsed, Remaining: t.Remaining, Possible: t.Possible,
		Prediction: p,
		Detail:     reward.Train.Detail(p, rt),
		Score:      reward.Paper.Score(p, rt),
	}
}

// TruthOf reads a probe's truth from an RL or eval parquet row. The
// trajectory is extra_info.trajectory_id, or the custom_id before
// "_probe_after_turn_" when that is empty.
func TruthOf(row dataset.RLRow) Truth {
	x := row.ExtraInfo
	traj := x.TrajectoryID
	if traj == "" {
		traj = dataset.TrajectoryOf(x.CustomID)
	}
	return Truth{
		CustomID: x.CustomID, TrajectoryID: traj,
		ProbeAfterTurn: x.ProbeAfterTurn, TotalTurns: x.TotalTurns,
		TokensUsed: x.TokensUsed, Remaining: x.RemainingTokens, Possible: x.IsPossible,
	}
}

// Class is the predicted feasibility class.
func (s Scored) Class() reward.Class { return s.Detail.Class }

// FormatValid reports whether the answer has the required format: an
// interval or "impossible" inside <answer> tags (a scalar does not).
func (s Scored) FormatValid() bool {
	return s.Prediction.Kind == reward.Interval || s.Prediction.Kind == reward.Impossible
}

// Mid returns the interval midpoint (L+H)/2.
func (s Scored) Mid() float64 {
	return (float64(s.Prediction.Low) + float64(s.Prediction.High)) / 2
}

// midRelErr is the detail's MRE, NaN when undefined.
func (s Scored) midRelErr() float64 {
	if math.IsInf(s.Detail.MidRelErr, 0) {
		return math.NaN()
	}
	return s.Detail.MidRelErr
}
