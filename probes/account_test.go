package probes

import (
	"errors"
	"math"
	"testing"

	"bagen-data/rollout"
)

func TestAccountTokenSumOverflow(t *testing.T) {
	msgs := func(n ...int64) []rollout.Message {
		var out []rollout.Message
		for i, k := range n {
			role := "user"
			if i%2 == 1 {
				role = "assistant"
			}
			out = append(out, rollout.Message{Role: role, Content: "x", Tokens: k})
		}
		return out
	}
	pos := rollout.Position{File: "r.jsonl", Line: 7, Index: -1}
	for _, tc := range []struct {
		name string
		msgs []rollout.Message
		sys  int64
		want string // "" for no error
	}{
		// The reported case: three counts that wrap an int64 sum.
		{"wraps int64", msgs(math.MaxInt64/2, math.MaxInt64/2, 10), 0,
			`r.jsonl:7: messages[0]: token counts sum to more than 2^53 = 9007199254740992 (custom_id "t")`},
		{"just past 2^53 at the trailing message", msgs(1<<52, 1<<52, 1), 0,
			`r.jsonl:7: messages[2]: token counts sum to more than 2^53 = 9007199254740992 (custom_id "t")`},
		{"exactly 2^53", msgs(1<<52, 1<<52-5), 5, ""},
		{"system prompt past 2^53", msgs(1, 1), math.MaxInt64,
			`r.jsonl:7: system prompt: token counts sum to more than 2^53 = 9007199254740992 (custom_id "t")`},
		{"negative", msgs(5, -3), 0, `r.jsonl:7: messages[1]: negative token count -3 (custom_id "t")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := rollout.Trajectory{ID: "t", Messages: tc.msgs, Pos: pos}
			acc, err := Account(tr, nil)
			if err == nil {
				err = acc.Check(tr, tc.sys)
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				if got := acc.Total(tc.sys); got != MaxTokens {
					t.Errorf("total %d, want %d", got, int64(MaxTokens))
				}
				return
			}
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got %v, want %s", err, tc.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Errorf("%v is not a *ParseError", err)
			}
			if tc.name != "negative" && !errors.Is(err, ErrTokenOverflow) {
				t.Errorf("%v does not wrap ErrTokenOverflow", err)
			}
		})
	}
}

// tokens is a recorded reasoning count.
func tokens(n int64) *int64 { return &n }
