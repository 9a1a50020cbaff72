package grpo

import "math"

// The objective's constants, verl's values (verl/trainer/ppo/core_algos.py).
const (
	// AdvantageEps is ε in A_i = (r_i − mean) / (std + ε)
	// (compute_grpo_outcome_advantage's epsilon).
	AdvantageEps = 1e-6
	// DualClip is the dual-clip bound c: for a negative advantage the
	// surrogate is never below c·A (compute_policy_loss_vanilla's
	// clip_ratio_c).
	DualClip = 3.0
	// MaxLogRatio bounds |log ρ| and |log π_ref − log π| before they are
	// exponentiated (the ±20 clamps of the policy loss and kl_penalty).
	MaxLogRatio = 20.0
	// MaxK3 caps each sample's k3 (kl_penalty's low_var_kl clamp to
	// [−10, 10]; k3 ≥ 0, so only the upper bound acts). A capped sample
	// passes no KL gradient, as in verl.
	MaxK3 = 10.0
)

// Advantages returns the group-relative advantages of one group's rewards,
// A_i = (r_i − mean(r)) / (std(r) + ε) with the unbiased (n − 1) standard
// deviation as in verl's GRPO. A group whose rewards are all equal (or
// that has fewer than two samples) has no signal: uniform reports it, and
// its advantages are all exactly 0. rewards is not modified.
func Advantages(rewards []float64) (adv []float64, uniform bool) {
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

// CenteredAdvantages returns A_i = r_i − mean(r), the advantages without
// the division by the group's std (verl's norm_adv_by_std_in_grpo=false,
// Dr. GRPO): a group keeps the scale of its rewards, so a possible probe's
// 1.8-scale rewards outweigh an impossible probe's 0.2. uniform is as for
// Advantages. rewards is not modified.
func CenteredAdvantages(rewards []float64) (adv []float64, uniform bool) {
	adv, uniform = Advantages(rewards)
	if uniform {
		return adv, true
	}
	var mean float64
	for _, r := range rewards {
		mean += r
	}
	mean /= float64(len(rewards))
	for i, r := range rewards {
		adv[i] = r - mean
	}
	return adv, false
}

// Ratio is ρ = π/π_old = exp(log π − log π_old), the log-ratio clamped to
// ±MaxLogRatio first.
func Ratio(logp, oldLogp float64) float64 {
	return math.Exp(clamp(logp-oldLogp, MaxLogRatio))
}

// Surrogate is the clipped surrogate of one sample with ratio ρ and
// advantage A: min(ρA, clip(ρ, 1−ε, 1+ε)A), and for A < 0 no less than
// DualClip·A (verl's dual-clip PPO). eps = 0 turns clipping off: the
// surrogate is ρA. clipped reports that a bound, not ρA, is the value, so
// the sample passes no gradient.
func Surrogate(ratio, adv, eps float64) (value float64, clipped bool) {
	u := ratio * adv
	if eps == 0 {
		return u, false
	}
	c := math.Min(math.Max(ratio, 1-eps), 1+eps)
	value = u
	if v := c * adv; v < u {
		value, clipped = v, true
	}
	if adv < 0 && value < DualClip*adv {
		return DualClip * adv, true
	}
	return value, clipped
}

// K3 is verl's "low_var_kl" estimate of KL(π‖π_ref) from one sample drawn
// from π (Schulman, "Approximating KL divergence"):
// k3 = exp(d) − d − 1 ≥ 0 with d = log π_ref − log π clamped to
// ±MaxLogRatio, and k3 capped at MaxK3.
func K3(logp, refLogp float64) float64 {
	d := clamp(refLogp-logp, MaxLogRatio)
	return math.Min(math.Exp(d)-d-1, MaxK3)
}

func clamp(v, bound float64) float64 { return math.Min(math.Max(v, -bound), bound) }
