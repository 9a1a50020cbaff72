package dataset

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Ratio is a trajectory split in percent, e.g. 40/50/10.
type Ratio struct {
	SFT, RL, Eval int
}

// ParseRatio reads "SFT/RL/EVAL" percentages that sum to 100.
func ParseRatio(s string) (Ratio, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return Ratio{}, fmt.Errorf("split %q: want three percentages SFT/RL/EVAL such as 40/50/10", s)
	}
	var v [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 0 || n > 100 {
			return Ratio{}, fmt.Errorf("split %q: %q is not an integer percentage 0 to 100", s, p)
		}
		v[i] = n
	}
	if v[0]+v[1]+v[2] != 100 {
		return Ratio{}, fmt.Errorf("split %q: percentages sum to %d, want 100", s, v[0]+v[1]+v[2])
	}
	return Ratio{SFT: v[0], RL: v[1], Eval: v[2]}, nil
}

// valid reports whether every part is 0 to 100 and they sum to 100.
func (r Ratio) valid() bool {
	in := func(n int) bool { return n >= 0 && n <= 100 }
	return in(r.SFT) && in(r.RL) && in(r.Eval) && r.SFT+r.RL+r.Eval == 100
}

func (r Ratio) String() string { return fmt.Sprintf("%d/%d/%d", r.SFT, r.RL, r.Eval) }

// Split indices, in file order.
const (
	sftIdx = iota
	rlIdx
	evalIdx
	numSplits
)

var splitNames = [numSplits]string{SplitSFT, SplitRL, SplitEval}

// rng returns a generator for one purpose, derived from the user's seed so
// that the split, the balancing and the shuffle of each split draw from
// independent streams.
func rng(seed uint64, purpose string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(purpose))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// Assign splits trajectories. Trajectories with the same group (the same
// task instance: a Sokoban room, a question) always share a split, so an
// eval prompt never repeats a training prompt; groups may be nil (every
// trajectory its own group). Groups are sorted by their smallest id,
// shuffled with the seed, and handed out in that order: a
// group goes to SFT while fewer than ⌊n·SFT/100⌋ trajectories are there,
// then to RL while fewer than ⌊n·(SFT+RL)/100⌋ are placed, then to eval.
// With singleton groups the cuts are exact. The result depends only on the
// set of trajectories, not their input order; it is the split index of
// each id, aligned with ids.
func Assign(ids []string, groups []uint64, r Ratio, seed uint64) []int {
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	group := func(i int) uint64 {
		if groups == nil {
			return 0
		}
		return groups[i]
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(group(a), group(b)); c != 0 && groups != nil {
			return c
		}
		return strings.Compare(ids[a], ids[b])
	})
	// members[g] lists the trajectories of the g-th group in sorted order.
	var members [][]int
	for k, i := range order {
		if groups == nil || k == 0 || groups[i] != groups[order[k-1]] {
			members = append(members, nil)
		}
		members[len(members)-1] = append(members[len(members)-1], i)
	}
	slices.SortFunc(members, func(a, b []int) int { return strings.Compare(ids[a[0]], ids[b[0]]) })
	g := rng(seed, "split")
	g.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	n := len(ids)
	cut1, cut2 := n*r.SFT/100, n*(r.SFT+r.RL)/100
	out := make([]int, n)
	placed := 0
	for _, m := range members {
		s := evalIdx
		switch {
		case placed < cut1:
			s = sftIdx
		case placed < cut2:
			s = rlIdx
		}
		for _, i := range m {
			out[i] = s
		}
		placed += len(m)
	}
	return out
}

// Entry is one row to write: probe Probe of trajectory Traj (indices into
// the build's tables).
type Entry struct {
	Traj, Probe int32
}

// Balance configures the class balancing of a split.
type Balance struct {
	// Oversample is how many copies of each possible probe to keep; zero
	// means DefaultOversample, 1 no duplication.
	Oversample int
	// Ratio caps impossible probes at *Ratio × possible probes (after
	// oversampling) by seeded downsampling; nil means DefaultBalanceRatio,
	// and a zero no cap.
	Ratio *float64
}

// Defaults of Balance (the paper's appendix: two copies of each possible
// probe, at most as many impossible probes as possible ones).
const (
	DefaultOversample   = 2
	DefaultBalanceRatio = 1.0
)

// withDefaults is b with its zero fields set to their defaults.
func (b Balance) withDefaults() Balance {
	if b.Oversample == 0 {
		b.Oversample = DefaultOversample
	}
	if b.Ratio == nil {
		b.Ratio = new(DefaultBalanceRatio)
	}
	return b
}

// ratio is *Ratio with its default applied: zero means no cap.
func (b Balance) ratio() float64 { return *b.withDefaults().Ratio }

// BalanceStats counts what Balanced did.
type BalanceStats struct {
	Duplicates  int // copies added
	Downsampled int // impossible probes removed
}

// Balanced duplicates possible probes, downsamples impossible ones and
// shuffles, all with streams derived from seed and the split name. possible
// reports the class of an entry. The input order must be deterministic.
func Balanced(entries []Entry, possible func(Entry) bool, b Balance, seed uint64, split string) ([]Entry, BalanceStats) {
	pos, imp := partition(entries, possible)
	var st BalanceStats
	b = b.withDefaults()
	copies, ratio := b.Oversample, *b.Ratio
	out := make([]Entry, 0, len(pos)*copies+len(imp))
	for c := 0; c < copies; c++ {
		out = append(out, pos...)
	}
	st.Duplicates = len(pos) * (copies - 1)
	// Compared in float64, so a ratio too large for an int (or not a
	// number) means no cap rather than a bad slice bound.
	if ceiling := ratio * float64(len(out)); ratio > 0 && float64(len(imp)) > ceiling {
		limit := int(ceiling)
		g := rng(seed, "downsample/"+split)
		keep := g.Perm(len(imp))[:limit]
		slices.Sort(keep)
		kept := make([]Entry, len(keep))
		for i, k := range keep {
			kept[i] = imp[k]
		}
		st.Downsampled = len(imp) - limit
		imp = kept
	}
	out = append(out, imp...)
	g := rng(seed, "shuffle/"+split)
	g.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out, st
}

// checkSplits fails a plan in which a split given a share of the
// trajectories has no rows, before anything is written.
func checkSplits(cfg *Config, m *Manifest) error {
	r := cfg.ratio()
	for s, pct := range [numSplits]int{r.SFT, r.RL, r.Eval} {
		st := m.Splits.at(s)
		if pct == 0 || st.Rows.Total() > 0 {
			continue
		}
		e := &EmptySplitError{Split: splitNames[s], Percent: pct, Trajectories: st.Trajectories.Total(), Total: m.Trajectories,
			Probes: st.Probes.Total(), Possible: st.Probes.Possible}
		if m.Groups.By != "trajectory" {
			e.Groups = m.Groups.Count
		}
		return e
	}
	return nil
}

// partition splits entries into the possible and the impossible ones,
// keeping their order.
func partition(entries []Entry, possible func(Entry) bool) (pos, imp []Entry) {
	for _, e := range entries {
		if possible(e) {
			pos = append(pos, e)
		} else {
			imp = append(imp, e)
		}
	}
	return pos, imp
}
