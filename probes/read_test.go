package probes

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/rollout"
)

// FuzzDecodeAccount: whatever the readers accept, the accounting step
// turns into probes with no negative count.
func FuzzDecodeAccount(f *testing.F) {
	f.Add([]byte(`{"custom_id":"t","messages":[{"role":"user","content":"a","tokens":3},{"role":"assistant","content":"b"}],"metadata":{"success":true},"per_turn_api_tokens":[{"input":1,"output":2}]}`), false)
	f.Add([]byte(`{"turns":[{"user_prompt":"u","raw_response":"r","api_input_tokens":4}],"success":1}`), true)
	f.Add([]byte(`{"custom_id":"t","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b c"},{"role":"user","content":"d"},{"role":"assistant","content":"e"},{"role":"user","content":"f"},{"role":"assistant","content":"g"}],"per_turn_api_tokens":[{"input":10,"output":50,"reasoning":0},{"output":5,"retried":{"calls":1,"output":3}},{"input":30,"output":2,"reasoning":null}],"api_inputs":"request"}`), false)
	f.Fuzz(func(t *testing.T, data []byte, dialogue bool) {
		tr, err := rollout.Decode(rollout.Record{Pos: rollout.Position{File: "f", Line: 1, Index: -1}, Data: data, Format: map[bool]*rollout.Format{true: rollout.Dialogue, false: rollout.Rollout}[dialogue]})
		if err != nil {
			return
		}
		a, err := Account(tr, words{})
		if err != nil {
			t.Fatalf("Account with a tokenizer: %v", err)
		}
		ps, _ := Probes(a, 3, 100, true, Options{Labels: LabelsBagenV1})
		for _, p := range ps {
			if p.Remaining < 0 || p.Used < 0 {
				t.Fatalf("negative count in %+v", p)
			}
		}
		r, err := NewReplay(tr, words{}, "sys")
		if err != nil {
			return // a count past MaxTokens
		}
		if len(r.Acc.Basis) != len(r.Acc.Turns) {
			t.Fatalf("%d bases for %d turns", len(r.Acc.Basis), len(r.Acc.Turns))
		}
		for k, tt := range r.Acc.Turns {
			if tt.In < 0 || tt.Out < 0 {
				t.Fatalf("turn %d: negative count in %+v (bases %v)", k, r.Acc.Turns, r.Acc.Basis)
			}
		}
	})
}

// TestAgentRunReplayCounts: mini-swe-agent runs read through the readers
// and the replay accounting. Their recorded inputs are whole requests
// (InputsRequest), so each later turn's input is the delta against the
// previous request and the visible part of the previous output.
func TestAgentRunReplayCounts(t *testing.T) {
	tests := []struct {
		dir  string
		want []TurnTokens
	}{
		// 1.x, reasoning recorded: vis_0 = 180 − 128 = 52, in_1 = 1290 − 1200 − 52.
		{"../rollout/testdata/mini1/django__django-11099", []TurnTokens{{In: 1200, Out: 180}, {In: 38, Out: 95}}},
		// 2.x, no reasoning recorded and the request grew by 110 ≥ 60:
		// the numbers are consistent, vis_0 is the whole output and
		// in_1 = 1010 − 900 − 60 (no count of the replayed text).
		{"../rollout/testdata/mini2/astropy__astropy-12907", []TurnTokens{{In: 900, Out: 60}, {In: 50, Out: 75}}},
	}
	for _, tt := range tests {
		srcs, err := (&rollout.Options{}).Expand([]string{tt.dir})
		if err != nil {
			t.Fatal(err)
		}
		rs, err := ReadReplays(context.Background(), srcs, ReplayOptions{Counter: words{}})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 1 || rs[0].Inputs != InputAPIDeltas || !rs[0].Traj.Success {
			t.Fatalf("%s: %d replays, inputs %v, want 1 successful from %v", tt.dir, len(rs), rs[0].Inputs, InputAPIDeltas)
		}
		if diff := cmp.Diff(tt.want, rs[0].Acc.Turns); diff != "" {
			t.Errorf("%s: turns (-want +got):\n%s", tt.dir, diff)
		}
	}
}
