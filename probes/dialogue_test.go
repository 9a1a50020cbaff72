package probes

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/rollout"
)

// TestBagenV1DialogueReplay replays testdata/bagen-v1/dialogue.json under
// --compat bagen-v1; the wanted turns, texts, usage and success are what
// the authors' TokenEstimationEnv makes of it (reference.py there, run on
// their env.py at 58bef4c): turns in turn_idx order, the turn without
// assistant text and every turn from the first context-truncated one
// dropped, parsed_response replayed, history deltas against the word-ratio
// estimate of the visible output (15 and 20 for rollout 0, 14 for 1),
// input_tokens and actual_token read where the api_ counts are absent; the
// third rollout, truncated from its first turn, is skipped as the env
// skips it.
func TestBagenV1DialogueReplay(t *testing.T) {
	src := rollout.FileSource(filepath.Join("testdata", "bagen-v1", "dialogue.json"))
	rs, err := ReadReplays(context.Background(), []rollout.Source{src}, ReplayOptions{Compat: BagenV1Compat})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		msgs    []string
		turns   []TurnTokens
		success bool
	}{
		{
			msgs: []string{"You are solving Sokoban.\n#####\n#P_X#", "<answer>Right</answer>",
				"Turn 2 state:\n#__#\n#P.#", "<answer>Left || Left</answer>",
				"Turn 4 state:\n#X_#", "<answer>Up</answer>"},
			turns:   []TurnTokens{{In: 300, Out: 40}, {In: 97, Out: 61}, {In: 58, Out: 12}},
			success: true, // a kept turn succeeded; rollout_success is false
		},
		{
			// The first kept turn's own system message comes first, as
			// the env's source_system.
			msgs:    []string{"sys", "Find the capital.", "<search>capital of France</search>", "<information>Paris is the capital.</information>", "<answer>Paris</answer>"},
			turns:   []TurnTokens{{In: 200, Out: 20}, {In: 26, Out: 8}},
			success: true,
		},
	}
	if len(rs) != len(want) {
		t.Fatalf("got %d replays, want %d", len(rs), len(want))
	}
	for i, w := range want {
		r := rs[i]
		var msgs []string
		for _, m := range r.Traj.Messages {
			msgs = append(msgs, m.Content)
		}
		if diff := cmp.Diff(w.msgs, msgs); diff != "" {
			t.Errorf("rollout %d messages (-want +got):\n%s", i, diff)
		}
		if diff := cmp.Diff(w.turns, r.Acc.Turns); diff != "" {
			t.Errorf("rollout %d turns (-want +got):\n%s", i, diff)
		}
		if r.Traj.Success != w.success {
			t.Errorf("rollout %d success = %v, want %v", i, r.Traj.Success, w.success)
		}
	}
	// The env's remaining tokens after the last probed prefix: 70 and 34.
	for i, wantRem := range []int64{70, 34} {
		ps := rs[i].Probes(100000)
		if got := ps[len(ps)-1].Remaining; got != wantRem {
			t.Errorf("rollout %d last probe remaining = %d, want %d", i, got, wantRem)
		}
	}
}

