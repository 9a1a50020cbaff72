package baseline

import (
	"math"
	"slices"
)

// Gate is the impossible answer's run-level calibration: a run is stopped
// at its first probe whose estimated probability of failure exceeds
// Threshold, and Threshold is the one at which at most MaxAbort of the
// successful held-out runs are stopped at any turn. When the held-out
// failed runs are not stopped significantly more often than a successful
// run may be (PValue > GateAlpha), the data gives no signal of failure and
// the gate is off: no probe is answered impossible.
type Gate struct {
	On        bool    `json:"on"`
	Threshold float64 `json:"threshold"`
	// SuccessfulRuns and FailedRuns are the held-out runs; Stopped* how
	// many of each the threshold stops.
	SuccessfulRuns    int `json:"successful_runs"`
	FailedRuns        int `json:"failed_runs"`
	StoppedSuccessful int `json:"stopped_successful"`
	StoppedFailed     int `json:"stopped_failed"`
	// AbortBound is (k+1)/(n+1): the conformal bound on the chance that a
	// new successful run is stopped, k of n held-out ones being stopped.
	AbortBound float64 `json:"abort_bound"`
	// PValue is the binomial chance of stopping at least StoppedFailed of
	// FailedRuns if each were stopped with chance AbortBound.
	PValue float64 `json:"p_value"`
	// Why says why the gate is off ("" when on).
	Why string `json:"why,omitempty"`
}

// GateAlpha is the significance the held-out failed runs must reach for
// the gate to be on.
const GateAlpha = 0.05

// run is one held-out run: whether it failed and the highest estimated
// probability of failure over its probes.
type run struct {
	failed bool
	peak   float64
}

// calibrateGate places the threshold on the held-out runs.
func calibrateGate(runs []run, maxAbort float64) Gate {
	var succ []float64
	var g Gate
	for _, r := range runs {
		if r.failed {
			g.FailedRuns++
		} else {
			succ = append(succ, r.peak)
		}
	}
	g.SuccessfulRuns = len(succ)
	if len(succ) == 0 || g.FailedRuns == 0 {
		g.Why = "the held-out runs are not both successful and failed"
		return g
	}
	slices.Sort(succ)
	slices.Reverse(succ)
	k := int(math.Floor(maxAbort * float64(len(succ))))
	if k >= len(succ) {
		k = len(succ) - 1
	}
	g.Threshold = succ[k]
	for _, r := range runs {
		if r.peak > g.Threshold {
			if r.failed {
				g.StoppedFailed++
			} else {
				g.StoppedSuccessful++
			}
		}
	}
	g.AbortBound = float64(g.StoppedSuccessful+1) / float64(len(succ)+1)
	g.PValue = binomialTail(g.FailedRuns, g.StoppedFailed, g.AbortBound)
	switch {
	case g.StoppedFailed == 0:
		g.Why = "the threshold stops no held-out failed run"
	case g.PValue > GateAlpha:
		g.Why = "held-out failed runs are not stopped significantly more often than successful ones"
	default:
		g.On = true
	}
	return g
}

// stops reports whether the gate answers impossible at probability p.
func (g *Gate) stops(p float64) bool { return g.On && p > g.Threshold }

// binomialTail is P(X ≥ x) for X ~ Binomial(n, p).
func binomialTail(n, x int, p float64) float64 {
	if x <= 0 {
		return 1
	}
	tail := 0.0
	for i := x; i <= n; i++ {
		lg, _ := math.Lgamma(float64(n + 1))
		li, _ := math.Lgamma(float64(i + 1))
		lr, _ := math.Lgamma(float64(n - i + 1))
		tail += math.Exp(lg - li - lr + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	return min(tail, 1)
}
