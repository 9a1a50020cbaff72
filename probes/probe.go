package probes

import (
	"fmt"
	"strconv"
	"strings"
)

// Labels selects the labelling rule.
type Labels uint8

const (
	// LabelsPaper labels probes p = 0 … T−1 with one label per trajectory:
	// possible iff the rollout succeeded and sys + Σ_k(in_k + out_k) fits
	// the budget. The trailing message is never counted.
	LabelsPaper Labels = iota
	// LabelsBagenV1 reproduces the authors' reference script
	// (prepare_budget_probe.py): probes at p = 0, n, 2n, … ≤ T (so p = T
	// only when n divides T), none for a rollout without a complete turn,
	// the trailing message's tokens added to r_0 and r_T, and each probe
	// labelled by success ∧ used_p + r_p ≤ budget.
	LabelsBagenV1
)

// ParseLabels reads the --labels flag.
func ParseLabels(s string) (Labels, error) {
	switch s {
	case "paper", "":
		return LabelsPaper, nil
	case "bagen-v1":
		return LabelsBagenV1, nil
	}
	return 0, fmt.Errorf("labels: want paper or bagen-v1, got %q", s)
}

func (l Labels) String() string {
	if l == LabelsBagenV1 {
		return "bagen-v1"
	}
	return "paper"
}

// Options controls where probes are placed and how they are labelled. The
// zero value probes every turn with the paper's labels and drops the
// trivial r = 0 probes, as the paper does.
type Options struct {
	Labels Labels
	// Every places probes at p = 0, n, 2n, …; zero means 1.
	Every int
	// MinRemaining drops probes whose remaining tokens r are below it; nil
	// means DefaultMinRemaining (1: the trivial r = 0 probes are dropped, as
	// the paper does), and a pointer to 0 keeps every probe.
	MinRemaining *int64
}

// DefaultMinRemaining is Options.MinRemaining's default, build's
// --min-remaining too.
const DefaultMinRemaining = 1

// Minimum is the MinRemaining in effect.
func (o Options) Minimum() int64 {
	if o.MinRemaining == nil {
		return DefaultMinRemaining
	}
	return *o.MinRemaining
}

// Probe is one budget probe: the estimator sees the prefix before turn
// After and must predict Remaining, or impossible.
type Probe struct {
	After     int   // p: completed turns shown
	Used      int64 // tokens used by the visible prefix, system prompt included
	Remaining int64 // r: tokens still to come
	Possible  bool
}

// Probes places and labels the probes of one trajectory with T = len(a.Turns)
// turns, sys system-prompt tokens and the given budget:
//
//	used_0 = sys + in_0              r_0 = Σ_k out_k + Σ_{k≥1} in_k
//	used_p = sys + Σ_{k<p}(in_k + out_k)   r_p = Σ_{k≥p}(in_k + out_k)   (p ≥ 1)
//
// Probes with r < o.Minimum() are dropped; dropped is their count.
func Probes(a Accounting, sys, budget int64, success bool, o Options) (out []Probe, dropped int) {
	every := max(o.Every, 1)
	T := len(a.Turns)
	last := T - 1
	if o.Labels == LabelsBagenV1 {
		if T == 0 {
			return nil, 0 // the reference script emits nothing for such a rollout
		}
		last = T
	}
	total, floor := a.Total(sys), o.Minimum()
	trajPossible := success && total <= budget
	// prefix[p] = Σ_{k<p}(in_k + out_k)
	prefix := make([]int64, T+1)
	for k, t := range a.Turns {
		prefix[k+1] = prefix[k] + t.In + t.Out
	}
	emit := func(p int) {
		var pr Probe
		pr.After = p
		if p == 0 {
			in0 := int64(0)
			if T > 0 {
				in0 = a.Turns[0].In
			}
			pr.Used = sys + in0
			pr.Remaining = prefix[T] - in0
		} else {
			pr.Used = sys + prefix[p]
			pr.Remaining = prefix[T] - prefix[p]
		}
		pr.Possible = trajPossible
		if o.Labels == LabelsBagenV1 {
			if p == 0 || p == T {
				pr.Remaining += a.Trailing
			}
			pr.Possible = success && pr.Used+pr.Remaining <= budget
		}
		if pr.Remaining < floor {
			dropped++
			return
		}
		out = append(out, pr)
	}
	for p := 0; p <= last; p += every {
		emit(p)
	}
	return out, dropped
}

// UsageText is the per-turn usage line of the probe text for the first p
// turns: "Turn k: input X tokens, output Y tokens, total Z tokens" joined by
// "; ", or "(no turns completed yet)".
func UsageText(turns []TurnTokens, p int) string {
	if p == 0 {
		return noTurns
	}
	// usageFormat, written with strconv: fmt cost a build more than the
	// rest of the probe text.
	var b strings.Builder
	b.Grow(p * 64)
	var num [20]byte
	for k := 0; k < p; k++ {
		if k > 0 {
			b.WriteString("; ")
		}
		t := turns[k]
		b.WriteString("Turn ")
		b.Write(strconv.AppendInt(num[:0], int64(k+1), 10))
		b.WriteString(": input ")
		b.Write(strconv.AppendInt(num[:0], t.In, 10))
		b.WriteString(" tokens, output ")
		b.Write(strconv.AppendInt(num[:0], t.Out, 10))
		b.WriteString(" tokens, total ")
		b.Write(strconv.AppendInt(num[:0], t.In+t.Out, 10))
		b.WriteString(" tokens")
	}
	return b.String()
}

// The usage line's parts, written by UsageText and read by ParseProbe.
const (
	noTurns     = "(no turns completed yet)"
	usageFormat = "Turn %d: input %d tokens, output %d tokens, total %d tokens"
)
