package probes

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/rollout"
)

// TestAccountingOnAgentLogs reads the agent-log fixtures of package
// rollout, and minimal edits of them (rollout/testdata/edits), through the
// readers and the replay accounting. The wanted inputs are what each log's
// own numbers give: in_k = input_k − input_{k−1} − (output_{k−1} − its
// recorded reasoning); the counter (one token per word) is used only where
// the numbers leave a turn without its count, and the basis of every turn
// says which.
func TestAccountingOnAgentLogs(t *testing.T) {
	L, E, N, G, C := BasisLog, BasisEstimated, BasisNoUsage, BasisAfterGap, BasisHistoryCut
	tests := []struct {
		name, dir string
		turns     []TurnTokens
		bases     []Basis
		total     int64
	}{
		// Reasoning recorded: 1050 − 700 − (300 − 256).
		{"mini-swe-agent 2.x", "mini2/sympy__sympy-20590", []TurnTokens{{700, 300}, {306, 90}}, []Basis{L, L}, 1396},
		// The same run without the first call's reasoning count: the
		// request grew by 350 ≥ 300, so the numbers say the whole output
		// was replayed: 1050 − 700 − 300.
		{"reasoning not recorded, numbers consistent", "edits/mini-unrecorded", []TurnTokens{{700, 300}, {50, 90}}, []Basis{L, L}, 1140},
		// ... and a second request of 900: it grew by 200 < 300 although
		// no reasoning is recorded, so hidden reasoning is proven and the
		// visible output estimated as the replayed text's 11 words.
		{"hidden reasoning proven by the numbers", "edits/mini-hidden", []TurnTokens{{700, 300}, {189, 90}}, []Basis{L, E}, 1279},
		// ... with reasoning_tokens 0 recorded: 200 < 300 can only be a cut
		// history; the turn falls back to its user message (9 words).
		{"a recorded 0 is a 0", "edits/mini-zero", []TurnTokens{{700, 300}, {9, 90}}, []Basis{L, C}, 1099},
		// 3790 − 3500 − 250; then 100 < 3790 + 180: the user message's 5.
		{"ATIF", "harbor/job-1/django__django-11099__x7Kp2Qa", []TurnTokens{{3500, 250}, {40, 300}, {5, 60}}, []Basis{L, L, C}, 4155},
		// 480 − 420 − (35 − 12).
		{"Inspect", "inspect/ctf_2025-07-05.json", []TurnTokens{{420, 35}, {37, 20}}, []Basis{L, L}, 512},
		// The first call retried once with the same message id (50 output
		// tokens) and the second once under an id no message has (7): both
		// paid, both in the outputs; the deltas are the kept calls'.
		{"Inspect with retried calls", "edits/inspect-retry", []TurnTokens{{420, 85}, {37, 27}}, []Basis{L, L}, 569},
		// The first model event without usage: the second request's 480
		// holds that turn's input and its text (12 words); the 468 left
		// are split 12 : 1 between the inputs, as their messages count
		// (system and user 7 + 5 words, then 1): the total is the last
		// call's 480 + 20.
		{"Inspect with a turn without usage", "edits/inspect-no-usage", []TurnTokens{{432, 12}, {36, 20}}, []Basis{N, G}, 500},
		// 5300 − 5000 − (1200 − 960), 5420 − 5300 − 80.
		{"OpenHands", "openhands/trajectory.json", []TurnTokens{{5000, 1200}, {60, 80}, {40, 45}}, []Basis{L, L, L}, 6425},
		// The middle call's usage removed: 5420 − 5000 − (1200 − 960)
		// = 180 for its input, its text (9 words) and the last input,
		// split 0 : 12 as their messages count: the total stays the
		// complete log's 6425.
		{"OpenHands with a turn without usage", "edits/openhands-no-usage", []TurnTokens{{5000, 1200}, {0, 9}, {171, 45}}, []Basis{L, N, G}, 6425},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srcs, err := (&rollout.Options{}).Expand([]string{"../rollout/testdata/" + tt.dir})
			if err != nil {
				t.Fatal(err)
			}
			rs, err := ReadReplays(context.Background(), srcs, ReplayOptions{Counter: words{}, System: "task system prompt"})
			if err != nil {
				t.Fatal(err)
			}
			r := rs[0]
			if diff := cmp.Diff(tt.turns, r.Acc.Turns); diff != "" {
				t.Errorf("turns (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.bases, r.Acc.Basis); diff != "" {
				t.Errorf("bases (-want +got):\n%s", diff)
			}
			if r.Inputs != InputAPIDeltas || r.Sys != 0 || r.Total() != tt.total {
				t.Errorf("inputs %v, sys %d, total %d; want api-deltas, 0, %d", r.Inputs, r.Sys, r.Total(), tt.total)
			}
		})
	}
}

