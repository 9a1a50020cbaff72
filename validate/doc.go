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
package validate
