package guard

import (
	"context"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"bagen-data/probes"
)

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

func (g *Guard) logf(format string, args ...any) {
	if g.cfg.Logf != nil {
		g.cfg.Logf(format, args...)
	}
}
