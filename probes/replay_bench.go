package probes

import "bagen-data/rollout"

// Bench is one rendered benchmark probe of `bagen-data probes`.
type Bench struct {
	Rollout    int // index of the rollout in its family
	After      int // k: completed turns shown
	TotalTurns int // T
	// Used, Remaining and Budget are tokens (zero for Warehouse probes,
	// whose truth is in Warehouse).
	Used, Remaining, Budget int64
	Possible                bool
	// TurnUsage is the per-turn usage of the k visible turns (token tasks).
	TurnUsage []TurnTokens
	Prompt    []rollout.Message
	// Warehouse is the three-dimension truth of a Warehouse probe; nil for
	// token probes.
	Warehouse *WarehouseProbe
}

// TokenBench builds the replay probes of a token-budget family: for every
// rollout the probes k = 1 … T−1 under budgets[i], subsampled by s (the
// way task's compat does: Subsample, or SubsampleBagenV1), each rendered
// with task's system prompt, the replayed turns and task's estimation
// prompt with the <think> output specification. It returns the probes in
// the subsampler's order and the number of candidates before subsampling.
// Only the chosen probes are rendered.
func TokenBench(rs []Replay, task Task, budgets []int64, s Sampling) ([]Bench, int) {
	turns := make([]int, len(rs))
	cands := make([][]Candidate, len(rs))
	labelled := make([][]Probe, len(rs))
	n := 0
	for i, r := range rs {
		turns[i] = r.Turns()
		labelled[i] = r.Probes(budgets[i])
		for _, p := range labelled[i] {
			cands[i] = append(cands[i], Candidate{Rollout: i, After: p.After, Used: p.Used})
		}
		n += len(cands[i])
	}
	chosen := task.compat.Subsample(turns, cands, s)
	out := make([]Bench, len(chosen))
	for j, c := range chosen {
		r, p, budget := rs[c.Rollout], labelled[c.Rollout][c.After-1], budgets[c.Rollout]
		out[j] = Bench{
			Rollout: c.Rollout, After: p.After, TotalTurns: r.Turns(),
			Used: p.Used, Remaining: p.Remaining, Budget: budget, Possible: p.Possible,
			TurnUsage: r.Acc.Turns[:p.After],
			Prompt:    task.Render(r.Traj, r.Acc, p, budget, true),
		}
	}
	return out, n
}

// WarehouseBench builds the challenge-conditioned probes of a Warehouse
// family: rollout i (read with ReplayOptions.Ledger) is probed after each
// turn k = 1 … T−1 under challenge chs[i], subsampled by s. It returns the
// probes and the number of candidates before subsampling.
func WarehouseBench(rs []Replay, chs []Challenge, s Sampling) ([]Bench, int) {
	turns := make([]int, len(rs))
	cands := make([][]Candidate, len(rs))
	labelled := make([][]WarehouseProbe, len(rs))
	n := 0
	for i, r := range rs {
		turns[i] = r.Turns()
		labelled[i] = WarehouseProbes(r.Ledger, chs[i], r.Traj.Success)
		for _, w := range labelled[i] {
			cands[i] = append(cands[i], Candidate{Rollout: i, After: w.After})
		}
		n += len(cands[i])
	}
	chosen := Subsample(turns, cands, s)
	out := make([]Bench, len(chosen))
	for j, c := range chosen {
		r, w := rs[c.Rollout], labelled[c.Rollout][c.After-1]
		out[j] = Bench{
			Rollout: c.Rollout, After: w.After, TotalTurns: r.Turns(), Possible: w.Possible,
			Prompt:    RenderWarehouse(r.Traj, r.Acc, r.Ledger, w),
			Warehouse: &w,
		}
	}
	return out, n
}

// ChallengeInputs lists what Challenges needs of each rollout.
func ChallengeInputs(rs []Replay) []ChallengeInput {
	out := make([]ChallengeInput, len(rs))
	for i, r := range rs {
		out[i] = ChallengeInput{ID: r.Traj.ID, Ledger: r.Ledger, Success: r.Traj.Success}
	}
	return out
}
