// Package validate checks budget-probe datasets before they reach a
// trainer: the parquet schema verl expects, labels that follow the build
// rules, no trajectory or prompt shared between splits, chat shapes verl
// accepts, and class balance and prompt length.
//
// Every check reports the file, row (0-based, as pandas' iloc) and
// custom_id of its first offenders and how many rows offend. Error-level
// findings mean the dataset would train or evaluate on something other than
// what it claims; warnings are worth a look.
//
// The label rules are the build's (see package probes): for width pctN,
// L = max(1, trunc(r·(1−N/100))) and H = trunc(r·(1+N/100)); for fixN,
// L = max(1, r−N) and H = r+N; point targets are "r"; impossible probes are
// "impossible". Under the paper's labels is_possible = success ∧
// tokens_used + remaining_tokens ≤ budget and tokens_used + remaining_tokens
// is the same at every probe of a trajectory.
//
// What a row's columns say is also checked against what its prompt says:
// the budget column against the "within N tokens" the probe states (the
// label was decided with one, the model is told the other), one budget
// per trajectory, data_source and ability against the task and the reward
// routing and, with a Counter, tokens_used − Σ per_turn_tokens against the
// system message's own token count. SFT rows carry no truth column, so
// their answers are checked against each other as RL labels are against
// extra_info: one class per trajectory, each estimate the width's target
// of the trajectory's remaining tokens at that probe (remaining + Σ
// per_turn_tokens is one number per trajectory), and a possible trajectory
// within its budget. Catalogue lists every finding by level; Config.Strict
// makes every warning an error.
//
// # Probe sets
//
// The benchmark probe sets of `bagen-data probes` (rollout replay) are
// files of their own: a file outside build's sft/, rl/ and eval/
// directories whose rows mostly carry extra_info.split "probes" is
// validated as a probe set. It has the RL schema and shapes, and its labels
// follow the replay rules: a token probe after k turns has remaining =
// total − used through k, is feasible iff the rollout succeeded and total ≤
// budget (so one label and one total per rollout, checked as errors), and
// k runs over 1 … T−1; its width is inferred from its own ground truths. A
// row whose label column holds the Warehouse dimensions (reward.ParseTarget)
// is checked against that label instead: the same is_possible as
// extra_info, one per rollout, "impossible" as the ground truth of
// impossible rows and, on possible rows, a ground truth the reward parser
// reads back as the label's remaining usage with full marks
// (reward.Paper.ScoreWarehouse = 1); its token fields should be 0. A
// probe set is no split of a build, so the leakage checks, a manifest's
// budget, width, label rule and class counts do not apply to it.
package validate
