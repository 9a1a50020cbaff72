package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"bagen-data/dataset"
)

// envFixtures are the fixtures of the authors' env tests, rebuilt by
// probes/testdata/bagen-v1/env.py.
const envFixtures = "../probes/testdata/bagen-v1/env/"

// TestBagenV1EnvTests runs the fixtures of the authors' tests of their
// estimation envs (tests/env/test_token_estimation_env.py and
// test_money_estimation_env.py, mll-lab-nu/BAGEN 58bef4c) through
// `probes --compat bagen-v1`, with --budget their
// max_context_window_tokens, and pins what their tests assert of every
// sample: the turns completed and in all, tokens used, remaining tokens,
// feasibility and the per-turn usage shown (input, output), and the
// system message where they assert it. Their request-mode test
// (turn_usage_mode="request") has no counterpart here; the implicit
// truncation test runs in that mode, but its fixture gives the same
// values in the default mode.
func TestBagenV1EnvTests(t *testing.T) {
	type sample struct {
		after, total    int64
		used, remaining int64
		possible        bool
		usage           string
	}
	tests := []struct {
		name, file string
		budget     string
		system     string // "" to leave unchecked
		want       []sample
	}{
		{"flattens_and_scores", "flattens.json", "120", "original system prompt", []sample{
			{1, 3, 80, 250, false, "30/50"}, {2, 3, 190, 140, false, "30/50 40/70"}}},
		{"skips_blank_assistant_turns_in_slices", "blank.json", "500", "", []sample{
			{1, 2, 80, 140, true, "30/50"}}},
		{"uses_cumulative_total_deltas_for_real_rollouts", "cumulative.json", "1000", "", []sample{
			{1, 3, 489, 414, true, "426/63"}, {2, 3, 693, 210, true, "426/63 158/46"}}},
		{"defaults_to_turn_usage_excluding_history", "api_usage.json", "4000", "", []sample{
			{1, 4, 251, 1302, true, "195/56"}, {2, 4, 414, 1139, true, "195/56 121/42"},
			{3, 4, 574, 979, true, "195/56 121/42 115/45"}}},
		{"excludes_hidden_reasoning_tokens_from_history", "reasoning.json", "1000", "reasoning system", []sample{
			{1, 3, 150, 115, true, "100/50"}, {2, 3, 210, 55, true, "100/50 20/40"}}},
		{"estimates_visible_history_without_reasoning_breakdown", "hidden.json", "1000", "", []sample{
			{1, 3, 150, 130, true, "90/60"}, {2, 3, 210, 70, true, "90/60 30/30"}}},
		{"discards_context_token_truncated_turns", "truncated.json", "1000", "", []sample{
			{1, 4, 80, 300, false, "30/50"}, {2, 4, 170, 210, false, "30/50 35/55"}, {3, 4, 270, 110, false, "30/50 35/55 40/60"}}},
		{"discards_implicit_over_limit_terminal_turns", "implicit.json", "3500", "", []sample{
			{1, 3, 251, 323, false, "195/56"}, {2, 3, 414, 160, false, "195/56 121/42"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "p.parquet")
			if _, err := run(t, "probes", "-q", "--compat", "bagen-v1", "--task", "searchr1", "-i", envFixtures+tt.file, "--budget", tt.budget, "--tokenizer", tokenizerPath(t), "--out", out); err != nil {
				t.Fatal(err)
			}
			rows, err := dataset.ReadRL(out)
			if err != nil {
				t.Fatal(err)
			}
			var got []sample
			for _, r := range rows {
				e := r.ExtraInfo
				var usage []string
				for _, u := range e.PerTurnTokens {
					usage = append(usage, fmt.Sprintf("%d/%d", u.InputTokens, u.OutputTokens))
				}
				got = append(got, sample{e.ProbeAfterTurn, e.TotalTurns, e.TokensUsed, e.RemainingTokens, e.IsPossible, strings.Join(usage, " ")})
				if tt.system != "" && (r.Prompt[0].Role != "system" || r.Prompt[0].Content != tt.system) {
					t.Errorf("after turn %d: first message %+v, want the rollout's system prompt %q", e.ProbeAfterTurn, r.Prompt[0], tt.system)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("samples\n got %v\nwant %v", got, tt.want)
			}
		})
	}
}

// TestBagenV1MoneyEnvTests: the fixtures of test_money_estimation_env.py
// under `probes --compat bagen-v1 --task warehouse` (the bagen-v1 preset).
// test_money_estimation_env_flattens_and_scores asserts the remaining
// usage after turns 1 and 2: 4 and 2 weeks, 220 and 120 item-weeks, 71 and
// 41 USD — the costs 120.9 − 50.4 and 120.9 − 80.2 as their env computes
// them, each value rounded to a whole dollar first (121 − 50, 121 − 80),
// not the logged cents (70.5, 40.7). Its budgets are the totals (ratio
// mode), the preset's draw at least the totals, so both probes stay
// feasible. test_money_estimation_env_half_reachable_target_mode (seed 7)
// asserts 8 samples, 2 unreachable and 2 reachable rollouts, each
// rollout's probes infeasible or feasible with its group. Their
// impossible-budget test sets time_budget_ratio, which has no flag here.
func TestBagenV1MoneyEnvTests(t *testing.T) {
	out := filepath.Join(t.TempDir(), "w.parquet")
	if _, err := run(t, "probes", "-q", "--compat", "bagen-v1", "--task", "warehouse", "-i", envFixtures+"money.jsonl", "--out", out); err != nil {
		t.Fatal(err)
	}
	rows, err := dataset.ReadRL(out)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, r := range rows {
		labels = append(labels, r.Label)
	}
	want := []string{
		`{"time_weeks":4,"warehouse_item_weeks":220,"cumulative_cost_usd":71,"is_possible":true,`,
		`{"time_weeks":2,"warehouse_item_weeks":120,"cumulative_cost_usd":41,"is_possible":true,`,
	}
	if len(labels) != len(want) {
		t.Fatalf("%d probes, want 2: %v", len(labels), labels)
	}
	for i := range want {
		if !strings.HasPrefix(labels[i], want[i]) {
			t.Errorf("probe %d label %s\nwant it to start %s", i+1, labels[i], want[i])
		}
	}

	out = filepath.Join(t.TempDir(), "h.parquet")
	stdout, err := run(t, "probes", "--compat", "bagen-v1", "--task", "warehouse", "--seed", "7", "-i", envFixtures+"half_reachable.jsonl", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "warehouse: 4 rollouts (4 succeeded, 2 feasible); preset bagen-v1; compat bagen-v1 (2 unreachable, 2 reachable challenges)\n" +
		"8 candidate prefixes, 8 probes (4 possible, 4 impossible) -> " + out + "\n"; stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
	}
	rows, err = dataset.ReadRL(out)
	if err != nil {
		t.Fatal(err)
	}
	possible := map[string][]bool{}
	for _, r := range rows {
		possible[r.ExtraInfo.TrajectoryID] = append(possible[r.ExtraInfo.TrajectoryID], r.ExtraInfo.IsPossible)
	}
	// python3 -c 'import random; r = random.Random(7); l = [0, 1, 2, 3]; r.shuffle(l); print(l[:2])'
	// prints [3, 1]: their env makes the second and fourth unreachable.
	if got := fmt.Sprint(possible); got != "map[warehouse-1:[true true] warehouse-2:[false false] warehouse-3:[true true] warehouse-4:[false false]]" {
		t.Errorf("feasibility by rollout %s", got)
	}
}
