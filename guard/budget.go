package guard

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"bagen-data/rollout"
)

// DefaultWarnAt are the shares of the budget, in percent, a session is
// warned at when Config.WarnAt is nil.
var DefaultWarnAt = []float64{80, 90, 100}

// ParseWarnAt reads --warn-at: percentages separated by commas ("80,90,100"),
// each in (0, 1000]; "none" is no thresholds.
func ParseWarnAt(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "none" {
		return []float64{}, nil
	}
	var out []float64
	for i, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f), "%")), 64)
		if err != nil || math.IsNaN(v) || v <= 0 || v > 1000 {
			return nil, fmt.Errorf("warn-at: item %d: want a percentage in (0, 1000], got %q", i+1, f)
		}
		out = append(out, v)
	}
	return out, nil
}

// FormatWarnAt writes shares as ParseWarnAt reads them: "80,90,100";
// "none" for no thresholds.
func FormatWarnAt(at []float64) string {
	if len(at) == 0 {
		return "none"
	}
	parts := make([]string, len(at))
	for i, v := range at {
		parts[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}

// validatePolicy checks the fields of the budget policies.
func (c Config) validatePolicy() []error {
	var errs []error
	for i, v := range c.WarnAt {
		if math.IsNaN(v) || v <= 0 || v > 1000 {
			errs = append(errs, fmt.Errorf("WarnAt[%d]: want a percentage in (0, 1000], got %v", i, v))
		}
	}
	if math.IsNaN(c.BudgetUSD) || c.BudgetUSD < 0 {
		errs = append(errs, fmt.Errorf("BudgetUSD: want ≥ 0, got %v", c.BudgetUSD))
	}
	if c.BudgetUSD > 0 && c.Prices == nil {
		errs = append(errs, errors.New("BudgetUSD: needs Prices"))
	}
	if c.Loop < 0 {
		//lint:ignore ST1005 the error starts with the Config field it names
		errs = append(errs, fmt.Errorf("Loop: want ≥ 0, got %d", c.Loop))
	}
	return errs
}

// warnShares are the thresholds, ascending and without repeats.
func warnShares(at []float64) []float64 {
	if at == nil {
		at = DefaultWarnAt
	}
	out := slices.Clone(at)
	slices.Sort(out)
	return slices.Compact(out)
}

// policyState is what the budget policies keep of a session, guarded by
// Session.mu.
type policyState struct {
	// usd is what the session's priced calls cost; unpriced counts the
	// answered calls that could not be priced.
	usd      float64
	unpriced int
	// warned is how many thresholds (Guard.warnAt) have been crossed.
	warned int
	// loopKey names the loop last acted on (loopOf), loopDetail says
	// what it repeated.
	loopKey, loopDetail string
	// childSpent and childUSD are what the session's children spent (a
	// family's top session: family.go); reported and reportedUSD what a
	// child has added to its root's.
	childSpent, reported  int64
	childUSD, reportedUSD float64
	// forecast is the latest forecast; model the run's model.
	forecast *rollout.GuardForecast
	model    string
}

// reached reports whether spent tokens and usd dollars reach pct percent
// of a budget: spent·100 ≥ pct·budget, exact for whole percentages.
func (g *Guard) reached(spent int64, usd, pct float64) bool {
	if g.budget > 0 && float64(spent)*100 >= pct*float64(g.budget) {
		return true
	}
	return g.cfg.BudgetUSD > 0 && usd*100 >= pct*g.cfg.BudgetUSD
}

// pastBudget is the reason to stop a session past one of its budgets
// (tokens strictly past Budget, dollars strictly past BudgetUSD), "" when
// none is passed.
func (g *Guard) pastBudget(spent int64, usd float64) string {
	switch {
	case g.budget > 0 && spent > g.budget:
		return "budget"
	case g.cfg.BudgetUSD > 0 && usd > g.cfg.BudgetUSD:
		return "budget_usd"
	}
	return ""
}

// price adds a call's dollars to its session; it reports them, 0 and
// false when the call is not priced. Called with s.mu held.
func (g *Guard) price(s *Session, model string, u *rollout.GuardUsage) (float64, bool) {
	if g.cfg.Prices == nil || u == nil {
		return 0, false
	}
	if model != "" {
		s.pol.model = model
	}
	usd, ok := g.cfg.Prices.Cost(model, u)
	if !ok {
		s.pol.unpriced++
		if s.pol.unpriced == 1 {
			g.metrics.unpriced.Inc()
			g.logf("session %s: model %q has no line in the prices file (or its usage lacks a count): its dollars are not counted", s.ID, model)
		}
		return 0, false
	}
	s.pol.usd += usd
	g.metrics.usd.Add(usd)
	return usd, true
}

// crossed warns s once for each threshold its family's spending (its
// own, for a session without parent or children) has reached after turn
// k, returning the events to record. Under policy stop the 100%
// threshold and above are the stop's, not warnings. Called with s.mu
// held.
func (g *Guard) crossed(s *Session, k int) []any {
	var events []any
	spent, usd := s.family()
	for s.pol.warned < len(g.warnAt) && g.reached(spent, usd, g.warnAt[s.pol.warned]) {
		pct := g.warnAt[s.pol.warned]
		s.pol.warned++
		if g.cfg.Policy == Stop && pct >= 100 {
			continue
		}
		ev := rollout.GuardWarn{Event: "warn", Session: s.ID, Time: g.stamp(), AfterTurn: k, Reason: "threshold",
			Threshold: pct, Spent: spent, USD: usd}
		if g.cfg.Policy != Log {
			ev.Note = g.thresholdNote(k, pct, spent, usd, s.pol.forecast)
			s.note = joinNotes(s.note, ev.Note)
		}
		g.metrics.warnings.WithLabelValues("threshold", strconv.FormatFloat(pct, 'f', -1, 64)).Inc()
		g.logf("session %s: %g%% of the budget reached after turn %d (%s)", s.ID, pct, k, g.spentText(spent, usd))
		events = append(events, ev)
	}
	return events
}

// thresholdNote is the alert of a threshold crossed.
func (g *Guard) thresholdNote(k int, pct float64, spent int64, usd float64, f *rollout.GuardForecast) string {
	return fmt.Sprintf("[budget alert] After turn %d you have used %g%% of your budget: %s.", k, pct, g.spentText(spent, usd)) + forecastText(f)
}

// spentText says what a session spent against each budget given.
func (g *Guard) spentText(spent int64, usd float64) string {
	var parts []string
	if g.budget > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d tokens", spent, g.budget))
	} else {
		parts = append(parts, fmt.Sprintf("%d tokens", spent))
	}
	if g.cfg.BudgetUSD > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f of $%.2f", usd, g.cfg.BudgetUSD))
	} else if g.cfg.Prices != nil {
		parts = append(parts, fmt.Sprintf("$%.4f", usd))
	}
	return strings.Join(parts, ", ")
}

// joinNotes puts two notes for the same request in one.
func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}
