package guard

import (
	_ "embed"
	"encoding/json"
	"net/http"

	"bagen-data/rollout"
)

// The live page: GET / serves page.html, a static page whose script
// polls GET /sessions.json (Page) and draws it with text nodes only, so
// that nothing a client sends (a User-Agent, a model name) is ever read
// as markup. The page needs no asset from elsewhere.

//go:embed page.html
var pageHTML []byte

// pageSessions bounds the sessions the page lists.
const pageSessions = 200

// Page is what GET /sessions.json answers: the sessions held that have
// made a call, most recently active first (at most 200), and their
// totals. Money (prices per model) and forecasts have their place as
// fields of SessionView beside Spent and Estimate.
type Page struct {
	// Now is the guard's clock (RFC 3339), the reference of the ages
	// shown.
	Now    string `json:"now"`
	Policy string `json:"policy"`
	Task   string `json:"task"`
	// Budget is the session token budget; 0: none.
	Budget int64 `json:"budget"`
	// Held is the number of sessions held in memory (the
	// bagen_guard_sessions gauge), listed or not.
	Held int `json:"held"`
	// Totals sum Sessions.
	Totals   PageTotals    `json:"totals"`
	Sessions []SessionView `json:"sessions"`
}

// PageTotals are the sums over the sessions a Page lists. With every
// session held and listed they are /metrics' counters: Sessions is
// bagen_guard_sessions_total, Tokens bagen_guard_tokens_total summed over
// formats, Verdicts bagen_guard_estimates_total, Stops
// bagen_guard_stops_total and Decided bagen_guard_stop_decisions_total.
type PageTotals struct {
	Sessions int            `json:"sessions"`
	Calls    int            `json:"calls"`
	Turns    int            `json:"turns"`
	Spent    int64          `json:"spent"`
	Tokens   Tokens         `json:"tokens"`
	Verdicts map[string]int `json:"verdicts"`
	Stops    int            `json:"stops"`
	Decided  int            `json:"decided"`
}

// Tokens are the tokens the upstream reported, summed over calls, as
// bagen_guard_tokens_total counts them (Input includes Cached, Output
// includes Reasoning).
type Tokens struct {
	Input     int64 `json:"input"`
	Output    int64 `json:"output"`
	Reasoning int64 `json:"reasoning"`
	Cached    int64 `json:"cached"`
}

// SessionView is one session on the page.
type SessionView struct {
	ID string `json:"id"`
	// Client is the User-Agent of the session's first request ("" when
	// redacted); Model the model its last call asked for.
	Client string `json:"client"`
	Model  string `json:"model"`
	Format string `json:"format"`
	// Started and Last are the times of its first and latest event.
	Started string `json:"started"`
	Last    string `json:"last"`
	Calls   int    `json:"calls"`
	Turns   int    `json:"turns"`
	// Spent is the tokens spent by the guard's accounting, the number the
	// budget is held against.
	Spent  int64  `json:"spent"`
	Budget int64  `json:"budget"`
	Tokens Tokens `json:"tokens"`
	// Estimate is the latest estimate; nil before the first.
	Estimate *EstimateView `json:"estimate,omitempty"`
	// Verdicts counts the session's estimates by verdict.
	Verdicts        map[string]int `json:"verdicts"`
	EstimatorTokens int64          `json:"estimator_tokens"`
	// Stop is the stop decided; nil when none.
	Stop *StopView `json:"stop,omitempty"`
}

// EstimateView is an estimate of the tokens a session still needs.
type EstimateView struct {
	AfterTurn int    `json:"after_turn"`
	Verdict   string `json:"verdict"`
	// Interval is [low, high] for an interval or scalar verdict.
	Interval *[2]int64 `json:"interval,omitempty"`
	// Reason says why a turn is unestimated.
	Reason string `json:"reason,omitempty"`
}

// StopView is a session's stop decision.
type StopView struct {
	AfterTurn int    `json:"after_turn"`
	Reason    string `json:"reason"`
	Spent     int64  `json:"spent"`
	Saved     int64  `json:"saved"`
	// Refused: the stop has refused a request (it is counted in
	// bagen_guard_stops_total).
	Refused bool `json:"refused"`
}

// pageState is what the page shows of a session beyond its counts, read
// from the events the session records. Guarded by Session.mu.
type pageState struct {
	client, model, format string
	started, last         string
	tokens                Tokens
	estimate              *EstimateView
	verdicts              map[string]int
}

