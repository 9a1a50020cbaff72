package reward

import "math"

// Truth is what a probe's label says: the true remaining tokens r and
// whether the rollout still finishes within budget. On an impossible probe
// Remaining is what the rollout went on to spend after the probe, which
// stopping there saves (the early stop of the paper's §6.1); the rule and
// the score ignore it there.
type Truth struct {
	Remaining int64
	Possible  bool
}

// Rule is a weighting of the reward. A possible probe scores
// Possible · 1[L ≤ r ≤ H] · max(0, 1 − (H − L)/r); an impossible probe
// scores Impossible when the prediction is impossible. The zero Rule scores
// every prediction 0; use Train or Paper. A Rule is a value and safe for
// concurrent use.
type Rule struct {
	Possible, Impossible float64
}

// Train is the RL reward of the paper's appendix "RL reward".
var Train = Rule{Possible: 1.8, Impossible: 0.2}

// Paper is the evaluation score S_k of the paper's §3.3: coverage times
// tightness on possible probes, nothing on impossible ones.
var Paper = Rule{Possible: 1, Impossible: 0}

// Score scores p against t:
//
//   - truth impossible: r.Impossible iff p is Impossible, else 0;
//   - truth possible: 0 unless p is an Interval with L ≤ H; for r = 0,
//     r.Possible iff the interval is [0, 0]; for r > 0,
//     r.Possible · max(0, 1 − (H − L)/r) iff L ≤ r ≤ H, else 0.
//
// Scalars, reversed intervals and unparseable answers score 0 on possible
// probes. The arithmetic matches the reference Python bit for bit.
func (r Rule) Score(p Prediction, t Truth) float64 {
	if !t.Possible {
		if p.Kind == Impossible {
			return r.Impossible
		}
		return 0
	}
	return r.Possible * tightness(p, t.Remaining)
}

// tightness is 1[L ≤ rem ≤ H] · max(0, 1 − (H − L)/rem) for a well-formed
// interval, with [0, 0] scoring 1 at rem = 0, and 0 for anything else.
func tightness(p Prediction, rem int64) float64 {
	if p.Kind != Interval || p.Low > p.High || p.Low > rem || rem > p.High {
		return 0
	}
	if rem == 0 {
		if p.High == 0 {
			return 1
		}
		return 0
	}
	return math.Max(0, 1-float64(p.High-p.Low)/float64(rem))
}

// Score parses response and scores it with the Train rule. It does not
// allocate.
func Score(response string, t Truth) float64 {
	return Train.Score(Parse(response), t)
}

// Class is the feasibility a prediction claims. Its constants carry a
// Class prefix because Impossible already names a Kind.
type Class uint8

// Classes of prediction. Any interval (reversed or not) or scalar claims
// ClassPossible, as in the paper's feasibility metrics ("we treat any
// interval as a feasible prediction").
const (
	ClassInvalid Class = iota
	ClassPossible
	ClassImpossible
)

var classNames = [...]string{"invalid", "possible", "impossible"}

// String returns "invalid", "possible" or "impossible".
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "class(" + itoa(int64(c)) + ")"
}

// Class returns the feasibility p claims.
func (p Prediction) Class() Class {
	switch p.Kind {
	case Impossible:
		return ClassImpossible
	case Interval, Scalar:
		return ClassPossible
	}
	return ClassInvalid
}

// Mid is the midpoint (L + H) / 2 of an interval, or the value of a
// scalar, as Python computes (L + H) / 2.0: the exact sum rounded once
// (two non-negative int64s sum within a uint64), so that bounds near 2^63
// do not overflow.
func (p Prediction) Mid() float64 { return float64(uint64(p.Low)+uint64(p.High)) / 2 }

// Valid reports whether p is a well-formed interval: an Interval with
// Low ≤ High. Only valid intervals can score on possible probes.
func (p Prediction) Valid() bool { return p.Kind == Interval && p.Low <= p.High }
