package guard

import (
	"fmt"
	"net/http"
	"strings"

	"bagen-data/rollout"
)

// Policy is what the guard does with its estimates.
type Policy uint8

const (
	// Log records calls and estimates only.
	Log Policy = iota
	// Warn adds a note with the estimate and the budget left to the
	// session's next request (the paper's alert).
	Warn
	// Stop ends a session at its first impossible estimate, or once its
	// spent tokens pass the budget.
	Stop
)

var policyNames = [...]string{"log", "warn", "stop"}

func (p Policy) String() string { return policyNames[p] }

// ParsePolicy reads --policy.
func ParsePolicy(s string) (Policy, error) {
	for i, n := range policyNames {
		if s == n {
			return Policy(i), nil
		}
	}
	return 0, fmt.Errorf("policy: want log, warn or stop, got %q", s)
}

// StopAs is how a stopped session's requests are answered.
type StopAs uint8

const (
	// Auto picks per client: ContextLimit for the litellm and Python SDK
	// clients (mini-swe-agent, SWE-agent, Inspect), Message otherwise.
	Auto StopAs = iota
	// Message answers with a final assistant message and no tool call.
	Message
	// ContextLimit answers 400 with the API's context-window error.
	ContextLimit
)

var stopAsNames = [...]string{"auto", "message", "context-limit"}

func (s StopAs) String() string { return stopAsNames[s] }

// ParseStopAs reads --stop-as.
func ParseStopAs(s string) (StopAs, error) {
	for i, n := range stopAsNames {
		if s == n {
			return StopAs(i), nil
		}
	}
	return 0, fmt.Errorf("stop-as: want auto, message or context-limit, got %q", s)
}

// resolve is the way to stop the client that sent h.
func (s StopAs) resolve(h http.Header) StopAs {
	if s != Auto {
		return s
	}
	ua := strings.ToLower(h.Get("User-Agent"))
	for _, c := range []string{"litellm", "openai/python", "anthropic/python", "inspect"} {
		if strings.Contains(ua, c) {
			return ContextLimit
		}
	}
	return Message
}

// decision is what the guard does with one request.
type decision struct {
	stop *stopReason
	note string
	// header is X-Bagen-Guard: pass, warn or stop.
	header string
}

type stopReason struct {
	afterTurn int
	reason    string
	spent     int64
	usd       float64
	// detail says what a loop repeated ("made the same tool call").
	detail string
}

// stopText says why a session was stopped, without the words clients
// retry on.
func (g *Guard) stopText(r *stopReason) string {
	switch r.reason {
	case "budget":
		return fmt.Sprintf("bagen-data guard stopped this session after turn %d: it has spent %d tokens, past its budget of %d", r.afterTurn, r.spent, g.budget)
	case "budget_usd":
		return fmt.Sprintf("bagen-data guard stopped this session after turn %d: it has spent $%.4f, past its budget of $%.2f", r.afterTurn, r.usd, g.cfg.BudgetUSD)
	case "loop":
		return fmt.Sprintf("bagen-data guard stopped this session after turn %d: it %s %d times in a row", r.afterTurn, r.detail, g.cfg.Loop)
	}
	return fmt.Sprintf("bagen-data guard stopped this session after turn %d: the estimate is that the task cannot be finished within the budget of %d tokens (%d spent)", r.afterTurn, g.budget, r.spent)
}

// decide applies the policy to a session's next request.
func (g *Guard) decide(s *Session) decision {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop != nil {
		return decision{stop: &stopReason{afterTurn: s.stop.AfterTurn, reason: s.stop.Reason, spent: s.stop.Spent,
			usd: s.pol.usd, detail: s.pol.loopDetail}, header: "stop"}
	}
	if s.note != "" {
		note := s.note
		s.note = ""
		return decision{note: note, header: "warn"}
	}
	return decision{header: "pass"}
}

// warnNote is the alert added to a request under the warn policy.
func warnNote(afterTurn int, verdict string, interval *[2]int64, spent, budget int64) string {
	left := budget - spent
	switch {
	case verdict == "impossible":
		return fmt.Sprintf("[budget alert] After turn %d you have used %d of your %d-token budget (%d left). Estimate: the task cannot be finished within the budget. Wrap up now.", afterTurn, spent, budget, left)
	case interval != nil:
		return fmt.Sprintf("[budget alert] After turn %d you have used %d of your %d-token budget (%d left). Estimated tokens still needed: %d to %d.", afterTurn, spent, budget, left, interval[0], interval[1])
	}
	return ""
}

// decideStop is the decision to stop s after turn k, made with s.mu held.
// It is recorded in the ledger at once, but counted as a stop
// (bagen_guard_stops_total, metadata.guard.stopped_after_turn) only once
// it refuses a request (refused): a stop decided after a run's last turn
// refuses nothing.
func (g *Guard) decideStop(s *Session, k int, reason string, spent int64) *rollout.GuardStop {
	g.metrics.stopDecisions.WithLabelValues(reason).Inc()
	saved := max(0, g.budget-spent)
	return &rollout.GuardStop{Event: "stop", Session: s.ID, Time: g.stamp(), AfterTurn: k, Reason: reason, Spent: spent,
		Saved: saved, EstimatorTokens: s.estimatorTokens, Net: saved - s.estimatorTokens}
}

// refused counts s's stop the first time it refuses a request.
func (g *Guard) refused(s *Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop == nil || s.stopActed {
		return
	}
	s.stopActed = true
	g.metrics.stopped(s.stop)
	g.logf("session %s: stopped after turn %d (%s): its next request is refused", s.ID, s.stop.AfterTurn, s.stop.Reason)
}
