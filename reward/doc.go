// Package reward is the rule reward of the budget estimator: it parses a
// model's answer and scores it against a probe's truth, allocation-free.
//
// The estimator answers <answer>[L, H]</answer> (an interval for the
// remaining tokens r) or <answer>impossible</answer>. Following the paper's
// appendix "Detailed Settings for Estimation RL and SFT" → "RL reward", a
// possible probe scores
//
//	R = 1.8 · 1[L ≤ r ≤ H] · max(0, 1 − (H − L)/r)
//
// and an impossible probe scores 0.2 when the answer is impossible. The
// 1.8-to-0.2 weighting discourages the all-impossible policy while keeping
// impossible-state recognition in the objective. The paper's evaluation
// score S_k (§3.3, eq. "reward") is the same rule with weights 1 and 0:
// Paper.Score. A Rule carries the two weights.
//
// Warehouse probes ask for three intervals (time_weeks,
// warehouse_item_weeks, cumulative_cost_usd); ParseWarehouse and
// Rule.ScoreWarehouse score them as the mean of the per-dimension scores.
//
// The package is pure: no I/O, no global state, inputs are never modified,
// and every function is safe for concurrent use.
package reward
