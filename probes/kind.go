package probes

import (
	"errors"
	"fmt"

	"bagen-data/rollout"
)

// AccountingKind names the token accounting that made a set of numbers
// (in_k, out_k, sys and every sum of them: tokens_used, remaining_tokens,
// a trajectory's total). The two kinds are both right for what they
// serve, but they differ — the README's one log gives 211 under the
// message rule and 1,085 under the replay — so an estimator fitted on one
// and asked with the other is miscalibrated. Datasets record the kind (the
// manifest's config.accounting, the rows' accounting column) and every
// estimator trained on them keeps it, so that a mismatch can be seen
// (CheckAccounting).
//
// The values are the strings written to files; the zero value is
// AccountingUnknown. It is a plain value, safe for concurrent use.
type AccountingKind string

const (
	// AccountingUnknown: the kind is not recorded (a file written before
	// it was, or a foreign one).
	AccountingUnknown AccountingKind = ""
	// AccountingMessage is the paper's message rule (Account): in_k is user
	// message k's count (recorded, else the tokenizer's), out_k the
	// recorded output, and the task's system prompt is counted apart, as
	// sys. `build`'s default: the paper's training data.
	AccountingMessage AccountingKind = "message"
	// AccountingReplay is the replay of the API's own usage (NewReplay):
	// in_k the request deltas the log records, the system prompt inside
	// turn 1's input (sys = 0) wherever the log records inputs. What
	// `probes` writes and what a live guard sees; `build --accounting
	// replay` makes training data on it.
	AccountingReplay AccountingKind = "replay"
)

// AccountingKinds are the known kinds, in the order flags list them.
var AccountingKinds = []AccountingKind{AccountingMessage, AccountingReplay}

// ErrAccountingMismatch means an estimator is asked with numbers of
// another accounting than the one it learned on.
var ErrAccountingMismatch = errors.New("token accounting mismatch")

// ParseAccountingKind reads a recorded or given kind: "message" or
// "replay"; anything else, "" included, is an error.
func ParseAccountingKind(s string) (AccountingKind, error) {
	k := AccountingKind(s)
	if !k.Known() {
		return AccountingUnknown, fmt.Errorf("accounting %q: want message (the paper's rule: each message counted, the system prompt apart) or replay (the API's own usage, as probes and the guard count)", s)
	}
	return k, nil
}

// Known reports whether k is AccountingMessage or AccountingReplay.
func (k AccountingKind) Known() bool {
	return k == AccountingMessage || k == AccountingReplay
}

// String is the kind as written to files, "unknown" for AccountingUnknown.
func (k AccountingKind) String() string {
	if k == AccountingUnknown {
		return "unknown"
	}
	return string(k)
}

// Account counts t by k: the message rule (Account, with sys the count
// of system: SystemTokens) or the replay (compat.NewReplay, whose sys is
// 0 when the log records inputs). The replay never counts a trailing
// message, so that the bagen-v1 labels, which add it, count it as the
// message rule does: its user message's count. The result has passed
// Accounting.Check with sys. AccountingUnknown is a programmer error.
func (k AccountingKind) Account(t rollout.Trajectory, c Counter, system string, compat Compat) (Accounting, int64, error) {
	switch k {
	case AccountingMessage:
		acc, err := Account(t, c)
		if err != nil {
			return acc, 0, err
		}
		sys, err := SystemTokens(t, system, c)
		if err != nil {
			return acc, 0, err
		}
		return acc, sys, acc.Check(t, sys)
	case AccountingReplay:
		r, err := compat.NewReplay(t, c, system)
		if err != nil || r.Acc.TrailingAt < 0 {
			return r.Acc, r.Sys, err
		}
		if r.Acc.Trailing, err = userTokens(t, r.Acc.TrailingAt, c); err != nil {
			return r.Acc, r.Sys, err
		}
		return r.Acc, r.Sys, r.Acc.Check(t, r.Sys)
	}
	panic("probes: Account with accounting kind " + k.String())
}

// CheckAccounting compares the accounting an estimator is asked with
// (asked) with the one it learned on (learned): nil when they are the same
// known kind, else an error wrapping ErrAccountingMismatch that says
// which is which and what follows — also when either is unknown, since
// then nothing shows they agree. Callers decide whether it is a warning
// (the guard, grpo eval) or a refusal.
func CheckAccounting(asked, learned AccountingKind) error {
	switch {
	case asked == learned && asked.Known():
		return nil
	case !learned.Known():
		return fmt.Errorf("%w: the estimator records no accounting (trained on data built before it was recorded?); it is asked with %s numbers", ErrAccountingMismatch, asked)
	case !asked.Known():
		return fmt.Errorf("%w: the estimator learned on %s numbers; the numbers it is asked with record no accounting", ErrAccountingMismatch, learned)
	}
	return fmt.Errorf("%w: the estimator learned on %s numbers and is asked with %s numbers, so its estimates are miscalibrated (build the training data with --accounting %s)",
		ErrAccountingMismatch, learned, asked, asked)
}