// TestNativeDialogueReadsAsLogged: without the compat the same file keeps
// the reader's own choices (raw_response replayed, file order, the
// first-present success rule).
func TestNativeDialogueReadsAsLogged(t *testing.T) {
	src := rollout.FileSource(filepath.Join("testdata", "bagen-v1", "dialogue.json"))
	var got []rollout.Trajectory
	err := rollout.Scan(context.Background(), src, func(rec rollout.Record) error {
		tr, err := Native.Decode(rec)
		got = append(got, tr)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if a := got[0].Messages[1].Content; a != "<think>The box is left of me so I push left twice and then check.</think><answer>Left || Left</answer>" {
		t.Errorf("native first assistant text = %q, want turn_idx 1's raw_response", a)
	}
	if got[0].Success {
		t.Error("native success of rollout 0 = true, want false (rollout_success decides)")
	}
}

func TestVisibleByWords(t *testing.T) {
	tests := []struct {
		name        string
		output      int64
		raw, parsed string
		want        int64
	}{
		{"ratio 8/22 of 40", 40, "<think>Move right to reach the box.</think><answer>Right</answer>", "<answer>Right</answer>", 15},
		{"half rounds to even (2.5)", 5, "a b", "a", 2},
		{"half rounds to even (3.5)", 7, "a b", "a", 4},
		{"equal texts", 9, "<answer>Up</answer>", " <answer>Up</answer>\n", 9},
		{"no parsed text", 9, "x y", "", 9},
		{"parsed longer: capped at 1", 9, "a", "a b c", 9},
		{"only white space raw", 9, " \t", "a", 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := visibleByWords(tt.output, rollout.DialogueTurn{RawResponse: tt.raw, Parsed: tt.parsed})
			if got != tt.want {
				t.Errorf("visibleByWords(%d, %q, %q) = %d, want %d", tt.output, tt.raw, tt.parsed, got, tt.want)
			}
		})
	}
}

// TestRoughWords pins Python's len(re.findall(r"\w+|[^\w\s]", s)).
func TestRoughWords(t *testing.T) {
	for s, want := range map[string]int{
		"<think>Move right to reach the box.</think><answer>Right</answer>": 22,
		"I will search. <search>capital of France</search>":                 14,
		"naïve café_2 — 東京¹ x\u00a0y":                                       6,
		"":                                                                  0,
	} {
		if got := roughWords(s); got != want {
			t.Errorf("roughWords(%q) = %d, want %d", s, got, want)
		}
	}
}

// FuzzBagenV1Decode: whatever the readers accept, the bagen-v1 reading
// replays with no negative count and no hidden part above the output.
func FuzzBagenV1Decode(f *testing.F) {
	f.Add([]byte(`{"turns":[{"turn_idx":1,"user_prompt":"u","raw_response":"a b c","parsed_response":"a","api_input_tokens":9,"api_output_tokens":5},{"turn_idx":0,"user_prompt":"v","raw_response":"r","api_input_tokens":4,"api_output_tokens":2}],"rollout_success":true}`), true)
	f.Add([]byte(`{"turns":[{"user_prompt":"u","raw_response":"r","info":{"context_token_truncated":1}}]}`), true)
	f.Add([]byte(`{"custom_id":"t","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}],"metadata":{"x/success":"1","y/success":0}}`), false)
	f.Add([]byte(`{"turns":[{"messages":[{"role":"system","content":"s"}],"user_prompt":"u","parsed_response":"p","output_tokens":3,"api_interactions":[{"usage":{"raw":{"output_tokens_details":{"reasoning_tokens":40}}}},7],"api_total_tokens":90,"actions":[]},{"user_prompt":"v","parsed_response":"q","api_input_tokens":50,"api_output_tokens":5}]}`), true)
	f.Fuzz(func(t *testing.T, data []byte, dialogue bool) {
		rec := rollout.Record{Pos: rollout.Position{File: "f", Line: 1, Index: -1}, Data: data, Format: map[bool]*rollout.Format{true: rollout.Dialogue, false: rollout.Rollout}[dialogue]}
		tr, err := BagenV1Compat.Decode(rec)
		if err != nil {
			return
		}
		for i, a := range tr.API {
			if a.Output != rollout.Unrecorded && a.Reasoning != nil && (*a.Reasoning < 0 || *a.Reasoning > a.Output) {
				t.Fatalf("API[%d] = %+v", i, a)
			}
		}
		r, err := BagenV1Compat.NewReplay(tr, words{}, "sys")
		if err != nil {
			return // a count past MaxTokens
		}
		rs, _, err := BagenV1Compat.CutOverLimit([]Replay{r}, []int64{60}, ReplayOptions{Counter: words{}, System: "sys"})
		if err != nil {
			return
		}
		for _, r := range append(rs, r) {
			for _, tt := range r.Acc.Turns {
				if tt.In < 0 || tt.Out < 0 {
					t.Fatalf("negative count in %+v", r.Acc.Turns)
				}
			}
		}
	})
}

// TestOverLimit pins _is_implicit_context_token_truncated_turn: only a
// turn past the limit that did not succeed, has assistant text and
// records that it executed no action.
func TestOverLimit(t *testing.T) {
	base := rollout.DialogueTurn{Parsed: "a", Input: 4200, Output: 118, APITotal: 4318, Total: rollout.Unrecorded,
		InputTokens: rollout.Unrecorded, OutputTokens: rollout.Unrecorded, ActualToken: rollout.Unrecorded, NoActions: true}
	tests := []struct {
		name  string
		edit  func(d *rollout.DialogueTurn)
		limit int64
		want  bool
	}{
		{"past the limit", func(*rollout.DialogueTurn) {}, 3500, true},
		{"at the limit", func(*rollout.DialogueTurn) {}, 4318, false},
		{"no limit known", func(*rollout.DialogueTurn) {}, 0, false},
		{"succeeded", func(d *rollout.DialogueTurn) { d.Success = true }, 3500, false},
		{"no assistant text", func(d *rollout.DialogueTurn) { d.Parsed = " " }, 3500, false},
		{"actions executed or not recorded", func(d *rollout.DialogueTurn) { d.NoActions = false }, 3500, false},
		{"total from input and output", func(d *rollout.DialogueTurn) { d.APITotal = rollout.Unrecorded }, 4317, true},
		{"total_tokens before the sum", func(d *rollout.DialogueTurn) { d.APITotal, d.Total = rollout.Unrecorded, 100 }, 3500, false},
	}
	for _, tt := range tests {
		d := base
		tt.edit(&d)
		if got := overLimit(d, tt.limit); got != tt.want {
			t.Errorf("%s: overLimit = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestCutOverLimitSuccess: the cut drops an over-limit turn with every
// turn after it, and with them their success — the authors' env takes the
// success of the turns it keeps — and leaves Native's reading alone.
func TestCutOverLimitSuccess(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.json")
	data := `[{"turns":[` +
		`{"turn_idx":1,"messages":[{"role":"system","content":"s"},{"role":"user","content":"q"}],"parsed_response":"a1","api_input_tokens":10,"api_output_tokens":5,"actions":["x"]},` +
		`{"turn_idx":2,"user_prompt":"o1","parsed_response":"a2","api_input_tokens":100,"api_output_tokens":5,"actions":[]},` +
		`{"turn_idx":3,"user_prompt":"o2","parsed_response":"a3","api_input_tokens":130,"api_output_tokens":5,"success":true}]}]`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []Compat{Native, BagenV1Compat} {
		o := ReplayOptions{Counter: words{}, Compat: c}
		rs, err := ReadReplays(context.Background(), []rollout.Source{rollout.FileSource(path)}, o)
		if err != nil {
			t.Fatal(err)
		}
		got, budgets, err := c.CutOverLimit(rs, []int64{50}, o)
		if err != nil {
			t.Fatal(err)
		}
		turns, success := got[0].Turns(), got[0].Traj.Success
		want := map[string][2]any{"none": {3, true}, "bagen-v1": {1, false}}[c.String()]
		if turns != want[0] || success != want[1] || len(budgets) != 1 || rs[0].Turns() != 3 || !rs[0].Traj.Success {
			t.Errorf("%s: %d turns, success %v after the cut (%d, %v before); want %v", c, turns, success, rs[0].Turns(), rs[0].Traj.Success, want)
		}
	}
}
