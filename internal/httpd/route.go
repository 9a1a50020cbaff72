package httpd

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// What every server does around its routes: the default registry, the
// request count and latency of each route, the method check and the
// access log. Each server keeps its routes, its wire format and the
// metrics of its own domain.

// NewRegistry returns a registry with the Go runtime and process
// collectors: a server's /metrics when its config gives no registry.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Register registers each collector with reg; an error (a name already
// registered) wraps ErrConfig.
func Register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("%w: register metrics: %w", ErrConfig, err)
		}
	}
	return nil
}

// RequestMetrics are the series every server exports for its routes:
// PREFIX_requests_total{route,code} and
// PREFIX_request_duration_seconds{route}. Safe for concurrent use.
type RequestMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// NewRequestMetrics returns the series named with prefix
// ("bagen_reward"), not yet registered (Collectors).
func NewRequestMetrics(prefix string) *RequestMetrics {
	return &RequestMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: prefix + "_requests_total", Help: "HTTP requests by route and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    prefix + "_request_duration_seconds",
			Help:    "Time from request start to response written, by route.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 18),
		}, []string{"route"}),
	}
}

// Collectors returns the collectors to register.
func (m *RequestMetrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.requests, m.latency}
}

// Bind returns route's series, created now so that every route is
// exported from the start and recording a request needs no lookup by
// name.
func (m *RequestMetrics) Bind(route string) *RouteMetrics {
	labels := prometheus.Labels{"route": route}
	return &RouteMetrics{requests: codeCounts{vec: m.requests.MustCurryWith(labels)}, latency: m.latency.With(labels)}
}

// RouteMetrics are one route's series. Safe for concurrent use.
type RouteMetrics struct {
	requests codeCounts
	latency  prometheus.Observer
}

// Observe records one request answered with code, took after it began.
func (r *RouteMetrics) Observe(code int, took time.Duration) {
	r.requests.inc(code)
	r.latency.Observe(took.Seconds())
}

// codeCounts is a route's requests_total series, by status code. The
// vector finds a series by hashing its labels; the codes the servers
// send keep theirs here once looked up, on their first request, so that
// /metrics lists a code only once it has been sent. Safe for concurrent
// use.
type codeCounts struct {
	vec    *prometheus.CounterVec // curried with the route
	byCode [len(sentCodes)]atomic.Pointer[prometheus.Counter]
}

// sentCodes are the status codes the servers answer with.
var sentCodes = [...]int{200, 400, 404, 405, 413, 500, 503}

// inc counts one request answered with code.
func (r *codeCounts) inc(code int) {
	i := codeIndex(code)
	if i < 0 {
		r.vec.WithLabelValues(strconv.Itoa(code)).Inc()
		return
	}
	c := r.byCode[i].Load()
	if c == nil {
		// Racing first requests look up the same series.
		c = new(prometheus.Counter)
		*c = r.vec.WithLabelValues(strconv.Itoa(code))
		r.byCode[i].Store(c)
	}
	(*c).Inc()
}

// codeIndex returns code's index in sentCodes, or -1.
func codeIndex(code int) int {
	for i, c := range sentCodes {
		if c == code {
			return i
		}
	}
	return -1
}

// CheckMethod returns nil if r's method is want (or HEAD, where want is
// GET), else an error wrapping ErrMethod; the caller answers 405 with
// Allow: want.
func CheckMethod(r *http.Request, want string) error {
	if r.Method == want || (want == http.MethodGet && r.Method == http.MethodHead) {
		return nil
	}
	return fmt.Errorf("%w: %s %s, want %s", ErrMethod, r.Method, r.URL.Path, want)
}

// LogRequest writes one access-log record to log, unless log is nil:
// method, path, status, then extra, the duration and the client's
// address.
func LogRequest(ctx context.Context, log *slog.Logger, method, path, remote string, code int, took time.Duration, extra ...slog.Attr) {
	if log == nil {
		return
	}
	attrs := make([]slog.Attr, 0, 5+len(extra))
	attrs = append(attrs, slog.String("method", method), slog.String("path", path), slog.Int("status", code))
	attrs = append(attrs, extra...)
	attrs = append(attrs, slog.Duration("duration", took), slog.String("remote", remote))
	log.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
}

// Server returns a Server for h with l's limits and timeouts; the caller
// sets Draining and Reject.
func (l Limits) Server(h http.Handler) *Server {
	return &Server{
		Handler:           h,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		DrainGrace:        l.DrainGrace,
		DrainTimeout:      l.DrainTimeout,
	}
}

// Names of the pseudo-routes every server counts requests under.
const (
	// OtherRoute counts requests to paths no route has (404).
	OtherRoute = "other"
	// ProtocolRoute counts requests net/http rejected before routing: a
	// malformed request line or header (see Server.Reject).
	ProtocolRoute = "protocol"
)

// Routes finds a server's endpoints by path; E is the server's endpoint
// type, a route with its metrics bound. It is built before serving and
// only read after: safe for concurrent use then.
type Routes[E any] struct {
	byPath map[string]*E
	names  map[string]bool
	// Other answers the paths no route has; Protocol counts the requests
	// net/http rejected.
	Other, Protocol *E
}

// NewRoutes returns a table with no routes and the pseudo-routes' two
// endpoints, which bind makes from their names.
func NewRoutes[E any](bind func(name string) *E) *Routes[E] {
	return &Routes[E]{byPath: map[string]*E{}, names: map[string]bool{OtherRoute: true, ProtocolRoute: true},
		Other: bind(OtherRoute), Protocol: bind(ProtocolRoute)}
}

// Add routes path to e, whose metrics are labelled name. It reports
// false, adding nothing, when name or path is empty or taken: a table
// that would route two ways or count two routes as one.
func (t *Routes[E]) Add(name, path string, e *E) bool {
	if name == "" || path == "" || t.names[name] || t.byPath[path] != nil {
		return false
	}
	t.names[name] = true
	t.byPath[path] = e
	return true
}

// Find returns path's endpoint, or Other.
func (t *Routes[E]) Find(path string) *E {
	if e := t.byPath[path]; e != nil {
		return e
	}
	return t.Other
}
