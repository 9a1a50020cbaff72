// Package eval scores budget estimators the way the paper does (§3.3
// "Sub-Capability Metrics", §5–§6 and the appendix tables on early stopping
// and the SFT/RL sweep).
//
// Everything is computed from one scored table, a []Scored with one row per
// probe: the truth (remaining tokens r, feasibility), the parsed prediction
// and its rewards. Join builds it from data rows and a predictions file
// (package eval/prediction) under one set of rules — a probe repeated by
// oversampling is scored once, a probe without an answer is scored as
// unparseable, an unknown id is listed — which eval, reward score and grpo
// share. Compute turns the table into Metrics:
//
//   - feasibility: accuracy, recall on possible and on impossible probes,
//     format-valid rate, macro-F1 over all probes (F1@All) and over
//     first-turn probes (F1@1), and Fail-F1, the F1 of the impossible class
//     (paper eq. 2–3). The first-turn probes are those at the set's first
//     position (FirstTurn): p = 0 in build's sets, which probe before every
//     turn, and k = 1 in the replay sets of `bagen-data probes`, which
//     probe after each non-terminal prefix (k = 1 … T−1); a rollout whose
//     probe there subsampling dropped is left out;
//   - intervals on truly possible probes: coverage (Cover: r ∈ [L, H] among
//     interval predictions), hit rate (covered among all possible probes),
//     midpoint relative error |(L+H)/2 − r| / r at the 50th and 90th
//     percentiles (PercentileLinear) over the intervals with r > 0, mean
//     rule reward R (1.8/0.2) over all probes and per true class, and mean
//     paper score S (eq. 4) over possible probes, over their intervals and
//     over their covered intervals;
//   - optimism: interval misses on possible probes split into optimistic
//     (midpoint below r) and conservative (above) by rollout-progress bin;
//   - failure timing: the share of probes on failed trajectories predicted
//     impossible, by progress bin;
//   - early stop: every trajectory stopped at its first impossible
//     prediction, saving the remaining tokens the truth keeps on impossible
//     probes (TruthOf);
//   - the probed rollouts themselves: task success (trajectories whose
//     probes are all truly possible) and mean turns, the first columns of
//     the paper's overall table.
//
// # Warehouse probes
//
// A probe whose label column carries the Warehouse dimensions
// (reward.ParseTarget: time_weeks, warehouse_item_weeks,
// cumulative_cost_usd) is scored with the reward package's Warehouse
// implementation: the answer is read by reward.ParseWarehouse, R is
// reward.Train.ScoreWarehouse (1.8 × the mean over the three dimensions of
// coverage × tightness, 0.2 for a right "impossible") and S is
// reward.Paper.ScoreWarehouse. Any dimension read claims feasibility, as any
// interval does for tokens. The interval metrics take all three
// dimensions together:
//
//   - an answer is an interval (counted in Cover's denominator) when it
//     gives every dimension a well-formed interval (L ≤ H); it covers when
//     every dimension's interval holds that dimension's remaining usage v;
//   - its midpoint relative error is the mean over the dimensions of
//     |(L+H)/2 − v| / v, over the dimensions with v > 0; MRE P50 and P90 are
//     percentiles of that mean;
//   - a miss is optimistic when every uncovered dimension lies below its
//     truth (H < v), conservative when every one lies above (L > v), and
//     neither when they disagree;
//   - format-valid means "impossible" or an interval for each of the three
//     dimensions.
//
// Metrics.Dims adds Cover and MRE P50/P90 per dimension. Feasibility
// metrics are computed as for token probes. Warehouse probes carry no
// tokens, so the early stop's token savings are undefined on them.
//
// Bootstrap adds seeded 95% intervals for the headline numbers.
//
// Do is `bagen-data eval` as a library call: a Job names the data and one
// source of answers (a predictions file, an Ollama model or a Chat
// Completions endpoint); Do asks the model the probes its predictions log
// has no answer for (package eval/prediction), scores the answers
// (ScoreRun), adds what they cost (Spend) and returns an Outcome that says
// what a caller reports beside the run. WriteRun saves the run, ReadRun
// reads it back.
//
// The metrics are pure: they read no files and never modify their inputs,
// so the GRPO trainer reuses them on its own evaluation rollouts.
package eval
