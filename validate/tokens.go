package validate

import (
	"fmt"

	"bagen-data/dataset"
	"bagen-data/probes"
	"bagen-data/rollout"
)

// countTolerance is how far, as a share of the counted tokens, a row's
// counts may be from --tokenizer's before it is reported: the build may
// have used another tokenizer, or a log's recorded counts.
const countTolerance = 0.10

// offCount reports whether got is further from counted than countTolerance
// allows (and at least 2 tokens).
func offCount(got, counted int64) bool {
	d := got - counted
	if d < 0 {
		d = -d
	}
	return float64(d) > max(2, countTolerance*float64(counted))
}

// checkCountedTokens compares an RL row's token fields with the prompt's
// own text, counted with --tokenizer. After p ≥ 1 turns tokens_used −
// Σ per_turn_tokens is a build's system prompt count: shifting every row's
// tokens_used (and remaining_tokens with it) keeps every other relation
// true, so only counting the system message catches it. Each shown user
// message's input count is compared too; logs that record their own counts
// may differ, so that is a warning. Both are the message rule's relations:
// a build that records the replay accounting is not compared.
func (v *validator) checkCountedTokens(f *file, at loc, row dataset.RLRow) {
	x := row.ExtraInfo
	if v.cfg.Counter == nil || f.accounting == probes.AccountingReplay || x.ProbeAfterTurn < 1 || int64(len(x.PerTurnTokens)) != x.ProbeAfterTurn || isWarehouse(row) {
		return
	}
	msgs := row.Prompt
	if len(msgs) == 0 || msgs[0].Role != "system" || int64(len(msgs)) != 2*x.ProbeAfterTurn+2 {
		return // reported by the shape check
	}
	var sum, in, counted int64
	for k, t := range x.PerTurnTokens {
		sum += t.InputTokens + t.OutputTokens
		in += t.InputTokens
		counted += int64(v.cfg.Counter.Count(rollout.StripReward(msgs[1+2*k].Content)))
	}
	// A probe set's system share is the rollout's own (0 where the log's
	// first request holds the system prompt; under --compat bagen-v1 the
	// rollout's system prompt while the shipped one is shown), which the
	// row does not show: only a build's is the shown system message's.
	sys := int64(v.cfg.Counter.Count(msgs[0].Content))
	if got := x.TokensUsed - sum; !f.probeSet && offCount(got, sys) {
		v.fs.add(CheckLabels, Error, "system-count", f.path,
			fmt.Sprintf("tokens_used − Σ per_turn_tokens is not the token count of the prompt's system message (counted with --tokenizer, %.0f%% tolerance)", 100*countTolerance),
			at.example(fmt.Sprintf("tokens_used %d − Σ per_turn_tokens %d = %d; the system message has %d tokens", x.TokensUsed, sum, got, sys)))
	}
	if offCount(in, counted) {
		v.fs.add(CheckLabels, Warning, "input-count", f.path,
			fmt.Sprintf("per_turn_tokens input counts differ from the shown user messages' token counts (counted with --tokenizer, %.0f%% tolerance; a log's own recorded counts may differ)", 100*countTolerance),
			at.example(fmt.Sprintf("Σ input_tokens %d; the %d user messages shown have %d tokens", in, x.ProbeAfterTurn, counted)))
	}
}