// see takes in a session's events.
func (p *pageState) see(events []any) {
	for _, e := range events {
		switch e := e.(type) {
		case rollout.GuardSession:
			p.client, p.format, p.started = e.Client, e.Format, e.Time
			p.last = e.Time
		case rollout.GuardCall:
			if e.Model != "" {
				p.model = e.Model
			}
			p.format = e.Format
			p.tokens.add(e.Usage)
			p.last = e.Time
		case rollout.GuardEstimate:
			if p.verdicts == nil {
				p.verdicts = map[string]int{}
			}
			p.verdicts[e.Verdict]++
			if p.estimate == nil || e.AfterTurn >= p.estimate.AfterTurn {
				p.estimate = &EstimateView{AfterTurn: e.AfterTurn, Verdict: e.Verdict, Interval: e.Interval, Reason: e.Reason}
			}
			p.last = e.Time
		}
	}
}

func (t *Tokens) add(u *rollout.GuardUsage) {
	if u == nil {
		return
	}
	t.Input += max(u.Input, 0)
	t.Output += max(u.Output, 0)
	t.Cached += max(u.Cached, 0)
	if u.Reasoning != nil {
		t.Reasoning += max(*u.Reasoning, 0)
	}
}

// view is s as the page shows it; ok is false for a session that has
// made no call yet.
func (g *Guard) view(s *Session) (v SessionView, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := &s.page
	if p.started == "" {
		return v, false
	}
	v = SessionView{ID: s.ID, Client: p.client, Model: p.model, Format: p.format, Started: p.started, Last: p.last,
		Calls: s.calls, Turns: s.turns, Spent: s.spent, Budget: g.budget, Tokens: p.tokens,
		Verdicts: map[string]int{}, EstimatorTokens: s.estimatorTokens}
	for k, n := range p.verdicts {
		v.Verdicts[k] = n
	}
	if p.estimate != nil {
		e := *p.estimate
		v.Estimate = &e
	}
	if s.stop != nil {
		v.Stop = &StopView{AfterTurn: s.stop.AfterTurn, Reason: s.stop.Reason, Spent: s.stop.Spent, Saved: s.stop.Saved, Refused: s.stopActed}
	}
	return v, true
}

// Page is the guard's state as the live page shows it.
func (g *Guard) Page() Page {
	held, recent := g.sessions.recent(pageSessions)
	p := Page{Now: g.stamp(), Policy: g.cfg.Policy.String(), Task: g.task.Name, Budget: g.budget, Held: held,
		Sessions: []SessionView{}, Totals: PageTotals{Verdicts: map[string]int{}}}
	for _, s := range recent {
		v, ok := g.view(s)
		if !ok {
			continue
		}
		p.Sessions = append(p.Sessions, v)
		p.Totals.add(v)
	}
	return p
}

func (t *PageTotals) add(v SessionView) {
	t.Sessions++
	t.Calls += v.Calls
	t.Turns += v.Turns
	t.Spent += v.Spent
	t.Tokens.Input += v.Tokens.Input
	t.Tokens.Output += v.Tokens.Output
	t.Tokens.Reasoning += v.Tokens.Reasoning
	t.Tokens.Cached += v.Tokens.Cached
	for k, n := range v.Verdicts {
		t.Verdicts[k] += n
	}
	if v.Stop != nil {
		t.Decided++
		if v.Stop.Refused {
			t.Stops++
		}
	}
}

// recent is the number of sessions held and the n most recently used.
func (ss *sessions) recent(n int) (int, []*Session) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	out := make([]*Session, 0, min(n, ss.lru.Len()))
	for e := ss.lru.Front(); e != nil && len(out) < n; e = e.Next() {
		out = append(out, e.Value.(*Session))
	}
	return ss.lru.Len(), out
}

// servePage answers GET / and GET /sessions.json.
func (g *Guard) servePage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if r.URL.Path == "/sessions.json" {
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.Marshal(g.Page())
		w.Write(append(b, '\n'))
		return
	}
	// The page runs its own inline script and fetches its own origin only.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(pageHTML)
}

// isPage reports whether r asks for the live page or its data.
func isPage(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && (r.URL.Path == "/" || r.URL.Path == "/sessions.json")
}
