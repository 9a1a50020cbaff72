// Package guard is a live budget guard: a transparent proxy between an
// agent and its model that records every call's usage, asks a budget
// estimator after each turn and, by policy, logs, warns or stops the run
// — the paper's early stop (its early-stop tables: stopping at the first
// impossible estimate saves 28–64% of the tokens spent on failed runs),
// running instead of replayed.
//
// It has the shape of net/http/httputil.ReverseProxy: one transport, one
// place that rewrites the outgoing request (Codec.Outgoing), one that
// observes the answer (Codec.Reply, Codec.Stream), streams flushed event
// by event. Each wire format is a Codec (chat.go, responses.go,
// anthropic.go); sessions, usage, estimates, policy and the ledger are a
// file each and know no wire format. The probe is rendered by package
// probes from the accounting step it shares with the readers, the
// estimator asked through eval/prediction's retrying client and its
// answer parsed by package reward.
//
// Bytes the guard does not need to understand go through untouched, and
// a side service that fails (estimator, ledger disk) never fails the
// agent's call: estimates fail open.
package guard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/semaphore"

	"bagen-data/probes"
	"bagen-data/rollout"
)

// Config configures a Guard. The zero value of each optional field is the
// documented default.
type Config struct {
	// Upstream is the model server's root URL; request paths are appended
	// as received (http://host:8000, https://api.anthropic.com). Required.
	Upstream string
	// Estimator answers the budget probes; nil means no estimates (the
	// guard then only records usage, and stops on the budget alone).
	Estimator Estimator
	// Task renders the probes; the zero Task means probes.Tasks["swebench"].
	Task probes.Task
	// Budget is the session token budget; 0 means the task's default, and
	// a task without one (swebench) then has no budget: no probes, no cap.
	Budget int64
	// Every asks for an estimate after every Every-th turn; 0 means 1.
	Every int
	// EstimateFrom is the first turn after which an estimate is asked
	// (turns k ≥ EstimateFrom with k a multiple of Every); 0 means 1.
	EstimateFrom int
	// Counter counts what the upstream did not report (a call without
	// usage, the visible part of an output with hidden reasoning), as
	// `bagen-data probes --tokenizer` does, so that a live probe is the
	// offline probe. It must be safe for concurrent use (sessions are
	// accounted in parallel). nil means none: a turn whose accounting
	// needs a count is then unestimated, and says so.
	Counter probes.Counter
	Policy  Policy
	StopAs  StopAs
	// WarnAt are the shares of the budget, in percent, at which a session
	// is warned once each (a ledger event; a note in its next request
	// under policy warn, and under policy stop below 100); nil means
	// DefaultWarnAt, an empty non-nil slice none.
	WarnAt []float64
	// Prices price each call by its model (dollars in the ledger, the
	// forecast and BudgetUSD); nil means no dollars.
	Prices *Prices
	// BudgetUSD is the session dollar budget, beside Budget (both given:
	// whichever is crossed first); 0 means none. It needs Prices.
	BudgetUSD float64
	// ForecastStart: the Estimator answers a probe before the first turn
	// (the zero-token baseline does), so a session's forecast is asked
	// for when it starts.
	ForecastStart bool
	// Loop stops (warns, under policy warn; records, under log) a session
	// that makes the same tool call, or receives the same tool result,
	// Loop times in a row; 0 means off.
	Loop int
	// Wait holds a session's next request until the estimate of its
	// previous turn is in, at most EstimateTimeout.
	Wait bool
	// EstimateTimeout bounds one estimate, retries included; 0 means 30 s.
	EstimateTimeout time.Duration
	// Ledger is the ledger directory; "" means none.
	Ledger string
	// MaxBody bounds a request body; 0 means 32 MiB. MaxInFlight bounds
	// the request bytes held at once; 0 means 16 × MaxBody.
	MaxBody, MaxInFlight int64
	// RedactHeaders are headers never written anywhere, beyond the ones
	// the guard never writes (it records no header but User-Agent).
	RedactHeaders []string
	// MaxSessions bounds the sessions held (least recently used go
	// first); 0 means 100,000.
	MaxSessions int
	// MaxChainBytes bounds the history kept for a Responses session whose
	// responses are stored (a chain's next request may send only its new
	// turn); 0 means 1 MiB.
	MaxChainBytes int
	// Transport sends the upstream requests; nil means a clone of
	// http.DefaultTransport without compression (the guard reads the
	// answers).
	Transport http.RoundTripper
	// Logf reports stops and failures of side services (estimator,
	// ledger); nil means none. It is never given a header.
	Logf func(format string, args ...any)
	// Now is the clock of the ledger's timestamps; nil means time.Now.
	Now func() time.Time
}

