// Package probes turns logged agent rollouts into budget probes: the
// prefix of a rollout shown to an estimator, the question it is asked and
// the truth its answer is scored against.
//
// Two kinds of probe sets are built from the same readers (Expand, Scan,
// Decode) and the same token accounting (Account):
//
//   - training probes for `bagen-data build` (Probes, Render, Answer): one
//     probe before every turn, p = 0 … T−1;
//   - benchmark probe sets for `bagen-data probes` (Replay, TokenBench,
//     WarehouseBench): the paper's rollout-replay evaluation sets.
//
// # Rollout replay
//
// The paper's §3.2 "Rollout-replay protocol" and appendix "Evaluation
// Protocol": for a rollout of T turns, each non-terminal prefix k = 1 … T−1
// yields one probe. The estimator sees the task's system prompt, the logged
// turns 1 … k replayed as dialogue history, then the task's estimation
// prompt (appendix "Prompts", with the <think> output specification) filled
// with the per-turn usage of those k turns. The final turn is never probed:
// there is nothing left to predict after it.
//
// Usage accounting. The usage shown per turn excludes the replayed history:
// in_k is what turn k added to the context, out_k what the model generated
// (the recorded output, hidden reasoning and retried calls included, else
// the assistant message's count). The log's own numbers decide in_k
// wherever they can (Replay.Inputs says what they measure, Acc.Basis where
// each turn's count comes from):
//
//   - InputAPIDeltas: the per-request inputs include the history: the log
//     says so (Trajectory.Inputs = InputsRequest), or, when it does not
//     (InputsUnknown), input_k ≥ the last recorded input + a lower bound of
//     vis_{k−1} holds for at least half of the turns compared
//     (HistoryIncluded). in_0 = input_0 and
//     in_k = input_k − input_{k−1} − vis_{k−1}, vis_{k−1} being the output
//     less its recorded reasoning (a recorded 0 included), else the whole
//     output (BasisLog). Only where the request grew by less than an output
//     whose reasoning the log does not record — proof of hidden reasoning —
//     is vis_{k−1} estimated, as the count of the replayed assistant text,
//     at most the growth (BasisEstimated).
//   - InputAPI: the inputs do not include the history (InputsTurn, or the
//     vote says so); they are used as recorded.
//   - InputMessages: no turn records its input; in_k is the user message's
//     count (recorded, else the tokenizer's, reward annotation removed), as
//     in build.
//
// With the API sources a turn falls back to its user message's count on
// its own: when it records no input (BasisNoUsage; the first turn adds the
// log's system message), when the turn before it records no input or
// output (BasisAfterGap), and when its request grew by less than the
// previous visible output (BasisHistoryCut: the harness dropped history).
// A gap still has a known sum: the next recorded request fixes what the
// turns since the last recorded one added, so the fallback inputs of a
// gap share that growth in the ratio of their message counts and never
// replace it; the total stays the last request plus its output (plus the
// reasoning never sent back), whatever a middle call lacks (bridgeGaps).
//
// The system prompt counts, as in build: with InputMessages, sys is the
// task preset's system prompt count and is part of every tokens_used; with
// the API sources the first request's input already holds the system
// prompt, so sys = 0 and it is counted inside in_0. Then
//
//	total       = sys + Σ_{t=1..T} (in_t + out_t)
//	tokens_used = sys + Σ_{t≤k} (in_t + out_t)
//	remaining   = total − tokens_used
//
// and every probe of a rollout has the label feasible iff the rollout
// succeeded and total ≤ budget (the paper's label; see Probes).
//
// Budgets. --budget N applies to every rollout; --budget median is the
// median total of the rollout family, the lower median when the count is
// even (LowerMedian; the paper's SWE-bench setting, appendix "Experiment
// Matrix"); without --budget, a rollout's own "budget" field, else the
// task's (Sokoban 2500, Search-R1 3500).
//
// # Subsampling
//
// SWE-bench rollouts are long, so a family is capped at --max-samples
// prefixes (512) by Subsample (appendix "Evaluation Protocol"): it buckets
// rollouts by length, not prefixes, so that long rollouts do not take a
// share proportional to their length. The steps, all drawing from one PCG
// stream seeded with --seed:
//
//  1. shuffle each rollout's candidate prefixes, rollouts in input order;
//  2. sort the rollouts by (turns, input index) and cut them into
//     --length-bins buckets of near-equal size, the remainder going one each
//     to the earlier buckets;
//  3. shuffle the rollouts within each bucket, buckets in order;
//  4. repeat rounds until the cap is reached: shuffle the list of buckets
//     that still have prefixes, and let each in that order give one prefix:
//     the next prefix (in the shuffled order of step 1) of the next rollout
//     in the bucket's round-robin that has one left; a bucket with nothing
//     left drops out of the list;
//  5. order the chosen probes by rollout (input order) and tokens used, so
//     that prompts sharing a history are adjacent (cache-friendly).
//
// The description this follows ends step 4 with "fill any shortfall from
// the shuffled remainder". Here the rounds only stop short of the cap when
// every bucket is exhausted, that is when every candidate was chosen, so
// that step would never add anything and is not a separate step.
//
// # Warehouse challenge-conditioned probes
//
// Warehouse (appendix "Warehouse Budget Construction") has three external
// budgets, time_weeks, warehouse_item_weeks and cumulative_cost_usd, and no
// binary success of its own. Each rollout is paired with a sampled challenge
// (target final cash and one budget per dimension) and is feasible iff it
// succeeded, each realized total is within its budget and its final cash
// reaches the target. A probe after turn k shows the usage after k turns and
// asks for the remaining usage of each dimension; see Ledger for the
// accepted log and Preset for the two sampling schemes.
//
// # Reproducing the authors' code
//
// A Compat value, chosen once from --compat, carries every behaviour in
// which the authors' shipped code (mll-lab-nu/BAGEN 58bef4c) departs from
// this package's reading of the paper: Native is the default,
// BagenV1Compat theirs (its prompts, their Python-seeded SWE-bench sample,
// their median budget); internal/pyrand reproduces CPython's generator.
//
// Apart from ReadReplays, which reads files, the replay, subsampling and
// challenge functions are pure: no global state, inputs never modified,
// randomness only from the seed given. They are safe for concurrent use.
package probes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"bagen-data/rollout"
)

