package dataset

import (
	"slices"
	"strings"

	"bagen-data/internal/pyrand"
	"bagen-data/probes"
)

// planner makes a build's plan: the split of each trajectory, the order
// of the probes of a split, and its balanced rows. There is one per
// probes.Compat.
type planner interface {
	// assign returns the split index of each trajectory, aligned with ids
	// (input order); groups may be nil.
	assign(ids []string, groups []uint64, r Ratio, seed uint64) []int
	// order returns the trajectory indices in the order their probes
	// enter a split.
	order(ids []string) []int
	// balance duplicates, downsamples and orders one split's entries.
	balance(entries []Entry, possible func(Entry) bool, b Balance, seed uint64, split string) ([]Entry, BalanceStats)
	// grouped reports whether assign keeps trajectories of one instance
	// together (when the config asks for it).
	grouped() bool
}

// plannerFor is the planner of c, chosen once per build.
func plannerFor(c probes.Compat) planner {
	if c.Name == probes.BagenV1Compat.Name {
		return bagenV1Planner{}
	}
	return nativePlanner{}
}

// nativePlanner is this tool's plan: grouped, input-order independent
// splits (Assign), entries in id order, PCG-seeded balancing (Balanced).
type nativePlanner struct{}

func (nativePlanner) assign(ids []string, groups []uint64, r Ratio, seed uint64) []int {
	return Assign(ids, groups, r, seed)
}

func (nativePlanner) grouped() bool { return true }

func (nativePlanner) order(ids []string) []int {
	byID := identity(len(ids))
	slices.SortFunc(byID, func(a, b int) int { return strings.Compare(ids[a], ids[b]) })
	return byID
}

func (nativePlanner) balance(entries []Entry, possible func(Entry) bool, b Balance, seed uint64, split string) ([]Entry, BalanceStats) {
	return Balanced(entries, possible, b, seed, split)
}

// bagenV1Planner is prepare_all_ablations.sh with prepare_budget_probe.py
// (mll-lab-nu/BAGEN 58bef4c): see AssignBagenV1 and BalancedBagenV1.
type bagenV1Planner struct{}

func (bagenV1Planner) assign(ids []string, _ []uint64, r Ratio, seed uint64) []int {
	return AssignBagenV1(len(ids), r, seed)
}

func (bagenV1Planner) order(ids []string) []int { return identity(len(ids)) }

func (bagenV1Planner) grouped() bool { return false }

func (bagenV1Planner) balance(entries []Entry, possible func(Entry) bool, b Balance, seed uint64, _ string) ([]Entry, BalanceStats) {
	return BalancedBagenV1(entries, possible, b, seed)
}

func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// AssignBagenV1 splits n trajectories, given in input order, as the
// reference pipeline's step 1: random.Random(seed).shuffle of the ids,
// then the first int(n·SFT/100) to SFT, the next int(n·RL/100) to RL and
// the rest to eval (Python's float products, truncated). Trajectories are
// not grouped. The result is the split index of each trajectory.
func AssignBagenV1(n int, r Ratio, seed uint64) []int {
	ids := identity(n)
	pyrand.NewUint64(seed).Shuffle(n, func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	nSFT := int(float64(n) * (float64(r.SFT) / 100))
	nRL := int(float64(n) * (float64(r.RL) / 100))
	out := make([]int, n)
	for pos, i := range ids {
		switch {
		case pos < nSFT:
			out[i] = sftIdx
		case pos < nSFT+nRL:
			out[i] = rlIdx
		default:
			out[i] = evalIdx
		}
	}
	return out
}

// BalancedBagenV1 is the reference script's balancing of one split's
// probes (in input order) with a fresh random.Random(seed): the possible
// probes repeated b.Oversample times (the whole list, copy after copy);
// with a ratio (--balance) the impossible ones cut to
// int(len(possible copies)·Ratio) by rng.sample, in selection order; then
// possible copies + impossible shuffled by the same rng, when balancing or
// oversampling. Without either the entries keep their order.
func BalancedBagenV1(entries []Entry, possible func(Entry) bool, b Balance, seed uint64) ([]Entry, BalanceStats) {
	pos, imp := partition(entries, possible)
	b = b.withDefaults()
	copies, ratio := b.Oversample, *b.Ratio
	if ratio <= 0 && copies == 1 {
		return slices.Clone(entries), BalanceStats{}
	}
	rng := pyrand.NewUint64(seed)
	out := make([]Entry, 0, len(pos)*copies+len(imp))
	for range copies {
		out = append(out, pos...)
	}
	st := BalanceStats{Duplicates: len(pos) * (copies - 1)}
	if target := int(float64(len(out)) * ratio); ratio > 0 && target < len(imp) {
		kept := make([]Entry, target)
		for i, k := range rng.Sample(len(imp), target) {
			kept[i] = imp[k]
		}
		st.Downsampled = len(imp) - target
		imp = kept
	}
	out = append(out, imp...)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out, st
}