func (c Config) estimateBudget() time.Duration {
	if c.EstimateTimeout <= 0 {
		return 30 * time.Second
	}
	return c.EstimateTimeout
}

// Validate reports every bad field at once.
func (c Config) Validate() error {
	var errs []error
	u, err := url.Parse(c.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("upstream %q: want http(s)://host[:port]", c.Upstream))
	}
	if c.Budget < 0 {
		errs = append(errs, fmt.Errorf("budget: want ≥ 0, got %d", c.Budget))
	}
	if c.Every < 0 {
		errs = append(errs, fmt.Errorf("every: want ≥ 0, got %d", c.Every))
	}
	if c.EstimateFrom < 0 {
		errs = append(errs, fmt.Errorf("estimate from: want ≥ 0, got %d", c.EstimateFrom))
	}
	if c.MaxBody < 0 || c.MaxInFlight < 0 {
		errs = append(errs, errors.New("max body: want ≥ 0"))
	}
	if c.MaxInFlight > 0 && c.MaxInFlight < c.MaxBody {
		errs = append(errs, fmt.Errorf("max in flight: %d is below the body limit %d", c.MaxInFlight, c.MaxBody))
	}
	errs = append(errs, c.validatePolicy()...)
	if c.Policy > Stop || c.StopAs > ContextLimit {
		errs = append(errs, errors.New("policy: unknown"))
	}
	return errors.Join(errs...)
}

// Guard is the proxy. It is an http.Handler, safe for concurrent use.
type Guard struct {
	cfg      Config
	upstream *url.URL
	proxy    *httputil.ReverseProxy
	sessions *sessions
	ledger   *ledger
	est      Estimator
	task     probes.Task
	budget   int64
	warnAt   []float64 // ascending
	metrics  *metrics
	inflight *semaphore.Weighted
	redact   map[string]bool
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup // estimates running
}

// New builds a Guard; its ledger directory is made (0700) when set.
func New(cfg Config) (*Guard, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g := &Guard{cfg: cfg, est: cfg.Estimator, task: cfg.Task, budget: cfg.Budget, redact: map[string]bool{}}
	g.upstream, _ = url.Parse(cfg.Upstream)
	if g.task.Name == "" {
		g.task = probes.Tasks["swebench"]
	}
	if g.budget == 0 {
		g.budget = g.task.Budget
	}
	if g.cfg.MaxBody == 0 {
		g.cfg.MaxBody = 32 << 20
	}
	if g.cfg.MaxInFlight == 0 {
		g.cfg.MaxInFlight = 16 * g.cfg.MaxBody
	}
	if g.cfg.MaxSessions == 0 {
		g.cfg.MaxSessions = 100_000
	}
	if g.cfg.MaxChainBytes == 0 {
		g.cfg.MaxChainBytes = 1 << 20
	}
	if g.cfg.Every == 0 {
		g.cfg.Every = 1
	}
	g.warnAt = warnShares(cfg.WarnAt)
	if g.cfg.EstimateFrom == 0 {
		g.cfg.EstimateFrom = 1
	}
	if g.cfg.Now == nil {
		g.cfg.Now = time.Now
	}
	for _, h := range cfg.RedactHeaders {
		g.redact[http.CanonicalHeaderKey(h)] = true
	}
	if cfg.Ledger != "" {
		var err error
		if g.ledger, err = openLedger(cfg.Ledger); err != nil {
			return nil, err
		}
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	g.sessions = newSessions(g.cfg.MaxSessions)
	if g.ledger != nil {
		g.sessions.onEvict = func(s *Session) { g.ledger.forget(s.ID) }
	}
	g.metrics = newMetrics(func() float64 { return float64(g.sessions.count()) })
	g.inflight = semaphore.NewWeighted(g.cfg.MaxInFlight)
	tr := cfg.Transport
	if tr == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DisableCompression = true
		t.MaxIdleConnsPerHost = 256
		tr = t
	}
	g.proxy = &httputil.ReverseProxy{
		Rewrite:   g.rewrite,
		Transport: tr,
		// Zero: ReverseProxy flushes every write of a stream (an event
		// stream, or an answer without a length) and buffers the rest.
		FlushInterval:  0,
		ModifyResponse: g.observe,
		ErrorHandler:   g.upstreamError,
	}
	return g, nil
}

