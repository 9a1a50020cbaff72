package validate

import (
	"fmt"
	"strings"
)

// Entry describes one finding code: its family, code, level and what it
// catches, in one line.
type Entry struct {
	Check Check
	Code  string
	Level Level
	What  string
}

// Catalogue lists every finding Run makes, by level. The trajectory
// checks marked "(warning without a manifest)" are errors under the
// paper's labels and warnings when no manifest names the label rule; with
// Config.Strict every warning is an error.
var Catalogue = []Entry{
	{CheckSchema, "not-parquet", Error, "a file parquet cannot read"},
	{CheckSchema, "unknown-kind", Error, "a file with neither SFT nor RL columns"},
	{CheckSchema, "missing-column", Error, "a column build writes is missing (reward_model and prompt: verl's RLHFDataset fails)"},
	{CheckSchema, "column-type", Error, "a column of another Arrow type than build writes"},
	{CheckSchema, "unreadable-rows", Error, "rows that cannot be read with the expected schema"},
	{CheckLabels, "ground-truth", Error, "reward_model.ground_truth is not the width's target of remaining_tokens"},
	{CheckLabels, "impossible-ground-truth", Error, `an impossible row whose ground_truth is not "impossible"`},
	{CheckLabels, "label-column", Error, "the label column disagrees with extra_info or reward_model"},
	{CheckLabels, "label-remaining", Error, "an impossible row whose label's remaining_tokens is not extra_info's (the early stop's saved tokens)"},
	{CheckLabels, "warehouse-ground-truth", Error, "a Warehouse ground truth the scorer does not read back as the label"},
	{CheckLabels, "budget-rule", Error, "a possible row with tokens_used + remaining_tokens > budget"},
	{CheckLabels, "budget", Error, "a budget ≤ 0, or not the manifest's --budget when the build fixed one"},
	{CheckLabels, "prompt-budget", Error, `a budget column that is not the "within N tokens" its prompt states (RL, eval and SFT)`},
	{CheckLabels, "trajectory-budget", Error, "probes of one trajectory with different budgets"},
	{CheckLabels, "margin", Error, "margin is not (budget − tokens_used − remaining_tokens) / budget"},
	{CheckLabels, "custom-id", Error, "custom_id is not <trajectory_id>_probe_after_turn_<p>"},
	{CheckLabels, "split-field", Error, "extra_info.split is not the file's split"},
	{CheckLabels, "probe-position", Error, "probe_after_turn outside the probes the label rule makes"},
	{CheckLabels, "per-turn-tokens", Error, "per_turn_tokens not one entry per completed turn, above tokens_used, or not shown in the probe"},
	{CheckLabels, "system-tokens", Error, "tokens_used − Σ per_turn_tokens (the system prompt's share) differs between rows (of one build; of one trajectory in a probe set)"},
	{CheckLabels, "system-count", Error, "with --tokenizer: tokens_used − Σ per_turn_tokens is not the system message's count (10% tolerance; builds by the message rule only)"},
	{CheckLabels, "accounting", Error, "rows whose accounting is not message or replay, differs within a file, or is not the manifest's config.accounting (a probe set's: replay)"},
	{CheckLabels, "trajectory-label", Error, "probes of one trajectory with different is_possible (warning without a manifest)"},
	{CheckLabels, "trajectory-total", Error, "probes of one trajectory with different tokens_used + remaining_tokens (warning without a manifest)"},
	{CheckLabels, "sft-answer", Error, "an SFT answer the reward parser does not read back as a target of the width"},
	{CheckLabels, "sft-trajectory-label", Error, "an SFT answer whose class differs from its trajectory's other probes (warning without a manifest)"},
	{CheckLabels, "sft-trajectory-total", Error, "an SFT estimate that is not the width's target of its trajectory's remaining tokens (warning without a manifest)"},
	{CheckLabels, "sft-budget-rule", Error, "an SFT estimate for a trajectory whose tokens exceed its budget"},
	{CheckLabels, "data-source", Error, "data_source is not budget_probe_<task> (verl routes rewards by it)"},
	{CheckLabels, "ability", Error, `ability is not "budget_estimation"`},
	{CheckLeakage, "trajectory-leak", Error, "a trajectory with probes in two of sft, rl and eval"},
	{CheckLeakage, "prompt-leak", Error, "an eval prompt that is in training data for the same trajectory"},
	{CheckLeakage, "prefix-leak", Error, "an eval prompt with completed turns that is in training data under another trajectory id, with the same answer"},
	{CheckShape, "empty-chat", Error, "a row with no messages"},
	{CheckShape, "roles", Error, "roles do not alternate user/assistant after an optional system message"},
	{CheckShape, "empty-content", Error, "a system prompt, probe or SFT answer with empty content (history messages may be empty, as logged)"},
	{CheckShape, "last-role", Error, "an SFT row not ending with the answer, or an RL prompt not ending with the probe"},
	{CheckShape, "turn-count", Error, "a message count that does not match probe_after_turn"},

	{CheckSchema, "extra-column", Warning, "a column build does not write (readers ignore it)"},
	{CheckLabels, "zero-remaining", Warning, "remaining_tokens < 1 (relative error undefined)"},
	{CheckLabels, "budget-unstated", Warning, `a prompt that states no "within N tokens" budget`},
	{CheckLabels, "input-count", Warning, "with --tokenizer: per_turn_tokens inputs differ from the shown user messages' counts (10% tolerance; not under the replay accounting)"},
	{CheckLabels, "warehouse-token-fields", Warning, "a Warehouse row with token fields set"},
	{CheckLabels, "manifest", Warning, "manifest.json unreadable or with an unknown width"},
	{CheckLabels, "width-unknown", Warning, "ground truths that fit no single width"},
	{CheckLeakage, "prefix-repeat", Warning, "an eval prompt with completed turns equal to a training prompt of another trajectory that teaches another answer"},
	{CheckLeakage, "prompt-repeat", Warning, "an eval start-state prompt (no completed turn) equal to a training prompt of another trajectory"},
	{CheckBalance, "class-missing", Warning, "a split without one of the classes"},
	{CheckBalance, "manifest-counts", Warning, "class counts that differ from the manifest's"},
	{CheckBalance, "duplicates", Warning, "repeated custom_ids beyond the oversampling of possible probes the manifest records"},
	{CheckSize, "prompt-too-long", Warning, "with --tokenizer: a prompt over --max-prompt-tokens"},
	{CheckSize, "empty-file", Warning, "a file with no rows"},

	{CheckLabels, "accounting-unknown", Info, "a file that records no token accounting (written before it was recorded)"},
	{CheckLabels, "width-inferred", Info, "the width inferred from the ground truths when no manifest gives it"},
	{CheckBalance, "classes", Info, "class counts of each file"},
	{CheckBalance, "oversampled", Info, "duplicate possible rows, as build's oversampling writes them"},
	{CheckSize, "prompt-tokens", Info, "with --tokenizer: the longest prompt"},
}

// CatalogueText lists the catalogue for --help: a heading per level, then
// one line per check.
func CatalogueText() string {
	var b strings.Builder
	for _, l := range []struct {
		level Level
		head  string
	}{
		{Error, "Errors (exit status 1):"},
		{Warning, "Warnings (exit status 1 only with --strict):"},
		{Info, "Information:"},
	} {
		b.WriteString(l.head + "\n")
		for _, e := range Catalogue {
			if e.Level == l.level {
				fmt.Fprintf(&b, "  %-32s %s\n", string(e.Check)+"/"+e.Code, e.What)
			}
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}
