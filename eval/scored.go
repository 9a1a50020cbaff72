package eval

// Class is a predicted feasibility class.
type Class uint8

const (
	// Invalid is an answer that is neither an estimate nor "impossible"
	// (no <answer> tag, malformed text, or no prediction at all).
	Invalid Class = iota
	// Possible is a feasible prediction: an interval, or a scalar estimate.
	Possible
	// Impossible is the answer "impossible".
	Impossible
)

// String names the class as the JSON and text outputs do.
func (c Class) String() string {
	switch c {
	case Possible:
		return "possible"
	case Impossible:
		return "impossible"
	}
	return "invalid"
}

// Scored is one probe of the scored table: its truth, the parsed prediction
// and the prediction's rewards. Build rows with Score; the GRPO trainer and
// tests may also fill them directly.
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

	// Class is the predicted class.
	Class Class
	// Interval says the prediction is an interval [Low, High] (reversed
	// intervals included); Low and High are meaningful only then.
	Interval  bool
	Low, High int64
	// FormatValid says the answer has the required format: an interval or
	// "impossible" inside <answer> tags.
	FormatValid bool
	// Missing says no prediction was given for the probe; it is scored as
	// an invalid answer.
	Missing bool
	// Covered says the truth is possible and L ≤ r ≤ H.
	Covered bool
	// MidRelErr is |(L+H)/2 − r| / r for an interval on a possible probe
	// with r > 0, NaN otherwise.
	MidRelErr float64
	// Reward is the rule reward R (1.8 / 0.2 weights).
	Reward float64
	// Score is the paper's score S (eq. 4): coverage × tightness on
	// possible probes, 0 on impossible ones.
	Score float64
}

// Mid returns the interval midpoint (L+H)/2.
func (s Scored) Mid() float64 { return (float64(s.Low) + float64(s.High)) / 2 }