// Close waits for the estimates still running (each is bounded by
// EstimateTimeout), so that the ledger has them, then releases the guard.
func (g *Guard) Close() {
	g.wg.Wait()
	g.cancel()
}

// ServeHTTP routes a request: the three model APIs are observed, /healthz,
// /metrics and the live page (GET / and GET /sessions.json) are the
// guard's own, everything else (GET /v1/models included) goes upstream
// untouched.
func (g *Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isPage(r) {
		g.servePage(w, r)
		return
	}
	switch r.URL.Path {
	case "/healthz":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
		return
	case "/metrics":
		promhttp.HandlerFor(g.metrics.reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
		return
	}
	codec := codecFor(r)
	if codec == nil {
		g.proxy.ServeHTTP(w, r)
		return
	}
	g.serveModel(w, r, codec)
}

// codecFor is the codec of a POST to one of the model APIs.
func codecFor(r *http.Request) Codec {
	if r.Method != http.MethodPost {
		return nil
	}
	p := strings.TrimSuffix(r.URL.Path, "/")
	for suffix, c := range Codecs {
		if strings.HasSuffix(p, suffix) {
			return c
		}
	}
	return nil
}

// call is one model request in flight.
type call struct {
	s      *Session
	codec  Codec
	req    *Request
	hashes []uint64
	start  time.Time
	status int
	// side: a call outside the run's thread (see sessions.resolve).
	side bool
	once sync.Once
}

type callKey struct{}

func (g *Guard) serveModel(w http.ResponseWriter, r *http.Request, codec Codec) {
	body, release, err := g.readBody(r)
	if err != nil {
		status := http.StatusBadRequest
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			status = http.StatusRequestEntityTooLarge
		}
		writeError(w, status, err)
		return
	}
	defer release()
	req, err := codec.Request(body)
	if err != nil {
		// Not the guard's to judge: the upstream answers it.
		g.forward(w, r, body, nil)
		return
	}
	c := &call{codec: codec, req: req, hashes: prefixHashes(req.Items), start: time.Now()}
	g.catchUp(r.Context(), r.Header, req)
	var how string
	var firstTools bool
	c.s, how, c.side, firstTools = g.sessions.resolve(r.Header, req, c.hashes)
	g.begin(c, r, how, firstTools)
	if g.cfg.Wait {
		g.awaitEstimate(r.Context(), c.s)
	}
	if events := append(g.loopGate(c), g.familyGate(c)...); events != nil {
		g.record(c.s, events...)
	}
	d := g.decide(c.s)
	w.Header().Set("X-Bagen-Guard", d.header)
	if d.stop != nil {
		g.refused(c.s)
		g.answerStop(w, r, c, d.stop)
		return
	}
	out, err := codec.Outgoing(body, req, d.note)
	if err != nil {
		out = body
	}
	g.forward(w, r, out, c)
}

