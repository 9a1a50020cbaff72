package probes

import (
	"errors"
	"strings"
	"testing"

	"bagen-data/rollout"
)

// kindTrajectory is two turns and a trailing message, with recorded
// counts (sys 7, users 10 and 20, outputs 5 and 6, trailing 4) and
// request usage of 30 then 30 + 5 + 12 = 47 input tokens.
func kindTrajectory() rollout.Trajectory {
	return rollout.Trajectory{ID: "k", Inputs: rollout.InputsRequest, Messages: []rollout.Message{
		{Role: "system", Content: "be brief", Tokens: 7},
		{Role: "user", Content: "task", Tokens: 10},
		{Role: "assistant", Content: "a", Tokens: 5},
		{Role: "user", Content: "obs", Tokens: 20},
		{Role: "assistant", Content: "b", Tokens: 6},
		{Role: "user", Content: "end", Tokens: 4},
	}, API: []rollout.APITokens{
		{Input: 30, Output: 5},
		{Input: 47, Output: 6},
	}}
}

func TestAccountingKindAccount(t *testing.T) {
	for _, c := range []struct {
		kind     AccountingKind
		sys      int64
		turns    []TurnTokens
		trailing int64
	}{
		// The message rule: the system prompt apart, each user message.
		{AccountingMessage, 7, []TurnTokens{{10, 5}, {20, 6}}, 4},
		// The replay: the first request whole (system prompt inside),
		// then 47 − 30 − 5; the trailing message by its own count.
		{AccountingReplay, 0, []TurnTokens{{30, 5}, {12, 6}}, 4},
	} {
		t.Run(string(c.kind), func(t *testing.T) {
			acc, sys, err := c.kind.Account(kindTrajectory(), nil, "be brief", Native)
			if err != nil {
				t.Fatal(err)
			}
			if sys != c.sys || len(acc.Turns) != 2 || acc.Turns[0] != c.turns[0] || acc.Turns[1] != c.turns[1] || acc.Trailing != c.trailing {
				t.Errorf("sys %d turns %v trailing %d; want %d %v %d", sys, acc.Turns, acc.Trailing, c.sys, c.turns, c.trailing)
			}
		})
	}
	// Without a tokenizer the message rule needs the system prompt's
	// recorded count: another prompt than the log's has none.
	if _, _, err := AccountingMessage.Account(kindTrajectory(), nil, "another prompt", Native); !errors.Is(err, ErrNoTokenizer) {
		t.Errorf("unrecorded system prompt: %v, want ErrNoTokenizer", err)
	}
}

func TestParseAccountingKind(t *testing.T) {
	for _, s := range []string{"message", "replay"} {
		if k, err := ParseAccountingKind(s); err != nil || string(k) != s || !k.Known() {
			t.Errorf("%q: %q, %v", s, k, err)
		}
	}
	for _, s := range []string{"", "Message", "api", "unknown"} {
		if _, err := ParseAccountingKind(s); err == nil || !strings.Contains(err.Error(), "want message") {
			t.Errorf("%q: %v, want an error listing the kinds", s, err)
		}
	}
	if AccountingUnknown.String() != "unknown" || AccountingUnknown.Known() {
		t.Errorf("the zero kind is %q, known %v", AccountingUnknown, AccountingUnknown.Known())
	}
}

func TestCheckAccounting(t *testing.T) {
	msg, rep, unk := AccountingMessage, AccountingReplay, AccountingUnknown
	for _, c := range []struct {
		asked, learned AccountingKind
		want           string // "" for nil
	}{
		{rep, rep, ""},
		{msg, msg, ""},
		{rep, msg, "token accounting mismatch: the estimator learned on message numbers and is asked with replay numbers, so its estimates are miscalibrated (build the training data with --accounting replay)"},
		{msg, rep, "token accounting mismatch: the estimator learned on replay numbers and is asked with message numbers, so its estimates are miscalibrated (build the training data with --accounting message)"},
		{rep, unk, "token accounting mismatch: the estimator records no accounting (trained on data built before it was recorded?); it is asked with replay numbers"},
		{unk, msg, "token accounting mismatch: the estimator learned on message numbers; the numbers it is asked with record no accounting"},
		{unk, unk, "token accounting mismatch: the estimator records no accounting (trained on data built before it was recorded?); it is asked with unknown numbers"},
	} {
		err := CheckAccounting(c.asked, c.learned)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("asked %s, learned %s: %v, want nil", c.asked, c.learned, err)
		case c.want != "" && (err == nil || err.Error() != c.want || !errors.Is(err, ErrAccountingMismatch)):
			t.Errorf("asked %s, learned %s: %v, want %s", c.asked, c.learned, err, c.want)
		}
	}
}
