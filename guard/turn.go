package guard

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"bagen-data/rollout"
)

// begin counts a call and writes the session's first ledger event.
func (g *Guard) begin(c *call, r *http.Request, how string, firstTools bool) {
	s := c.s
	s.mu.Lock()
	s.calls++
	if firstTools && s.turns > 0 {
		// The turns so far were side calls: the run starts here.
		s.turns, s.usage, s.spent = 0, nil, 0
	}
	first := !s.logged
	s.logged = true
	if s.pol.model == "" {
		s.pol.model = c.req.Model
	}
	s.mu.Unlock()
	if first {
		g.metrics.sessions.Inc()
		client := r.Header.Get("User-Agent")
		if g.redact["User-Agent"] {
			client = ""
		}
		g.record(s, rollout.GuardSession{Version: rollout.GuardVersion, Event: "session", Session: s.ID, Time: g.stamp(),
			Policy: g.cfg.Policy.String(), Budget: g.budget, Task: g.task.Name, Format: c.codec.Name(), Client: client, Key: how,
			BudgetUSD: g.cfg.BudgetUSD, Parent: s.Parent})
	}
	// After the session event: the forecast's estimate, which runs on
	// its own, is recorded after it.
	if (first || firstTools) && !c.side {
		// The run starts here: a side call before it is not its task.
		g.startForecast(s, c.req.Items)
	}
}

// finish records a call once its answer is through: usage, the session's
// links, the ledger, and the estimate when one is due.
func (g *Guard) finish(c *call, reply *Reply) {
	c.once.Do(func() { g.finishOnce(c, reply) })
}

func (g *Guard) finishOnce(c *call, reply *Reply) {
	s := c.s
	ev := rollout.GuardCall{Event: "call", Session: s.ID, Time: g.stamp(), Format: c.codec.Name(), Model: c.req.Model,
		Stream: c.req.Stream, Status: c.status, LatencyMS: ms(time.Since(c.start)), Tools: c.req.Tools, Side: c.side,
		Input: []rollout.Message{}, Output: []rollout.Message{}}
	if reply != nil {
		ev.Usage, ev.Output, ev.Complete = reply.Usage, reply.Items, reply.Complete
	}
	g.metrics.call(ev.Format, ev.Status, ev.Usage)
	answered := reply != nil && (reply.Usage != nil || len(reply.Items) > 0 && reply.Items[0].Content != "")
	if !answered || c.side {
		if !c.side {
			g.sessions.failed(s, len(c.req.Items), c.hashes[len(c.req.Items)])
		}
		s.mu.Lock()
		ev.Call = s.calls
		ev.USD, _ = g.price(s, c.req.Model, ev.Usage)
		s.report()
		s.mu.Unlock()
		g.record(s, ev)
		return
	}
	beforeTurn(s)
	t := g.turn(c, reply, &ev)
	g.record(s, t.events...)
	// Only now may a request that echoes the reply find the session:
	// one found by another run's identical reply before this turn is
	// counted and recorded would be counted and recorded before it.
	g.sessions.answered(s, len(c.req.Items), c.hashes[len(c.req.Items)], reply.IDs)
	if t.prompt != nil {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			g.estimate(s, t.k, t.prompt, t.spent, t.usd, t.done)
		}()
	}
}

// beforeTurn is called as an answered call's turn is about to be
// counted (a test holds it there).
var beforeTurn = func(*Session) {}

// turnResult is what an answered call left to do once the session is
// unlocked: events to record and, when an estimate is due, its prompt.
type turnResult struct {
	k      int
	spent  int64
	usd    float64
	events []any
	prompt []rollout.Message
	done   chan struct{}
}

// turn counts an answered call as the session's next turn: its usage,
// the tokens spent (by the accounting step), the budget cap, and whether
// an estimate is due.
func (g *Guard) turn(c *call, reply *Reply, ev *rollout.GuardCall) turnResult {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns++
	r := turnResult{k: s.turns}
	ev.Call, ev.Turn = s.calls, r.k
	s.usage = append(s.usage, reply.Usage)
	history := c.req.Items
	if c.req.Previous != "" {
		history = append(slices.Clone(s.chain), history...)
	}
	traj, system, tail := transcript(s.ID, history, reply.Items, s.usage)
	if c.req.Chainable {
		s.keepChain(append(slices.Clone(history), reply.Items...), g.cfg.MaxChainBytes)
	}
	replay, aerr := account(traj, g.cfg.Counter, g.task.System)
	s.spent = spentOf(replay, aerr, reply.Usage, s.spent)
	r.spent = s.spent
	ev.USD, _ = g.price(s, c.req.Model, reply.Usage)
	r.usd = s.pol.usd
	s.report()
	if r.k == 1 {
		ev.System = system
	}
	if tail != nil {
		ev.Input = tail
	}
	r.events = append([]any{*ev}, g.crossed(s, r.k)...)
	spent, usd := s.family()
	if why := g.pastBudget(spent, usd); g.cfg.Policy == Stop && why != "" && s.stop == nil {
		s.stop = g.decideStop(s, r.k, why, spent)
		r.events = append(r.events, *s.stop)
		g.logf("session %s: stop decided after turn %d: %s spent, past the budget", s.ID, r.k, g.spentText(spent, usd))
	}
	if !g.due(s, r.k) {
		return r
	}
	if aerr != nil {
		e := g.unestimated(s, r.k, accountingReason(aerr), fmt.Errorf("accounting the usage: %w", aerr))
		r.events = append(r.events, e)
		return r
	}
	r.done = make(chan struct{})
	s.pending = r.done
	r.prompt = probePrompt(g.task, replay, g.budget)
	return r
}

// keepChain keeps a Responses chain's history, oldest items dropped past
// limit bytes.
func (s *Session) keepChain(items []rollout.Message, limit int) {
	n := 0
	for _, it := range items {
		n += len(it.Content) + len(it.Role)
	}
	for len(items) > 0 && n > limit {
		n -= len(items[0].Content) + len(items[0].Role)
		items = items[1:]
	}
	s.chain = items
}

// answerStop answers a stopped session's request the way its client
// ends a run on.
func (g *Guard) answerStop(w http.ResponseWriter, r *http.Request, c *call, why *stopReason) {
	text := g.stopText(why)
	mode := g.cfg.StopAs.resolve(r.Header)
	ev := rollout.GuardCall{Event: "call", Session: c.s.ID, Time: g.stamp(), Format: c.codec.Name(), Model: c.req.Model,
		Stream: c.req.Stream, Answered: mode.String(), Input: []rollout.Message{}, Output: []rollout.Message{}}
	if mode == ContextLimit {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(c.codec.ContextError(text))
		ev.Status = http.StatusBadRequest
	} else {
		ctype, body := c.codec.Answer(c.req, text)
		w.Header().Set("Content-Type", ctype)
		if ctype == "text/event-stream" {
			w.Header().Set("Cache-Control", "no-cache")
		}
		w.WriteHeader(http.StatusOK)
		w.Write(body)
		ev.Status = http.StatusOK
		ev.Output = []rollout.Message{{Role: "assistant", Content: text}}
	}
	c.s.mu.Lock()
	ev.Call = c.s.calls
	c.s.mu.Unlock()
	g.metrics.call(ev.Format, ev.Status, nil)
	g.record(c.s, ev)
}