// readBody reads a request body of at most MaxBody bytes, holding its
// size of the in-flight budget until release.
func (g *Guard) readBody(r *http.Request) ([]byte, func(), error) {
	n := r.ContentLength
	if n < 0 || n > g.cfg.MaxBody {
		n = g.cfg.MaxBody
	}
	if err := g.inflight.Acquire(r.Context(), max(n, 1)); err != nil {
		return nil, nil, err
	}
	release := func() { g.inflight.Release(max(n, 1)) }
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, g.cfg.MaxBody))
	if err != nil {
		release()
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return nil, nil, fmt.Errorf("bagen-data guard: request body over the %d-byte limit (--max-body): %w", g.cfg.MaxBody, err)
		}
		return nil, nil, fmt.Errorf("bagen-data guard: reading the request body: %w", err)
	}
	return body, release, nil
}

// forward sends body upstream through the proxy; c, when set, observes
// the answer.
func (g *Guard) forward(w http.ResponseWriter, r *http.Request, body []byte, c *call) {
	ctx := r.Context()
	if c != nil {
		ctx = context.WithValue(ctx, callKey{}, c)
	}
	out := r.Clone(ctx)
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	out.Header.Del("Content-Length")
	g.proxy.ServeHTTP(w, out)
}

// rewrite points the request at the upstream and drops Accept-Encoding
// (the guard reads the answers); every other header goes as it came.
func (g *Guard) rewrite(pr *httputil.ProxyRequest) {
	pr.SetURL(g.upstream)
	pr.Out.Header.Del("Accept-Encoding")
	if pr.In.Header.Get("User-Agent") == "" {
		pr.Out.Header["User-Agent"] = nil
	}
}

// observe wraps the body of an answer to a model call, so that the call
// is recorded once the agent has it.
func (g *Guard) observe(resp *http.Response) error {
	c, _ := resp.Request.Context().Value(callKey{}).(*call)
	if c == nil {
		return nil
	}
	c.status = resp.StatusCode
	if resp.StatusCode != http.StatusOK {
		resp.Body = &onClose{ReadCloser: resp.Body, f: func() { g.finish(c, nil) }}
		return nil
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		st := c.codec.Stream(c.req)
		end := func(*sseReader) {
			r := st.Reply()
			g.finish(c, &r)
		}
		resp.Body = &sseReader{src: resp.Body, closer: resp.Body, obs: st, onDone: end, onClose: end}
		return nil
	}
	resp.Body = &wholeBody{src: resp.Body, limit: 64 << 20, f: func(body []byte) {
		r := c.codec.Reply(body)
		g.finish(c, &r)
	}}
	return nil
}

// wholeBody relays a non-streaming answer once it has been read whole
// and recorded (f), so that the agent never holds an answer the ledger
// lacks. An answer past limit bytes is relayed as it comes, unread.
type wholeBody struct {
	src   io.ReadCloser
	limit int
	out   []byte
	err   error
	read  bool
	f     func([]byte)
	once  sync.Once
}

func (b *wholeBody) Read(p []byte) (int, error) {
	if !b.read {
		b.read = true
		data, err := io.ReadAll(io.LimitReader(b.src, int64(b.limit)+1))
		b.out, b.err = data, err
		if err == nil && len(data) <= b.limit {
			b.once.Do(func() { b.f(data) })
		}
		if err == nil && len(data) > b.limit {
			b.once.Do(func() { b.f(nil) })
			b.out = data
		}
	}
	if len(b.out) > 0 {
		n := copy(p, b.out)
		b.out = b.out[n:]
		return n, nil
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.src.Read(p)
}

func (b *wholeBody) Close() error {
	err := b.src.Close()
	b.once.Do(func() { b.f(nil) })
	return err
}

// upstreamError answers a call the upstream did not answer.
func (g *Guard) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusBadGateway
	if errors.Is(err, context.Canceled) {
		status = 499 // the agent went away; nobody reads this
	}
	if c, _ := r.Context().Value(callKey{}).(*call); c != nil {
		c.status = status
		g.finish(c, nil)
	}
	writeError(w, status, fmt.Errorf("bagen-data guard: upstream %s: %w", g.upstream.Host, err))
}

