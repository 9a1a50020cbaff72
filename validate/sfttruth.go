package validate

import (
	"fmt"

	"bagen-data/dataset"
	"bagen-data/probes"
	"bagen-data/reward"
)

// SFT rows carry no truth column: their answer is the truth. They carry
// what checks it, though: the budget, per_turn_tokens (so the tokens spent
// before the probe, up to the system prompt) and, across the probes of one
// trajectory, the paper's invariants — one is_possible, and one total
// remaining + Σ per_turn_tokens (used_p − sys = Σ_{k<p}(in_k + out_k);
// used_0 − sys = in_0). The answers are checked against them as RL labels
// are against extra_info: each answer's class against its trajectory's,
// each estimate against the width's target of the trajectory's remaining
// tokens at that probe, and a possible trajectory's total against its
// budget.

// sftProbe is what one SFT row says about its probe.
type sftProbe struct {
	at       loc
	p        int64
	possible bool
	// r is the remaining_tokens the answer is the width's target of; rOK
	// says there is one (a possible answer under a known width).
	r   int64
	rOK bool
	// prefix is Σ per_turn_tokens (in + out); in0 the first turn's input
	// (when p ≥ 1).
	prefix, in0 int64
	budget      int64
}

// sftTraj collects the SFT probes of one trajectory.
type sftTraj struct {
	name   string
	probes []sftProbe
}

// checkSFTBudget checks an SFT row's budget column against its prompt,
// the manifest and its trajectory's other probes.
func (v *validator) checkSFTBudget(f *file, at loc, row dataset.SFTRow) {
	n := len(row.Messages)
	if row.Budget <= 0 {
		v.fs.add(CheckLabels, Error, "budget", f.path, "rows without a positive budget", at.example(fmt.Sprintf("budget %d", row.Budget)))
	} else if n > 0 {
		v.checkPromptBudget(f, at, row.Budget, row.Messages[:n-1])
	}
	v.checkManifestBudget(f, at, row.Budget)
	v.checkTrajectoryBudget(f, at, dataset.TrajectoryOf(row.CustomID), row.Budget)
}

// recordSFTProbe notes an SFT row whose probe position, per_turn_tokens and
// answer are readable, for sftTruths.
func (v *validator) recordSFTProbe(at loc, row dataset.SFTRow, p int64) {
	possible, ok := sftClass(row)
	if !ok || int64(len(row.PerTurnTokens)) != p {
		return // reported by the answer, shape and per-turn checks
	}
	sp := sftProbe{at: at, p: p, possible: possible, budget: row.Budget}
	for _, t := range row.PerTurnTokens {
		sp.prefix += t.InputTokens + t.OutputTokens
	}
	if p >= 1 {
		sp.in0 = row.PerTurnTokens[0].InputTokens
	}
	if possible {
		sp.r, sp.rOK = v.answerRemaining(row)
	}
	traj := dataset.TrajectoryOf(row.CustomID)
	t := v.sftTrajs[traj]
	if t == nil {
		t = &sftTraj{name: traj}
		v.sftTrajs[traj] = t
		v.sftOrder = append(v.sftOrder, traj)
	}
	t.probes = append(t.probes, sp)
}

// answerRemaining is the remaining_tokens whose target under the build's
// width is the row's estimate.
func (v *validator) answerRemaining(row dataset.SFTRow) (int64, bool) {
	a, ok := sftAnswer(row)
	w := v.width
	if !ok || w == nil {
		return 0, false
	}
	switch {
	case w.Kind == probes.Point && a.Kind == reward.Scalar:
		return a.Low, true
	case w.Kind != probes.Point && a.Kind == reward.Interval:
		return remainingFor(*w, a.Low, a.High)
	}
	return 0, false
}

// sftTruths checks every SFT trajectory's answers against each other and
// its budget.
func (v *validator) sftTruths() {
	level, applies := v.labelLevel(&file{})
	if !applies {
		return
	}
	sys := v.systemTokens()
	for _, name := range v.sftOrder {
		t := v.sftTrajs[name]
		possible := t.majorityClass()
		v.sftClassCheck(t, possible, level)
		if possible {
			v.sftTotalCheck(t, level, sys)
		}
	}
}

// firstByProbe returns the first row of each probe position: oversampled
// duplicates vote once.
func (t *sftTraj) firstByProbe() []sftProbe {
	seen := map[int64]bool{}
	var out []sftProbe
	for _, sp := range t.probes {
		if !seen[sp.p] {
			seen[sp.p] = true
			out = append(out, sp)
		}
	}
	return out
}

