package dataset

import (
	"strings"

	"bagen-data/probes"
	"bagen-data/rollout"
)

// TurnTokens is the token usage of one completed turn, as shown to the
// estimator. Turn is 1-based, matching "Turn k" in the probe text.
type TurnTokens struct {
	Turn         int64 `parquet:"turn" json:"turn"`
	InputTokens  int64 `parquet:"input_tokens" json:"input_tokens"`
	OutputTokens int64 `parquet:"output_tokens" json:"output_tokens"`
}

// SFTRow is one row of sft/train.parquet: the visible history, the probe
// and the assistant's target answer, in verl's multi-turn SFT layout
// (data.messages_key=messages).
type SFTRow struct {
	Messages      []rollout.Message `parquet:"messages,list" json:"messages"`
	PerTurnTokens []TurnTokens      `parquet:"per_turn_tokens,list" json:"per_turn_tokens"`
	CustomID      string            `parquet:"custom_id" json:"custom_id"`
	// Budget is the token budget the probe text states, for stages that
	// need the number (grpo's features) without reading the prose.
	Budget int64 `parquet:"budget" json:"budget"`
	// Accounting is the token accounting that made the row's numbers, as
	// the manifest's config.accounting (see probes.AccountingKind).
	Accounting probes.AccountingKind `parquet:"accounting" json:"accounting"`
}

// RewardModel is verl's reward_model column.
type RewardModel struct {
	Style       string `parquet:"style" json:"style"`
	GroundTruth string `parquet:"ground_truth" json:"ground_truth"`
}

// ExtraInfo is verl's extra_info column: everything a reward function or an
// evaluator needs to know about the probe.
type ExtraInfo struct {
	CustomID        string       `parquet:"custom_id" json:"custom_id"`
	TrajectoryID    string       `parquet:"trajectory_id" json:"trajectory_id"`
	Split           string       `parquet:"split" json:"split"`
	Index           int64        `parquet:"index" json:"index"`
	ProbeAfterTurn  int64        `parquet:"probe_after_turn" json:"probe_after_turn"`
	TotalTurns      int64        `parquet:"total_turns" json:"total_turns"`
	TokensUsed      int64        `parquet:"tokens_used" json:"tokens_used"`
	RemainingTokens int64        `parquet:"remaining_tokens" json:"remaining_tokens"`
	IsPossible      bool         `parquet:"is_possible" json:"is_possible"`
	Budget          int64        `parquet:"budget" json:"budget"`
	PerTurnTokens   []TurnTokens `parquet:"per_turn_tokens,list" json:"per_turn_tokens"`
	// Margin is (budget - tokens_used - remaining_tokens) / budget: how much
	// of the budget a possible trajectory leaves unused (negative when over).
	Margin float64 `parquet:"margin" json:"margin"`
	// Accounting is the token accounting that made tokens_used,
	// remaining_tokens and per_turn_tokens: "message" (build's default)
	// or "replay" (probes, build --accounting replay); empty on Warehouse
	// probes, which count no tokens. See probes.AccountingKind.
	Accounting probes.AccountingKind `parquet:"accounting" json:"accounting"`
}

// RLRow is one row of rl/train.parquet and eval/test.parquet, in verl's
// RLHFDataset layout.
type RLRow struct {
	DataSource  string            `parquet:"data_source" json:"data_source"`
	Prompt      []rollout.Message `parquet:"prompt,list" json:"prompt"`
	Ability     string            `parquet:"ability" json:"ability"`
	RewardModel RewardModel       `parquet:"reward_model" json:"reward_model"`
	ExtraInfo   ExtraInfo         `parquet:"extra_info" json:"extra_info"`
	// Label is the probe's reward.Target as a JSON label column
	// (reward.Target.Label), for trainers that pass one label column to a
	// reward server (OpenRLHF's --label_key label).
	Label string `parquet:"label" json:"label"`
}

// ProbeSuffix separates a trajectory id from the probe position in custom_id.
const ProbeSuffix = "_probe_after_turn_"

// TrajectoryOf returns the trajectory id of a probe custom_id: the text
// before the last "_probe_after_turn_", or the whole id when there is none.
func TrajectoryOf(customID string) string {
	if i := strings.LastIndex(customID, ProbeSuffix); i >= 0 {
		return customID[:i]
	}
	return customID
}

// Split names used in file paths and extra_info.split.
const (
	SplitSFT  = "sft"
	SplitRL   = "rl"
	SplitEval = "eval"
)

// Paths of the three files inside an output directory.
const (
	SFTFile      = "sft/train.parquet"
	RLFile       = "rl/train.parquet"
	EvalFile     = "eval/test.parquet"
	ManifestFile = "manifest.json"
)
