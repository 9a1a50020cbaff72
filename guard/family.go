package guard

import "net/http"

// A session may be the child of another: a Claude Code subagent's calls
// carry its parent's X-Claude-Code-Session-Id with the subagent's own
// X-Claude-Code-Agent-Id (and X-Claude-Code-Parent-Agent-Id when the
// parent is itself a subagent), as the real CLI sends them; any client
// may name a parent with X-Bagen-Parent-Session beside X-Bagen-Session.
// A child is a session of its own (its own turns, transcript and ledger
// file, whose session event names the parent), but its tokens and
// dollars count toward its family's budget: every member's thresholds
// and stop see the whole family's spending.

// childKey is the explicit key of a request's session: id, with the
// subagent's id when the request comes from a Claude Code subagent.
func childKey(h http.Header, id string) string {
	if a := h.Get("X-Claude-Code-Agent-Id"); a != "" {
		return id + "\x00agent:" + a
	}
	return id
}

// parentKey is the explicit key of the parent of a request's session, ""
// when it names none.
func parentKey(h http.Header, id string) string {
	if h.Get("X-Claude-Code-Agent-Id") != "" {
		if p := h.Get("X-Claude-Code-Parent-Agent-Id"); p != "" {
			return id + "\x00agent:" + p
		}
		return id
	}
	if p := h.Get("X-Bagen-Parent-Session"); p != "" && p != id && h.Get("X-Bagen-Session") != "" {
		return p
	}
	return ""
}

// adopt makes s a child of the session of key parent: its Parent is the
// parent's id (known from the key even when the guard has not seen the
// parent), and its root the parent's family's top session, when held.
// Called with ss.mu held, when s is made.
func (ss *sessions) adopt(s *Session, parent string) {
	if parent == "" {
		return
	}
	s.Parent = keyID(parent)
	p := ss.byKey[parent]
	if p == nil {
		return
	}
	s.root = p
	if p.root != nil {
		s.root = p.root
	}
}

// family is the tokens and dollars s's family has spent: its top
// session's and every child's. Called with s.mu held; it takes the top
// session's mu (children lock their root, never the reverse).
func (s *Session) family() (int64, float64) {
	if s.root == nil {
		return s.spent + s.pol.childSpent, s.pol.usd + s.pol.childUSD
	}
	r := s.root
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.spent + r.pol.childSpent, r.pol.usd + r.pol.childUSD
}

// report adds what a child spent since it last reported to its root.
// Called with s.mu held.
func (s *Session) report() {
	if s.root == nil {
		return
	}
	dt, du := s.spent-s.pol.reported, s.pol.usd-s.pol.reportedUSD
	s.pol.reported, s.pol.reportedUSD = s.spent, s.pol.usd
	r := s.root
	r.mu.Lock()
	r.pol.childSpent += dt
	r.pol.childUSD += du
	r.mu.Unlock()
}

// familyGate stops a session whose family is past its budget because of
// another member's turns, before its request goes out; it returns the
// stop event to record.
func (g *Guard) familyGate(c *call) []any {
	s := c.s
	if g.cfg.Policy != Stop {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop != nil || (s.root == nil && s.pol.childSpent == 0 && s.pol.childUSD == 0) {
		return nil
	}
	spent, usd := s.family()
	why := g.pastBudget(spent, usd)
	if why == "" {
		return nil
	}
	s.stop = g.decideStop(s, s.turns, why, spent)
	g.logf("session %s: stop decided after turn %d: its family has spent %s, past the budget", s.ID, s.turns, g.spentText(spent, usd))
	return []any{*s.stop}
}