// majorityClass is the class most of t's probes answer; a tie goes to the
// first probe's.
func (t *sftTraj) majorityClass() bool {
	n := 0
	for _, sp := range t.firstByProbe() {
		if sp.possible {
			n++
		} else {
			n--
		}
	}
	return n > 0 || (n == 0 && t.probes[0].possible)
}

func className(possible bool) string {
	if possible {
		return "an estimate"
	}
	return "impossible"
}

func (v *validator) sftClassCheck(t *sftTraj, possible bool, level Level) {
	agree := 0
	for _, sp := range t.firstByProbe() {
		if sp.possible == possible {
			agree++
		}
	}
	for _, sp := range t.probes {
		if sp.possible == possible {
			continue
		}
		v.fs.add(CheckLabels, level, "sft-trajectory-label", "",
			"SFT answers whose class (estimate or impossible) differs from the other probes of their trajectory (one is_possible per trajectory)"+labelNote(level),
			sp.at.example(fmt.Sprintf("answers %s after %d turns; %d of the %d probes of trajectory %q answer %s",
				className(sp.possible), sp.p, agree, len(t.firstByProbe()), t.name, className(possible))))
	}
}

// total is the trajectory total less the system prompt implied by sp's
// estimate: r + Σ_{k<p}(in_k + out_k), or r + in_0 at p = 0.
func (sp sftProbe) total(in0 int64, in0OK bool) (int64, bool) {
	switch {
	case !sp.possible || !sp.rOK:
		return 0, false
	case sp.p >= 1:
		return sp.r + sp.prefix, true
	case in0OK:
		return sp.r + in0, true
	}
	return 0, false
}

// used is the tokens before sp less the system prompt.
func (sp sftProbe) used(in0 int64) int64 {
	if sp.p == 0 {
		return in0
	}
	return sp.prefix
}

func (v *validator) sftTotalCheck(t *sftTraj, level Level, sys int64) {
	var in0 int64
	in0OK := false
	for _, sp := range t.probes {
		if sp.p >= 1 {
			in0, in0OK = sp.in0, true
			break
		}
	}
	votes := map[int64]int{}
	var order []int64
	for _, sp := range t.firstByProbe() {
		if tot, ok := sp.total(in0, in0OK); ok {
			if votes[tot] == 0 {
				order = append(order, tot)
			}
			votes[tot]++
		}
	}
	if len(order) == 0 {
		return
	}
	best := order[0]
	for _, tot := range order {
		if votes[tot] > votes[best] {
			best = tot
		}
	}
	for _, sp := range t.probes {
		tot, ok := sp.total(in0, in0OK)
		if !ok {
			continue
		}
		if tot != best {
			want := v.width.GroundTruth(probes.Probe{Remaining: best - sp.used(in0), Possible: true})
			v.fs.add(CheckLabels, level, "sft-trajectory-total", "",
				"SFT estimates that are not the width's target of their trajectory's remaining tokens (remaining + Σ per_turn_tokens differs from the other probes')"+labelNote(level),
				sp.at.example(fmt.Sprintf("answer is the target of remaining_tokens %d; %d of the trajectory's probes put it at %d after %d turns (want %s)",
					sp.r, votes[best], best-sp.used(in0), sp.p, want)))
		}
		if best+sys > sp.budget {
			v.fs.add(CheckLabels, Error, "sft-budget-rule", "",
				"SFT rows answering an estimate for a trajectory whose tokens exceed the budget (is_possible needs tokens_used + remaining_tokens ≤ budget)",
				sp.at.example(fmt.Sprintf("tokens before the probe %d + remaining %d + system prompt %d = %d > budget %d",
					sp.used(in0), best-sp.used(in0), sys, best+sys, sp.budget)))
		}
	}
}

// systemTokens is the system prompt's share of tokens_used that the RL and
// eval rows agree on, else 0 (a lower bound).
func (v *validator) systemTokens() int64 {
	seen := v.sysCount[""]
	if len(seen) != 1 {
		return 0
	}
	for sys := range seen {
		return max(sys, 0)
	}
	return 0
}

// labelNote explains a warning-level trajectory check.
func labelNote(level Level) string {
	if level == Warning {
		return " (no manifest says which label rule built the data; bagen-v1 labels differ at p = 0 and p = T)"
	}
	return ""
}