// TestGapKeepsTheLogsTotal removes the usage of one call but the last
// from each real log that resends its history, and checks the run's total
// against the log's own numbers: the last request plus its output, plus
// the reasoning the other calls record (never sent back), whatever the
// missing call's counts were.
func TestGapKeepsTheLogsTotal(t *testing.T) {
	dirs := []string{"mini2/sympy__sympy-20590", "openhands/trajectory.json", "inspect/ctf_2025-07-05.json",
		"inspect/ctf_2026-05-01.eval", "sessions/claude", "sessions/codex", "sessions/qwen"}
	checked := 0
	for _, dir := range dirs {
		srcs, err := (&rollout.Options{}).Expand([]string{"../rollout/testdata/" + dir})
		if err != nil {
			t.Fatal(err)
		}
		rs, err := ReadReplays(context.Background(), srcs, ReplayOptions{Counter: words{}})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, r := range rs {
			n := r.Turns()
			if r.Inputs != InputAPIDeltas || n < 2 || len(r.Traj.API) != n {
				continue
			}
			for gap := 0; gap < n-1; gap++ {
				traj := r.Traj
				traj.API = slices.Clone(r.Traj.API)
				traj.API[gap] = rollout.APITokens{Input: rollout.Unrecorded, Output: rollout.Unrecorded}
				want := traj.API[n-1].Input + traj.API[n-1].Output
				for k := range n - 1 {
					if rs := traj.API[k].Reasoning; rs != nil && k != gap {
						want += *rs
					}
				}
				got, err := NewReplay(traj, words{}, "")
				if err != nil {
					t.Fatalf("%s turn %d removed: %v", r.Traj.ID, gap+1, err)
				}
				if got.Total() != want {
					t.Errorf("%s with turn %d's usage removed: total %d, want %d (turns %v)", r.Traj.ID, gap+1, got.Total(), want, got.Acc.Turns)
				}
				checked++
			}
		}
	}
	if checked < 5 {
		t.Errorf("%d gaps checked, want at least 5: the fixtures changed", checked)
	}
	t.Logf("%d gaps checked", checked)
}

// TestSeenBeforeTheGapCloses checks that a probe inside a gap shows the
// fallback counts, as a live guard knows them, and one after the request
// that closes it the shared growth.
func TestSeenBeforeTheGapCloses(t *testing.T) {
	// Turn 2 (index 1) without usage; turn 3's request closes the gap:
	// 190 − 100 − 20 − 30 = 40 split 3 : 4 (17, 23), fallbacks 3 and 4.
	api := []rollout.APITokens{{Input: 100, Output: 20}, {Input: rollout.Unrecorded, Output: 30}, {Input: 190, Output: 10}}
	r, err := NewReplay(apiTrajectory(api), words{}, "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		k    int
		want []TurnTokens
	}{
		{1, []TurnTokens{{100, 20}}},
		{2, []TurnTokens{{100, 20}, {3, 30}}},
		{3, []TurnTokens{{100, 20}, {17, 30}, {23, 10}}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, r.Acc.Seen(tt.k)); diff != "" {
			t.Errorf("Seen(%d) (-want +got):\n%s", tt.k, diff)
		}
	}
	if r.Acc.Turns[1].In != 17 {
		t.Errorf("Seen modified Turns: %v", r.Acc.Turns)
	}
	// The prefix the guard accounts after turn 2 is what Seen(2) says.
	pre := apiTrajectory(api)
	pre.Messages, pre.API = pre.Messages[:5], pre.API[:2]
	live, err := NewReplay(pre, words{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(live.Acc.Turns, r.Acc.Seen(2)); diff != "" {
		t.Errorf("Seen(2) against the prefix's accounting (-prefix +seen):\n%s", diff)
	}
}
