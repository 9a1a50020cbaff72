package baseline

import (
	"math"
	"slices"
)

// Remaining models log(remaining tokens) of a possible probe: Mean is the
// regression of the log, Spread that of the log of the absolute residual,
// and Q the conformal quantile of the normalized scores
// |log r − Mean| / exp(Spread), so that [exp(Mean − Q·s), exp(Mean + Q·s)]
// covers r with probability Coverage (split conformal, Lei et al. 2018,
// §5.2).
type Remaining struct {
	Mean   Linear  `json:"mean"`
	Spread Linear  `json:"spread"`
	Q      float64 `json:"q"`
	// Calibration counts the held-out possible probes Q was taken from, and
	// Covered the share of them the intervals cover.
	Calibration int     `json:"calibration_probes"`
	Covered     float64 `json:"calibration_covered"`
}

// spreadFloor keeps the scale of the residual away from zero (in log
// tokens: a 5% error).
const spreadFloor = 0.05

// fitRemaining fits Mean and Spread on zs (standardised features) and rs
// (remaining tokens, all ≥ 1).
func fitRemaining(zs [][]float64, rs []float64, lambda float64) Remaining {
	ys := make([]float64, len(rs))
	ones := make([]float64, len(rs))
	for i, r := range rs {
		ys[i], ones[i] = math.Log(r), 1
	}
	mean := ridge(zs, ys, ones, lambda)
	logRes := make([]float64, len(rs))
	for i, z := range zs {
		logRes[i] = math.Log(math.Abs(ys[i]-mean.at(z)) + spreadFloor)
	}
	return Remaining{Mean: mean, Spread: ridge(zs, logRes, ones, lambda)}
}

// score is the normalized nonconformity of remaining tokens r at z.
func (m *Remaining) score(z []float64, r float64) float64 {
	return math.Abs(math.Log(r)-m.Mean.at(z)) / m.scale(z)
}

func (m *Remaining) scale(z []float64) float64 {
	return math.Exp(m.Spread.at(z))
}

// calibrate sets Q to the ⌈(n+1)·coverage⌉-th smallest score of the
// held-out probes (the largest when that rank exceeds n).
func (m *Remaining) calibrate(zs [][]float64, rs []float64, coverage float64) {
	scores := make([]float64, len(zs))
	for i, z := range zs {
		scores[i] = m.score(z, rs[i])
	}
	slices.Sort(scores)
	n := len(scores)
	rank := int(math.Ceil(float64(n+1) * coverage))
	m.Q = scores[min(rank, n)-1]
	m.Calibration = n
	covered := 0
	for _, s := range scores {
		if s <= m.Q {
			covered++
		}
	}
	m.Covered = float64(covered) / float64(n)
}

// interval is the conformal interval of the remaining tokens at z, in
// whole tokens.
func (m *Remaining) interval(z []float64) (lo, hi int64) {
	mu, w := m.Mean.at(z), m.Q*m.scale(z)
	lo = int64(math.Floor(math.Exp(mu - w)))
	hi = int64(math.Ceil(math.Exp(min(mu+w, 40))))
	return max(lo, 0), max(hi, lo)
}
