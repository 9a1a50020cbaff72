package guard

import (
	"context"
	"net/http"
	"time"
)

// Replicas. Several guards may serve one team's agents behind a load
// balancer that hashes the session header (nginx's `hash
// $http_x_bagen_session consistent;`, Envoy's RING_HASH), sharing one
// ledger directory. The affinity is soft: when a replica dies or is
// added, some sessions move. A session with an explicit id has the same
// ledger file on every replica (keyID), so a replica that
// receives a request of a session whose file another has written to
// reads the file back before it resolves the request: the turns and
// their usage, the calls, the estimates' cost and the stop, so that a
// stopped session stays stopped (and its stop is counted once) and no
// turn is counted twice. Sessions without an explicit id cannot be
// found again across replicas.

// catchUp brings the explicit session of a request up to date with the
// ledger when another guard has written to its file since this one last
// saw it; with Wait, it then waits (at most EstimateTimeout) for the
// estimate of the session's last turn when that turn was due one and
// the other guard has not recorded it yet.
func (g *Guard) catchUp(ctx context.Context, h http.Header, req *Request) {
	if g.ledger == nil {
		return
	}
	name, _ := explicitID(h, req)
	if name == "" {
		return
	}
	id := keyID(childKey(h, name))
	if !g.ledger.changed(id) {
		return
	}
	s, st, ok := g.reload(h, req, id)
	if !ok || !g.cfg.Wait || !g.awaiting(s, st) {
		return
	}
	deadline := time.NewTimer(g.cfg.EstimateTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-deadline.C:
			g.logf("session %s: the estimate after turn %d, due from another guard, is not in the ledger after %v; traffic flows", s.ID, st.turns, g.cfg.EstimateTimeout)
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !g.ledger.changed(id) {
			continue
		}
		if s, st, ok = g.reload(h, req, id); !ok || !g.awaiting(s, st) {
			return
		}
	}
}

// reload reads session id's file and sets the session to it, starting
// the session when this guard holds none; ok is false when the file
// has no events or cannot be read (logged and counted: the session then
// goes on as this guard knows it).
func (g *Guard) reload(h http.Header, req *Request, id string) (*Session, ledgerState, bool) {
	data, err := g.ledger.read(id)
	var st ledgerState
	if err == nil {
		st, err = readLedgerState(g.ledger.path(id), data)
	}
	if err != nil {
		g.metrics.ledgerErrors.Inc()
		g.logf("session %s: reading the ledger back: %v", id, err)
		return nil, st, false
	}
	if !st.written {
		return nil, st, false
	}
	s := g.sessions.hold(h, req, st.tools)
	s.mu.Lock()
	s.restore(st)
	s.mu.Unlock()
	return s, st, true
}

// awaiting reports whether the last turn of st was due an estimate that
// is not in the ledger yet and that this guard is not making (its own
// are awaited by awaitEstimate).
func (g *Guard) awaiting(s *Session, st ledgerState) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.turns == 0 || st.estimated >= st.turns || !g.due(s, st.turns) {
		return false
	}
	if s.pending == nil {
		return true
	}
	select {
	case <-s.pending:
		return true // an estimate of an earlier turn
	default:
		return false
	}
}

// restore sets s to its ledger state, unless s is ahead of its file
// (calls of its own not yet written: two guards serving one session at
// once, during a move, are not reconciled). Called with s.mu held.
func (s *Session) restore(st ledgerState) {
	if st.calls < s.calls {
		return
	}
	s.calls, s.turns, s.usage, s.spent = st.calls, st.turns, st.usage, st.spent()
	s.stop, s.stopActed, s.estimatorTokens = st.stop, st.stopActed, st.estimatorTokens
	s.pol.warned, s.pol.usd, s.pol.forecast, s.note = st.warned, st.usd, st.forecast, st.note
	// The file has the session event and a turn: nothing is held back.
	s.logged, s.written, s.held = true, true, nil
}

// hold is the session of a request's explicit id, started when this
// guard holds none; tools: the session's requests offer tools.
func (ss *sessions) hold(h http.Header, req *Request, tools bool) *Session {
	id, _ := explicitID(h, req)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.byKey[childKey(h, id)]
	if s == nil {
		s = ss.create(h, req)
	}
	s.tools = s.tools || tools
	return s
}