// InputSource says where a replayed rollout's per-turn input counts came
// from.
type InputSource uint8

const (
	// InputMessages: the user messages' recorded or tokenizer counts.
	InputMessages InputSource = iota
	// InputAPI: per_turn_api_tokens[k].input, per request, without history.
	InputAPI
	// InputAPIDeltas: per_turn_api_tokens[k].input including the history,
	// converted to per-turn deltas.
	InputAPIDeltas
)

func (s InputSource) String() string {
	switch s {
	case InputAPI:
		return "api"
	case InputAPIDeltas:
		return "api-deltas"
	}
	return "messages"
}

// Replay is one rollout prepared for replay probes. It is a value; share
// it between goroutines only for reading.
type Replay struct {
	Traj rollout.Trajectory
	// Acc holds the turns (Pairs) and their usage without replayed history
	// (Turns). Trailing is never counted.
	Acc Accounting
	// Sys is the system prompt's count in Total: the preset's with
	// InputMessages, 0 with the API sources (the first input holds it).
	Sys int64
	// LeadSys is the preset's system prompt count that a prefix inside a
	// leading gap adds (Accounting.LeadingGap): such a prefix is accounted
	// from the messages. 0 when there is no leading gap.
	LeadSys int64
	Inputs  InputSource
	// Ledger is the Warehouse log; set only by ReadReplays with
	// ReplayOptions.Ledger.
	Ledger Ledger
}

// NewReplay accounts t for replay probes (see the package doc, "Usage
// accounting"). system is the task's system prompt, counted with c when the
// inputs come from the messages; c may be nil when every count it would
// need is recorded (else the error wraps ErrNoTokenizer).
func NewReplay(t rollout.Trajectory, c Counter, system string) (Replay, error) {
	return Native.NewReplay(t, c, system)
}

