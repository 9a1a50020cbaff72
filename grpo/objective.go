package grpo

import "math"

// AdvantageEps is ε in A_i = (r_i − mean) / (std + ε), verl's value.
const AdvantageEps = 1e-6

// Advantages returns the group-relative advantages of one group's rewards,
// A_i = (r_i − mean(r)) / (std(r) + ε) with the unbiased (n − 1) standard
// deviation as in verl's GRPO. A group whose rewards are all equal (or
// that has fewer than two samples) has no signal: zero reports it, and its
// advantages are all 0. rewards is not modified.
func Advantages(rewards []float64) (adv []float64, zero bool) {
	n := len(rewards)
	adv = make([]float64, n)
	if n < 2 {
		return adv, true
	}
	var mean float64
	for _, r := range rewards {
		mean += r
	}
	mean /= float64(n)
	var ss float64
	same := true
	for _, r := range rewards {
		ss += (r - mean) * (r - mean)
		same = same && r == rewards[0]
	}
	if same {
		return adv, true
	}
	std := math.Sqrt(ss / float64(n-1))
	for i, r := range rewards {
		adv[i] = (r - mean) / (std + AdvantageEps)
	}
	return adv, false
}

// Surrogate is the clipped surrogate of one sample,
// min(ρA, clip(ρ, 1−ε, 1+ε)A) with ρ = π/π_old; clipped reports that the
// clipped term is the smaller one, so the sample passes no gradient.
func Surrogate(ratio, adv, eps float64) (value float64, clipped bool) {
	c := math.Min(math.Max(ratio, 1-eps), 1+eps)
	u, v := ratio*adv, c*adv
	if v < u {
		return v, true
	}
	return u, false
}

// K3 is the low-variance estimator of KL(π‖π_ref) from one sample drawn
// from π (Schulman, "Approximating KL divergence"):
// k3 = exp(log π_ref − log π) − (log π_ref − log π) − 1 ≥ 0.
func K3(logp, refLogp float64) float64 {
	d := refLogp - logp
	return math.Exp(d) - d - 1
}
