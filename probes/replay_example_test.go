package probes_test

import (
	"fmt"

	"bagen-data/probes"
	"bagen-data/rollout"
)

// A SWE-bench-style log records each request's input with the history
// included: the replay shows per-turn deltas instead.
func ExampleNewReplay() {
	t := rollout.Trajectory{
		ID: "swe_0001",
		Messages: []rollout.Message{
			{Role: "user", Content: "Issue: ...", Tokens: rollout.Unrecorded},
			{Role: "assistant", Content: "ls", Tokens: rollout.Unrecorded},
			{Role: "user", Content: "core.py tests", Tokens: rollout.Unrecorded},
			{Role: "assistant", Content: "sed -n 1,40p core.py", Tokens: rollout.Unrecorded},
			{Role: "user", Content: "def f(): ...", Tokens: rollout.Unrecorded},
			{Role: "assistant", Content: "submit", Tokens: rollout.Unrecorded},
		},
		API:     []rollout.APITokens{{Input: 1200, Output: 80}, {Input: 1400, Output: 60}, {Input: 1900, Output: 40}},
		Success: true,
	}
	r, err := probes.NewReplay(t, nil, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Inputs, r.Acc.Turns, "total", r.Total())
	for _, p := range r.Probes(3000) {
		fmt.Printf("after turn %d: used %d, remaining %d, possible %v\n", p.After, p.Used, p.Remaining, p.Possible)
	}
	// Output:
	// api-deltas [{1200 80} {120 60} {440 40}] total 1940
	// after turn 1: used 1280, remaining 660, possible true
	// after turn 2: used 1460, remaining 480, possible true
}

// Twelve probes from a family of ten rollouts, drawn evenly from three
// length buckets.
func ExampleSubsample() {
	turns := []int{3, 9, 2, 6, 12, 4, 7, 5, 8, 1}
	cands := make([][]probes.Candidate, len(turns))
	for i, T := range turns {
		for k := 1; k < T; k++ {
			cands[i] = append(cands[i], probes.Candidate{Rollout: i, After: k, Used: int64(100 * k)})
		}
	}
	for _, c := range probes.Subsample(turns, cands, probes.Sampling{MaxSamples: 12, LengthBins: 3, Seed: 42}) {
		fmt.Printf("%d/%d ", c.Rollout, c.After)
	}
	fmt.Println()
	// Output:
	// 0/2 1/1 2/1 3/3 4/1 5/2 5/3 6/3 6/6 7/4 8/5 8/7
}

// Two rollouts under the paper's half_reachable preset: one gets an
// unreachable challenge (here its time budget, 0.94 × 4 weeks, is too
// short), the other a reachable one.
func ExampleChallenges() {
	ledger := func(final float64) probes.Ledger {
		return probes.Ledger{Steps: []probes.Step{
			{Usage: probes.Usage{TimeWeeks: 2, WarehouseItemWeeks: 500, CostUSD: 90000}, CashUSD: 310000},
			{Usage: probes.Usage{TimeWeeks: 4, WarehouseItemWeeks: 2100, CostUSD: 170000}, CashUSD: final},
		}, FinalCashUSD: final}
	}
	rs := []probes.ChallengeInput{{ID: "a", Ledger: ledger(230000), Success: true}, {ID: "b", Ledger: ledger(260000), Success: true}}
	chs, err := probes.Challenges(rs, probes.HalfReachable, 42)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, c := range chs {
		fmt.Printf("%s reachable=%v feasible=%v target=%.0f budgets=%+v\n", rs[i].ID, c.Reachable, c.Feasible(rs[i].Ledger, true), c.TargetCashUSD, c.Budget)
	}
	// Output:
	// a reachable=true feasible=true target=149410 budgets={TimeWeeks:4 WarehouseItemWeeks:2377 CostUSD:181443.18}
	// b reachable=false feasible=false target=152964 budgets={TimeWeeks:3.77 WarehouseItemWeeks:2446 CostUSD:214061.85}
}