// NewReplay is NewReplay with the compat's accounting: BagenV1Compat takes
// the authors' visible output (output − reasoning where recorded, else the
// whole output; for an estimation dialogue read by Compat.Decode, their
// word-ratio estimate, carried as the reasoning) and clamps a negative
// delta to 0 as their env does, where Native falls back to the user
// message's count.
func (c Compat) NewReplay(t rollout.Trajectory, counter Counter, system string) (Replay, error) {
	return newReplay(t, counter, system, c.accounting)
}

func newReplay(t rollout.Trajectory, c Counter, system string, rule accountingRule) (Replay, error) {
	acc, src, err := replayAccount(t, c, rule)
	if err != nil {
		return Replay{}, err
	}
	r := Replay{Traj: t, Acc: acc, Inputs: src}
	if src == InputMessages {
		if r.Sys, err = SystemTokens(t, system, c); err != nil {
			return Replay{}, err
		}
	}
	if acc.LeadingGap() > 0 {
		if r.LeadSys, err = SystemTokens(t, system, c); err != nil {
			return Replay{}, err
		}
	}
	if err := acc.Check(t, r.Sys); err != nil {
		return Replay{}, err
	}
	return r, nil
}

// Turns is T, the number of (user, assistant) turns.
func (r Replay) Turns() int { return len(r.Acc.Pairs) }

// Total is sys + Σ_k (in_k + out_k).
func (r Replay) Total() int64 { return r.Acc.Total(r.Sys) }

// SeenTotal is the tokens spent after turn k as known then, what a live
// guard has spent: sys + Σ Acc.Seen(k), the system prompt LeadSys inside
// a leading gap.
func (r Replay) SeenTotal(k int) int64 {
	total := r.Sys
	if k <= r.Acc.LeadingGap() {
		total = r.LeadSys
	}
	for _, t := range r.Acc.Seen(k) {
		total += t.In + t.Out
	}
	return total
}

// Probes are the replay probes k = 1 … T−1 under budget, labelled as the
// package doc says: After = k, Used = sys + Σ_{t≤k}(in_t + out_t),
// Remaining = Total − Used, Possible = success ∧ Total ≤ budget.
func (r Replay) Probes(budget int64) []Probe {
	all, _ := Probes(r.Acc, r.Sys, budget, r.Traj.Success, Options{})
	if len(all) <= 1 {
		return nil
	}
	return all[1:]
}

// SystemTokens is the count of the system prompt: c's count of system, or,
// without a counter, the log's own count when its first message is that
// system prompt with a recorded count.
func SystemTokens(t rollout.Trajectory, system string, c Counter) (int64, error) {
	if c != nil {
		return int64(c.Count(system)), nil
	}
	if len(t.Messages) > 0 && t.Messages[0].Role == "system" && t.Messages[0].Content == system && t.Messages[0].Tokens != rollout.Unrecorded {
		return t.Messages[0].Tokens, nil
	}
	return 0, fmt.Errorf("%s: system prompt: %w", t.Pos, ErrNoTokenizer)
}

// Budget is a --budget value: a fixed number of tokens, or the family's
// median total. The zero value means each rollout's own budget, else the
// task's.
type Budget struct {
	Tokens int64
	Median bool
}

// ParseBudget reads --budget: a positive integer number of tokens, or
// "median"; "" is the zero Budget.
func ParseBudget(s string) (Budget, error) {
	switch s {
	case "":
		return Budget{}, nil
	case "median":
		return Budget{Median: true}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return Budget{}, fmt.Errorf("budget %q: want a positive number of tokens or median", s)
	}
	return Budget{Tokens: n}, nil
}

func (b Budget) String() string {
	switch {
	case b.Median:
		return "median"
	case b.Tokens > 0:
		return strconv.FormatInt(b.Tokens, 10)
	}
	return "per rollout"
}

