package probes

import (
	"errors"
	"strconv"
)

// SetConfig is how a benchmark probe set is drawn from a family's replays
// (`bagen-data probes`).
type SetConfig struct {
	Compat Compat
	Task   Task
	// Budget is the token budget of a token task (Task.Ledger false);
	// Task.Budget stands in for a rollout without its own.
	Budget Budget
	// Preset draws the challenges of a ledger task (Task.Ledger true).
	Preset Preset
	// Sampling caps the probes; its Seed also draws the challenges.
	Sampling Sampling
	// Replay is how the replays were read; CutOverLimit reads it again.
	Replay ReplayOptions
}

// Set is a benchmark probe set: its probes and what went into them.
type Set struct {
	Bench []Bench
	// IDs are the rollouts' ids, by the Bench entries' rollout index.
	IDs   []string
	Stats SetStats
}

// SetStats is what a Set says of its family.
type SetStats struct {
	Rollouts, Succeeded int
	// Feasible counts the rollouts feasible under their budget or challenge.
	Feasible int
	// Candidates counts the prefixes before sampling; Possible and
	// Impossible the probes kept, by truth.
	Candidates, Possible, Impossible int
	// Setting describes the budget or the challenge preset.
	Setting string
	// Reachable and Unreachable count a ledger task's challenges.
	Reachable, Unreachable int
	// Inputs counts the rollouts by where their input tokens come from,
	// Bases their turns by the basis of the count.
	Inputs map[InputSource]int
	Bases  map[Basis]int
}

// NewSet draws the probe set of rs: under sampled challenges for a ledger
// task, under token budgets otherwise. rs is not modified.
func NewSet(rs []Replay, cfg SetConfig) (Set, error) {
	var (
		set Set
		err error
	)
	if cfg.Task.Ledger() {
		set, err = challengeSet(rs, cfg)
	} else {
		set, rs, err = tokenSet(rs, cfg)
	}
	if err != nil {
		return Set{}, err
	}
	set.Stats.count(rs)
	set.IDs = make([]string, len(rs))
	for i, r := range rs {
		set.IDs[i] = r.Traj.ID
	}
	for _, b := range set.Bench {
		if b.Possible {
			set.Stats.Possible++
		} else {
			set.Stats.Impossible++
		}
	}
	return set, nil
}

// challengeSet probes a ledger task's rollouts under challenges drawn from
// cfg.Preset.
func challengeSet(rs []Replay, cfg SetConfig) (Set, error) {
	var set Set
	chs, err := Challenges(ChallengeInputs(rs), cfg.Preset, cfg.Sampling.Seed)
	if err != nil {
		return set, err
	}
	for i, ch := range chs {
		if ch.Feasible(rs[i].Ledger, rs[i].Traj.Success) {
			set.Stats.Feasible++
		}
		if ch.Reachable {
			set.Stats.Reachable++
		} else {
			set.Stats.Unreachable++
		}
	}
	set.Stats.Setting = "preset " + cfg.Preset.String()
	set.Bench, set.Stats.Candidates = WarehouseBench(rs, chs, cfg.Sampling)
	return set, nil
}

// tokenSet probes a token task's rollouts under their budgets; it returns
// the rollouts left after the compat's cut of over-limit turns.
func tokenSet(rs []Replay, cfg SetConfig) (Set, []Replay, error) {
	var set Set
	budgets, err := cfg.Compat.Budgets(rs, cfg.Budget, cfg.Task.Budget, cfg.Task.Name)
	if err != nil {
		return set, nil, err
	}
	if rs, budgets, err = cfg.Compat.CutOverLimit(rs, budgets, cfg.Replay); err != nil {
		return set, nil, err
	}
	if len(rs) == 0 {
		return set, nil, errors.New("no rollouts left: every turn of every rollout is past its budget (--compat " + cfg.Compat.Name + " drops over-limit terminal turns)")
	}
	set.Stats.Setting = budgetSetting(cfg.Budget, budgets)
	for i, r := range rs {
		if r.Traj.Success && r.Total() <= budgets[i] {
			set.Stats.Feasible++
		}
	}
	set.Bench, set.Stats.Candidates = TokenBench(rs, cfg.Task, budgets, cfg.Sampling)
	return set, rs, nil
}

// count adds what the stats say of the rollouts probed.
func (s *SetStats) count(rs []Replay) {
	s.Rollouts, s.Inputs, s.Bases = len(rs), map[InputSource]int{}, map[Basis]int{}
	for _, r := range rs {
		if r.Traj.Success {
			s.Succeeded++
		}
		s.Inputs[r.Inputs]++
		for b, n := range r.Acc.Bases() {
			s.Bases[b] += n
		}
	}
}

// budgetSetting describes the budgets b gave.
func budgetSetting(b Budget, budgets []int64) string {
	if b.Median {
		return "budget median = " + strconv.FormatInt(budgets[0], 10) + " tokens"
	}
	if b.Tokens > 0 {
		return "budget " + strconv.FormatInt(b.Tokens, 10) + " tokens"
	}
	return "budget per rollout (first: " + strconv.FormatInt(budgets[0], 10) + " tokens)"
}