// writeError answers {"error": "…"}.
func writeError(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(mustJSON(map[string]string{"error": err.Error()}))
}

// onClose runs f once when the body is closed.
type onClose struct {
	io.ReadCloser
	f    func()
	done bool
}

func (o *onClose) Close() error {
	err := o.ReadCloser.Close()
	if !o.done {
		o.done = true
		o.f()
	}
	return err
}

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
	if (first || firstTools) && !c.side {
		// The run starts here: a side call before it is not its task.
		g.startForecast(s, c.req.Items)
	}
	if !first {
		return
	}
	g.metrics.sessions.Inc()
	client := r.Header.Get("User-Agent")
	if g.redact["User-Agent"] {
		client = ""
	}
	g.record(s, rollout.GuardSession{Version: rollout.GuardVersion, Event: "session", Session: s.ID, Time: g.stamp(),
		Policy: g.cfg.Policy.String(), Budget: g.budget, Task: g.task.Name, Format: c.codec.Name(), Client: client, Key: how,
		BudgetUSD: g.cfg.BudgetUSD, Parent: s.Parent})
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
	g.sessions.answered(s, len(c.req.Items), c.hashes[len(c.req.Items)], reply.IDs)
	t := g.turn(c, reply, &ev)
	g.record(s, t.events...)
	if t.prompt != nil {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			g.estimate(s, t.k, t.prompt, t.spent, t.usd, t.done)
		}()
	}
}

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

// record shows events on the live page and appends them to the
// session's ledger file; a failure is counted and logged, never passed to
// the agent.
//
// A session's file starts with its first answered turn: the events
// before it (the session event, failed and side calls) wait in memory,
// at most maxHeld of them, so that every file in a ledger reads as a
// trajectory.
func (g *Guard) record(s *Session, events ...any) {
	s.mu.Lock()
	s.page.see(events)
	s.mu.Unlock()
	if g.ledger == nil {
		return
	}
	s.mu.Lock()
	if !s.written {
		turn := false
		for _, e := range events {
			if c, ok := e.(rollout.GuardCall); ok && c.Turn > 0 {
				turn = true
			}
		}
		if !turn {
			s.held = append(s.held, events...)
			if n := len(s.held); n > maxHeld {
				s.held = append(s.held[:1:1], s.held[n-maxHeld+1:]...) // keep the session event
			}
			s.mu.Unlock()
			return
		}
		events = append(s.held, events...)
		s.held, s.written = nil, true
	}
	s.mu.Unlock()
	if err := g.ledger.append(s.ID, events...); err != nil {
		g.metrics.ledgerErrors.Inc()
		g.logf("%v", err)
	}
}

// maxHeld bounds the events held for a session without a turn yet.
const maxHeld = 16

func (g *Guard) logf(format string, args ...any) {
	if g.cfg.Logf != nil {
		g.cfg.Logf(format, args...)
	}
}

func (g *Guard) stamp() string { return g.cfg.Now().UTC().Format(time.RFC3339Nano) }

// Serve serves the guard on l until ctx ends, then shuts down gracefully:
// new requests are refused, requests and streams in flight finish (at
// most grace), running estimates finish (at most EstimateTimeout).
func (g *Guard) Serve(ctx context.Context, l net.Listener, grace time.Duration) error {
	srv := &http.Server{Handler: g, ReadHeaderTimeout: 30 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		g.Close()
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.Shutdown(sctx)
	g.Close()
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: requests still in flight after %v", grace)
	}
	return err
}