// LowerMedian is the median of v, the lower of the two middle values when
// len(v) is even; 0 for an empty v. v is not modified.
func LowerMedian(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// Budgets resolves b for every rollout of a family: b.Tokens, the lower
// median of the totals, or each rollout's own budget, else fallback (the
// task's; 0 if it has none). A rollout left without a budget is an error
// naming it. It is Native.Budgets.
func Budgets(rs []Replay, b Budget, fallback int64, task string) ([]int64, error) {
	return budgets(rs, b, fallback, task, LowerMedian)
}

func budgets(rs []Replay, b Budget, fallback int64, task string, median func([]int64) int64) ([]int64, error) {
	out := make([]int64, len(rs))
	if b.Median {
		totals := make([]int64, len(rs))
		for i, r := range rs {
			totals[i] = r.Total()
		}
		b.Tokens = median(totals)
	}
	for i, r := range rs {
		var err error
		if out[i], err = ResolveBudget(b.Tokens, r.Traj, fallback, task); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// PyMedian is the authors' SWE-bench budget (eval/swebench.sh): Python's
// statistics.median, the mean of the two middle values when the count is
// even and that mean is a whole number, else statistics.median_low; 0 for
// an empty v. v is not modified.
func PyMedian(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	if a, b := s[n/2-1], s[n/2]; (a+b)%2 == 0 {
		return (a + b) / 2
	}
	return s[n/2-1]
}

// ReplayOptions configures ReadReplays. The zero value reads token rollouts
// with no system prompt, no tokenizer and ids as logged.
type ReplayOptions struct {
	// System is the system prompt counted into sys (the task preset's).
	System string
	// Counter counts what the logs do not record; nil is allowed when
	// everything needed is recorded.
	Counter Counter
	// PrefixIDs prefixes every id with its file's base name and ":", as build does.
	PrefixIDs bool
	// Ledger reads Warehouse rollouts: every record must carry a Ledger
	// (metadata.steps) with one step per turn, and tokens are not counted
	// (Acc.Turns are zero).
	Ledger bool
	// Compat accounts the usage its way (Compat.NewReplay); the zero value
	// is Native's.
	Compat Compat
}

// ReadReplays reads every record of srcs in order into a Replay. Ids must
// be unique (the error is a *DuplicateError).
func ReadReplays(ctx context.Context, srcs []rollout.Source, o ReplayOptions) ([]Replay, error) {
	var out []Replay
	seen := map[string]rollout.Position{}
	for _, src := range srcs {
		prefix := ""
		if o.PrefixIDs {
			prefix = rollout.BaseID(src.Name) + ":"
		}
		err := rollout.Scan(ctx, src, func(rec rollout.Record) error {
			r, err := readReplay(rec, o)
			if errors.Is(err, errNoTurnKept) {
				return nil
			}
			if err != nil {
				return err
			}
			r.Traj.ID = prefix + r.Traj.ID
			if first, dup := seen[r.Traj.ID]; dup {
				return &DuplicateError{ID: r.Traj.ID, First: first.String(), Then: r.Traj.Pos.String()}
			}
			seen[r.Traj.ID] = r.Traj.Pos
			out = append(out, r)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no rollouts in the input")
	}
	return out, nil
}

// errNoTurnKept: the compat's reading of an estimation dialogue kept no
// turn (all context-truncated or without assistant text); the authors'
// env skips such a rollout, and so does ReadReplays.
var errNoTurnKept = errors.New("no turn kept")

func readReplay(rec rollout.Record, o ReplayOptions) (Replay, error) {
	t, err := o.Compat.Decode(rec)
	if err != nil {
		return Replay{}, err
	}
	if len(t.Messages) == 0 && rec.Format == rollout.Dialogue {
		return Replay{}, errNoTurnKept
	}
	if !o.Ledger {
		return o.Compat.NewReplay(t, o.Counter, o.System)
	}
	l, err := DecodeLedger(rec)
	if err != nil {
		return Replay{}, err
	}
	pairs, trailing := Pair(t.Messages)
	if len(l.Steps) != len(pairs) {
		return Replay{}, rec.Errorf("metadata.steps", "%d steps for %d turns, want one step per turn", len(l.Steps), len(pairs))
	}
	acc := Accounting{Pairs: pairs, TrailingAt: trailing, Turns: make([]TurnTokens, len(pairs))}
	return Replay{Traj: t, Acc: acc, Ledger: l}, nil
}
