package baseline

import (
	"math"
	"slices"
	"sort"
)

// Remaining models the remaining tokens r of a possible probe: Mean is
// boosted trees of log r, giving the centre c = exp(Mean); Spread is a ridge
// regression of the log relative error log(|r/c − 1| + 0.05), giving the
// scale s = exp(Spread); Q is the conformal quantile of the normalized
// scores |r/c − 1| / s, so that [c·(1 − Q·s), c·(1 + Q·s)] covers r with
// probability Coverage (split conformal with normalized scores, Lei et al.
// 2018, §5.2), except on a held-out draw of probability conformalDelta.
// The centre is the interval's midpoint unless the lower end is cut at 0.
// Q is taken per bucket of completed turns (ByTurns).
type Remaining struct {
	Mean   *Boost  `json:"mean"`
	Spread Linear  `json:"spread"`
	Q      float64 `json:"q"`
	// ByTurns holds the quantile of each turn bucket (see turnBucket) that
	// had minBucket held-out probes or more, Mondrian conformal prediction
	// (Vovk et al. 2005, §4.5): coverage then holds within each bucket, not
	// only overall. A bucket without one takes Q.
	ByTurns []float64 `json:"q_by_turns"`
	// Calibration counts the held-out possible probes Q was taken from, and
	// Covered the share of them the intervals cover.
	Calibration int     `json:"calibration_probes"`
	Covered     float64 `json:"calibration_covered"`
}

// spreadFloor keeps the scale of the residual away from zero (in log
// tokens: a 5% error).
const spreadFloor = 0.05

// fitRemaining fits Mean on xs (the raw features) and Spread on zs (the
// same, standardised) to rs (remaining tokens, all ≥ 1).
func fitRemaining(xs, zs [][]float64, rs []float64, lambda float64) Remaining {
	ys := make([]float64, len(rs))
	ones := make([]float64, len(rs))
	mean := 0.0
	for i, r := range rs {
		ys[i], ones[i] = math.Log(r), 1
		mean += ys[i] / float64(len(rs))
	}
	m := fitBoost(xs, ones, mean, squaredLoss(ys), defaultBoost)
	logRes := make([]float64, len(rs))
	for i, x := range xs {
		logRes[i] = math.Log(math.Abs(rs[i]/math.Exp(m.at(x))-1) + spreadFloor)
	}
	return Remaining{Mean: m, Spread: ridge(zs, logRes, ones, lambda)}
}

// score is the normalized nonconformity of remaining tokens r at x (z
// standardised).
func (m *Remaining) score(x, z []float64, r float64) float64 {
	return math.Abs(r/math.Exp(m.Mean.at(x))-1) / m.scale(z)
}

func (m *Remaining) scale(z []float64) float64 {
	return math.Exp(m.Spread.at(z))
}

// turnBuckets are the first completed-turn counts of each bucket: turns
// 0, 1, 2, 3–4, 5–7, 8 and more.
var turnBuckets = []int{0, 1, 2, 3, 5, 8}

// minBucket is the fewest held-out probes a bucket needs for its own
// quantile.
const minBucket = 50

// turnBucket is the bucket of a probe after k completed turns.
func turnBucket(k int) int {
	b := 0
	for i, start := range turnBuckets {
		if k >= start {
			b = i
		}
	}
	return b
}

// conformalDelta is the chance, over the draw of the held-out runs, that
// a bucket's intervals cover less than the requested coverage of new
// probes. Plain split conformal holds coverage on average over that draw
// only: with the ⌈(n+1)·coverage⌉-th score of n, the coverage given the
// held-out set is Beta-distributed about its target, and a bucket of 150
// probes falls about 2.4 points short of 0.9 one time in six. Taking the
// quantile's rank from the binomial tail instead (training-conditional
// validity: Vovk 2012, "Conditional validity of inductive conformal
// predictors") holds it with probability 1 − conformalDelta in each
// bucket: the smaller the bucket, the wider its margin.
const conformalDelta = 0.05

// calibrate sets Q, and each bucket's, to the conformalRank-th smallest
// score of the held-out probes (the largest when that rank exceeds n);
// turns are the probes' completed turns.
func (m *Remaining) calibrate(xs, zs [][]float64, rs []float64, turns []int, coverage float64) {
	all := make([]float64, len(zs))
	byBucket := make([][]float64, len(turnBuckets))
	for i, z := range zs {
		all[i] = m.score(xs[i], z, rs[i])
		b := turnBucket(turns[i])
		byBucket[b] = append(byBucket[b], all[i])
	}
	m.Q = quantile(slices.Clone(all), coverage)
	m.ByTurns = make([]float64, len(turnBuckets))
	for b, scores := range byBucket {
		m.ByTurns[b] = m.Q
		if len(scores) >= minBucket {
			m.ByTurns[b] = quantile(scores, coverage)
		}
	}
	m.Calibration = len(all)
	covered := 0
	for i, s := range all {
		if s <= m.ByTurns[turnBucket(turns[i])] {
			covered++
		}
	}
	m.Covered = float64(covered) / float64(len(all))
}

// quantile is the training-conditional conformal quantile of scores: the
// conformalRank-th smallest, the largest when that rank exceeds n. It
// sorts scores.
func quantile(scores []float64, coverage float64) float64 {
	slices.Sort(scores)
	n := len(scores)
	return scores[min(conformalRank(n, coverage, conformalDelta), n)-1]
}

// conformalRank is the smallest rank k such that P(X ≥ k) ≤ delta for
// X ~ Binomial(n, coverage), n+1 when there is none. The k-th smallest of
// n exchangeable scores then bounds a new score with probability at least
// coverage, except on a draw of the n scores of probability at most delta:
// that probability is P(Beta(k, n+1−k) < coverage) = P(X ≥ k).
func conformalRank(n int, coverage, delta float64) int {
	// The tail falls as k grows: search for where it drops to delta.
	return 1 + sort.Search(n, func(i int) bool { return binomialTail(n, i+1, coverage) <= delta })
}

// interval is the conformal interval of the remaining tokens at z, in
// whole tokens.
func (m *Remaining) interval(x, z []float64, turns int) (lo, hi int64) {
	c, w := math.Exp(min(m.Mean.at(x), 40)), m.ByTurns[turnBucket(turns)]*m.scale(z)
	lo = int64(math.Floor(c * max(1-w, 0)))
	hi = int64(math.Ceil(c * (1 + w)))
	return lo, max(hi, lo)
}
