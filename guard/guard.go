package guard

import (
	"context"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/semaphore"

	"bagen-data/probes"
)

// Guard is the proxy. It is an http.Handler, safe for concurrent use.
type Guard struct {
	cfg      Config
	upstream *url.URL
	proxy    *httputil.ReverseProxy
	sessions *sessions
	memos    *memos
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
	// draining is set when Serve begins to drain: /healthz answers 503
	// and responses close their connections.
	draining *atomic.Bool
}

// New builds a Guard; its ledger directory is made (0700) when set.
func New(cfg Config) (*Guard, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	g := &Guard{cfg: cfg, est: cfg.Estimator, task: cfg.Task, budget: cfg.Budget, redact: map[string]bool{},
		warnAt: warnShares(cfg.WarnAt), draining: new(atomic.Bool)}
	g.upstream, _ = url.Parse(cfg.Upstream)
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
	g.sessions = newSessions(cfg.MaxSessions)
	g.memos = newMemos()
	g.metrics = newMetrics(func() float64 { return float64(g.sessions.count()) })
	if g.ledger != nil {
		g.sessions.onEvict = func(s *Session) { g.ledger.forget(s.ID) }
		g.ledger.syncs.failed = func(err error) {
			g.metrics.ledgerErrors.Inc()
			g.logf("%v", err)
		}
	}
	g.inflight = semaphore.NewWeighted(cfg.MaxInFlight)
	g.proxy = &httputil.ReverseProxy{
		Rewrite:   g.rewrite,
		Transport: transport(cfg.Transport),
		// Zero: ReverseProxy flushes every write of a stream (an event
		// stream, or an answer without a length) and buffers the rest.
		FlushInterval:  0,
		ModifyResponse: g.observe,
		ErrorHandler:   g.upstreamError,
		BufferPool:     copyBufs{},
	}
	return g, nil
}

// copyBufs keeps the 32 KiB buffers the proxy copies answers through,
// made for each answer otherwise.
type copyBufs struct{}

var copyBufPool = sync.Pool{New: func() any { return new([32 << 10]byte) }}

func (copyBufs) Get() []byte { return copyBufPool.Get().(*[32 << 10]byte)[:] }
func (copyBufs) Put(b []byte) {
	if len(b) == 32<<10 {
		copyBufPool.Put((*[32 << 10]byte)(b))
	}
}

// transport is tr, or when nil a clone of http.DefaultTransport without
// compression (the guard reads the answers) and with a connection pool
// for many sessions to one upstream.
func transport(tr http.RoundTripper) http.RoundTripper {
	if tr != nil {
		return tr
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true
	t.MaxIdleConnsPerHost = 256
	return t
}

// Close waits for the estimates still running (each is bounded by
// EstimateTimeout), so that the ledger has them, and for the ledger's
// files to be synced (at most DrainTimeout: a disk that does not answer
// does not hold the guard), then releases the guard.
func (g *Guard) Close() {
	g.wg.Wait()
	if g.ledger != nil && !g.ledger.syncs.waitFor(g.cfg.DrainTimeout) {
		g.logf("ledger: files appended to are not synced after %v; closing without them", g.cfg.DrainTimeout)
	}
	g.cancel()
}

func (g *Guard) logf(format string, args ...any) {
	if g.cfg.Logf != nil {
		g.cfg.Logf(format, args...)
	}
}
