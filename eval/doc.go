// Package eval scores budget estimators the way the paper does (§3.3
// "Sub-Capability Metrics", §5–§6 and the appendix tables on early stopping
// and the SFT/RL sweep).
//
// Everything is computed from one scored table, a []Scored with one row per
// probe: the truth (remaining tokens r, feasibility), the parsed prediction
// and its rewards. Compute turns the table into Metrics:
//
//   - feasibility: accuracy, recall on possible and on impossible probes,
//     format-valid rate, macro-F1 over all probes (F1@All) and over
//     first-turn probes (F1@1, probe_after_turn = 0), and Fail-F1, the F1 of
//     the impossible class (paper eq. 2–3);
//   - intervals on truly possible probes: coverage (Cover: r ∈ [L, H] among
//     interval predictions), hit rate (covered among all possible probes),
//     midpoint relative error |(L+H)/2 − r| / r at the 50th and 90th
//     percentiles (PercentileLinear), mean rule reward R (1.8/0.2) over all
//     probes and mean paper score S (eq. 4) over possible probes;
//   - optimism: interval misses on possible probes split into optimistic
//     (midpoint below r) and conservative (above) by rollout-progress bin;
//   - failure timing: the share of probes on failed trajectories predicted
//     impossible, by progress bin;
//   - early stop: every trajectory stopped at its first impossible
//     prediction.
//
// Bootstrap adds seeded 95% intervals for the headline numbers.
//
// The package is pure: it reads no files and never modifies its inputs, so
// the GRPO trainer reuses it on its own evaluation rollouts.
package eval
