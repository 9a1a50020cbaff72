// Package server serves the rule reward over HTTP to external trainers:
// OpenRLHF's remote reward protocol (POST /get_reward), slime's --rm-url
// protocol (POST /slime), a native batch API (POST /v1/rewards), plus
// GET /healthz and GET /metrics (Prometheus).
//
// The server is stateless: every handler decodes, scores with package
// reward and encodes. Bad input gets a 4xx with {"error": "…"} naming the
// field and index; it never takes the server down. Serve drains in-flight
// requests when its context is cancelled.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"bagen-data/reward"
)

// Config configures a reward server. The zero value serves reward.Train
// with the defaults named on each field.
type Config struct {
	// Rule weights the reward; the zero Rule means reward.Train.
	Rule reward.Rule
	// MaxBody is the largest request body in bytes; 0 means 64 MiB.
	MaxBody int64
	// ReadHeaderTimeout bounds reading request headers; 0 means 10s.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request; 0 means 2m.
	ReadTimeout time.Duration
	// WriteTimeout bounds handling and writing a response; 0 means 2m.
	WriteTimeout time.Duration
	// IdleTimeout bounds an idle keep-alive connection; 0 means 2m.
	IdleTimeout time.Duration
	// ShutdownTimeout bounds the drain after the context is cancelled;
	// 0 means 30s.
	ShutdownTimeout time.Duration
	// Log receives one access-log record per request; nil logs nothing.
	Log *slog.Logger
	// Registry receives the metrics and is served on /metrics; nil means
	// a new registry with the Go runtime and process collectors.
	Registry *prometheus.Registry
}

// Defaults for zero Config fields.
const (
	DefaultMaxBody           = 64 << 20
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultTimeout           = 2 * time.Minute
	DefaultShutdownTimeout   = 30 * time.Second
)

// withDefaults validates c, reporting every bad field, and fills zeros.
func (c Config) withDefaults() (Config, error) {
	var bad []string
	if c.MaxBody < 0 {
		bad = append(bad, fmt.Sprintf("MaxBody: %d is negative", c.MaxBody))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"ReadHeaderTimeout", c.ReadHeaderTimeout}, {"ReadTimeout", c.ReadTimeout},
		{"WriteTimeout", c.WriteTimeout}, {"IdleTimeout", c.IdleTimeout}, {"ShutdownTimeout", c.ShutdownTimeout},
	} {
		if d.v < 0 {
			bad = append(bad, fmt.Sprintf("%s: %v is negative", d.name, d.v))
		}
	}
	if c.Rule.Possible < 0 || c.Rule.Impossible < 0 {
		bad = append(bad, fmt.Sprintf("Rule: weights %v and %v must be non-negative", c.Rule.Possible, c.Rule.Impossible))
	}
	if len(bad) > 0 {
		return c, fmt.Errorf("%w: %s", ErrConfig, strings.Join(bad, "; "))
	}
	if c.Rule == (reward.Rule{}) {
		c.Rule = reward.Train
	}
	c.MaxBody = or(c.MaxBody, DefaultMaxBody)
	c.ReadHeaderTimeout = or(c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	c.ReadTimeout = or(c.ReadTimeout, DefaultTimeout)
	c.WriteTimeout = or(c.WriteTimeout, DefaultTimeout)
	c.IdleTimeout = or(c.IdleTimeout, DefaultTimeout)
	c.ShutdownTimeout = or(c.ShutdownTimeout, DefaultShutdownTimeout)
	if c.Registry == nil {
		c.Registry = prometheus.NewRegistry()
		c.Registry.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	}
	return c, nil
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// New returns the server's routes as an http.Handler, safe for concurrent
// use.
func New(cfg Config) (http.Handler, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return newHandler(cfg)
}

// Serve serves on ln until ctx is cancelled, then stops accepting, waits
// up to ShutdownTimeout for in-flight requests to finish and returns nil.
// Request contexts are not derived from ctx, so cancelling it does not
// abort requests being handled.
func Serve(ctx context.Context, ln net.Listener, cfg Config) error {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return err
	}
	h, err := newHandler(cfg)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
		return fmt.Errorf("drain %s: %w", ln.Addr(), err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	}
	return nil
}

// handler routes requests, records metrics and maps errors to statuses.
type handler struct {
	cfg     Config
	metrics *metrics
	prom    http.Handler
}

func newHandler(cfg Config) (*handler, error) {
	m, err := newMetrics(cfg.Registry)
	if err != nil {
		return nil, fmt.Errorf("%w: register metrics: %w", ErrConfig, err)
	}
	return &handler{cfg: cfg, metrics: m, prom: promhttp.HandlerFor(cfg.Registry, promhttp.HandlerOpts{})}, nil
}

// route is one endpoint: the method it accepts and how it answers.
type route struct {
	name, method string
	// serve answers the body in st.body: it fills st.out with JSON and
	// returns the number of items scored.
	serve func(h *handler, st *state) (int, error)
}

var routes = map[string]route{
	"/get_reward": {routeOpenRLHF, http.MethodPost, (*handler).openRLHF},
	"/slime":      {routeSlime, http.MethodPost, (*handler).slime},
	"/v1/rewards": {routeNative, http.MethodPost, (*handler).native},
	"/healthz":    {routeHealth, http.MethodGet, (*handler).health},
}

// ServeHTTP implements http.Handler.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if r.URL.Path == "/metrics" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		h.prom.ServeHTTP(w, r)
		h.finish(r, routeMetrics, http.StatusOK, 0, start)
		return
	}
	rt, ok := routes[r.URL.Path]
	st := getState()
	defer putState(st)
	var n int
	var err error
	switch {
	case !ok && r.URL.Path == "/metrics":
		rt, err = route{name: routeMetrics, method: http.MethodGet}, methodError(r, http.MethodGet)
	case !ok:
		rt.name, err = routeOther, fmt.Errorf("%w: no route %s", ErrNotFound, r.URL.Path)
	case r.Method != rt.method && !(rt.method == http.MethodGet && r.Method == http.MethodHead):
		err = methodError(r, rt.method)
	default:
		if err = st.readBody(w, r, h.cfg.MaxBody); err == nil {
			n, err = rt.serve(h, st)
		}
	}
	code := http.StatusOK
	if err != nil {
		code = status(err)
		if code == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", rt.method)
		}
		st.out = appendError(st.out[:0], err)
	}
	writeJSON(w, code, st.out)
	h.finish(r, rt.name, code, n, start)
}

func methodError(r *http.Request, allow string) error {
	return fmt.Errorf("%w: %s %s, want %s", ErrMethod, r.Method, r.URL.Path, allow)
}

var jsonType = []string{"application/json"}

// smallBody is net/http's buffer before chunking: a response this small,
// written once, gets its Content-Length from net/http without allocating.
const smallBody = 2048

func writeJSON(w http.ResponseWriter, code int, body []byte) {
	hdr := w.Header()
	hdr["Content-Type"] = jsonType
	if len(body) > smallBody {
		hdr["Content-Length"] = []string{itoa(len(body))}
	}
	w.WriteHeader(code)
	w.Write(body)
}

// finish records metrics and the access log for one request.
func (h *handler) finish(r *http.Request, name string, code, items int, start time.Time) {
	took := time.Since(start)
	h.metrics.observe(name, code, items, took)
	if h.cfg.Log != nil {
		h.cfg.Log.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", code), slog.Int("items", items),
			slog.Duration("duration", took), slog.String("remote", r.RemoteAddr))
	}
}

func (h *handler) health(st *state) (int, error) {
	st.out = append(st.out[:0], `{"status":"ok"}`...)
	return 0, nil
}
