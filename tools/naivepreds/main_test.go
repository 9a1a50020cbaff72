package main

import (
	"testing"

	"bagen-data/dataset"
)

// TestAnswer pins the heuristic on one probe of each case.
func TestAnswer(t *testing.T) {
	for _, tc := range []struct {
		name string
		x    dataset.ExtraInfo
		want string
	}{
		{"past 60% of the budget", dataset.ExtraInfo{TokensUsed: 1501, Budget: 2500}, "<answer>impossible</answer>"},
		{"at 60% of the budget", dataset.ExtraInfo{TokensUsed: 1500, Budget: 2500,
			PerTurnTokens: []dataset.TurnTokens{{Turn: 1, InputTokens: 100, OutputTokens: 50}}}, "<answer>[210, 390]</answer>"},
		{"before the first turn", dataset.ExtraInfo{TokensUsed: 333, Budget: 2500}, "<answer>[466, 865]</answer>"},
		{"three turns", dataset.ExtraInfo{TokensUsed: 900, Budget: 2500, PerTurnTokens: []dataset.TurnTokens{
			{Turn: 1, InputTokens: 100, OutputTokens: 20}, {Turn: 2, InputTokens: 60, OutputTokens: 20}, {Turn: 3, InputTokens: 40, OutputTokens: 20}}},
			"<answer>[182, 338]</answer>"},
	} {
		if got := answer(tc.x); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}
