package eval

import (
	"bagen-data/dataset"
	"bagen-data/eval/prediction"
	"bagen-data/reward"
)

// Scored is one probe of the scored table: its truth and the prediction
// judged against it (reward.Target.Judge: the parsed answer, the 1.8 / 0.2
// rule reward R under reward.Train, and the paper's score S, eq. 4). Build
// rows with Score (from a parquet row) or NewScored (from a probe's truth).
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
	// Budget is the probe's token budget (0 when unknown) and Turns the
	// usage of its completed turns (extra_info.per_turn_tokens), what the
	// early stop prices the calls a stop saves with.
	Budget int64
	Turns  []dataset.TurnTokens
	// Usage is what the estimator spent answering the probe, as the
	// predictions file says; nil when it does not.
	Usage *prediction.Usage
	// Missing says no prediction was given for the probe; it is scored as
	// an unparseable answer.
	Missing bool
	// Judgement holds the truth (Possible, Target) and the judged answer:
	// Prediction and Detail on token probes, Answer and Dims on Warehouse
	// probes (Warehouse set), Reward (R) and Score (S) on both.
	reward.Judgement
}

// Truth is what NewScored needs to know about a probe.
type Truth struct {
	CustomID       string
	TrajectoryID   string
	ProbeAfterTurn int64
	TotalTurns     int64
	TokensUsed     int64
	Budget         int64
	Turns          []dataset.TurnTokens
	// Target is the truth: reward.TokenTarget or reward.WarehouseTarget.
	Target reward.Target
}

// Tokens is the Truth of a token probe with r remaining tokens.
func Tokens(r int64, possible bool) reward.Target {
	return reward.TokenTarget(reward.Truth{Remaining: r, Possible: possible}, "")
}

// NewScored judges response against t under reward.Train and the paper's S.
func NewScored(t Truth, response string) Scored {
	tr, _ := t.Target.Tokens()
	return Scored{
		CustomID: t.CustomID, TrajectoryID: t.TrajectoryID,
		ProbeAfterTurn: t.ProbeAfterTurn, TotalTurns: t.TotalTurns,
		TokensUsed: t.TokensUsed, Remaining: tr.Remaining, Budget: t.Budget, Turns: t.Turns,
		Judgement: t.Target.Judge(reward.Train, response),
	}
}

// TruthOf reads a probe's truth from an RL or eval parquet row. The
// trajectory is extra_info.trajectory_id, or the custom_id before
// "_probe_after_turn_" when that is empty. The target is the label
// column's (reward.ParseTarget), the truth the reward server and reward
// score read too, or extra_info's remaining_tokens and is_possible when the
// label is empty. An impossible token label that does not give the
// remaining tokens (the bare "impossible", or no remaining_tokens key)
// takes extra_info's: the early stop needs what a failed rollout went on
// to spend. (validate reports a label and extra_info that disagree.) An
// unreadable label is an error, returned with the extra_info truth.
func TruthOf(row dataset.RLRow) (Truth, error) {
	x := row.ExtraInfo
	traj := x.TrajectoryID
	if traj == "" {
		traj = dataset.TrajectoryOf(x.CustomID)
	}
	t := Truth{
		CustomID: x.CustomID, TrajectoryID: traj,
		ProbeAfterTurn: x.ProbeAfterTurn, TotalTurns: x.TotalTurns, TokensUsed: x.TokensUsed,
		Budget: x.Budget, Turns: x.PerTurnTokens,
		Target: Tokens(x.RemainingTokens, x.IsPossible),
	}
	if row.Label == "" {
		return t, nil
	}
	target, err := reward.ParseTarget(row.Label)
	if err != nil {
		return t, err
	}
	if tr, ok := target.Tokens(); ok && !tr.Possible && tr.Remaining == 0 {
		target = Tokens(x.RemainingTokens, false)
	}
	t.Target = target
	return t, nil
}

// Class is the predicted feasibility class.
func (s Scored) Class() reward.Class { return s.Detail.Class }

// Mid returns the interval midpoint (L+H)/2 of a token probe's answer.
func (s Scored) Mid() float64 {
	return s.Prediction.Mid()
}
