// Package server serves the rule reward over HTTP to external trainers:
// OpenRLHF's remote reward protocol (POST /get_reward), slime's --rm-url
// protocol (POST /slime), a native batch API (POST /v1/rewards), plus
// GET /healthz and GET /metrics (Prometheus).
//
// The server is stateless: every handler decodes, scores with package
// reward and encodes. Bad input gets a 4xx with {"error": "…"} naming the
// field and index; it never takes the server down. Memory grows with the
// bytes a client has sent, never with what it declares (see
// httpd.ReadBody). When its context is cancelled, Serve drains without
// dropping a request it has read (httpd.Server).
package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"bagen-data/internal/httpd"
	"bagen-data/reward"
)

// Config configures a reward server. The zero value serves reward.Train
// with the defaults named on each field.
type Config struct {
	// Rule weights the reward; the zero Rule means reward.Train.
	Rule reward.Rule
	// MaxBody is the largest request body in bytes; 0 means 64 MiB.
	MaxBody int64
	// MaxHeaderBytes bounds the request line and header block; 0 means
	// 64 KiB. net/http reads up to 4 KiB more before answering 431.
	MaxHeaderBytes int
	// ReadHeaderTimeout bounds reading request headers; 0 means 10s.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request; 0 means 2m.
	ReadTimeout time.Duration
	// WriteTimeout bounds handling and writing a response; 0 means 2m.
	WriteTimeout time.Duration
	// IdleTimeout bounds an idle keep-alive connection; 0 means 2m.
	IdleTimeout time.Duration
	// DrainGrace is how long Serve keeps accepting and serving after its
	// context is cancelled, with /healthz answering 503 and every
	// response carrying Connection: close, so that a load balancer sees
	// the server unready and stops sending before the listener closes.
	// 0 means none: the listener closes at once (DefaultDrainGrace is the
	// command's default).
	DrainGrace time.Duration
	// DrainTimeout bounds the whole drain, grace included, from the
	// context's cancellation to Serve's return; 0 means 25s, under
	// Kubernetes' default 30s termination grace period.
	DrainTimeout time.Duration
	// Log receives one access-log record per request; nil logs nothing.
	Log *slog.Logger
	// Registry receives the metrics and is served on /metrics; nil means
	// a new registry with the Go runtime and process collectors.
	Registry *prometheus.Registry
}

// Defaults for zero Config fields, and the command's drain grace.
const (
	DefaultMaxBody           = 64 << 20
	DefaultMaxHeaderBytes    = httpd.DefaultMaxHeaderBytes
	DefaultReadHeaderTimeout = httpd.DefaultReadHeaderTimeout
	DefaultTimeout           = httpd.DefaultTimeout
	DefaultDrainTimeout      = httpd.DefaultDrainTimeout
	// DefaultDrainGrace is `reward serve`'s --drain-grace: long enough for
	// a load balancer polling /healthz every second or two to notice.
	DefaultDrainGrace = httpd.DefaultDrainGrace
)

// limits returns c's request limits and timeouts.
func (c Config) limits() httpd.Limits {
	return httpd.Limits{MaxBody: c.MaxBody, MaxHeaderBytes: c.MaxHeaderBytes,
		ReadHeaderTimeout: c.ReadHeaderTimeout, ReadTimeout: c.ReadTimeout, WriteTimeout: c.WriteTimeout,
		IdleTimeout: c.IdleTimeout, DrainGrace: c.DrainGrace, DrainTimeout: c.DrainTimeout}
}

// setLimits sets c's request limits and timeouts to l's.
func (c *Config) setLimits(l httpd.Limits) {
	c.MaxBody, c.MaxHeaderBytes = l.MaxBody, l.MaxHeaderBytes
	c.ReadHeaderTimeout, c.ReadTimeout, c.WriteTimeout, c.IdleTimeout = l.ReadHeaderTimeout, l.ReadTimeout, l.WriteTimeout, l.IdleTimeout
	c.DrainGrace, c.DrainTimeout = l.DrainGrace, l.DrainTimeout
}

// Validate reports every bad field of c, as New and Serve would.
func (c Config) Validate() error {
	_, err := c.withDefaults()
	return err
}

// withDefaults validates c, reporting every bad field, and fills zeros.
func (c Config) withDefaults() (Config, error) {
	bad := c.limits().Problems()
	if c.Rule.Possible < 0 || c.Rule.Impossible < 0 {
		bad = append(bad, fmt.Sprintf("Rule: weights %v and %v must be non-negative", c.Rule.Possible, c.Rule.Impossible))
	}
	if len(bad) > 0 {
		return c, fmt.Errorf("%w: %s", ErrConfig, strings.Join(bad, "; "))
	}
	if c.Rule == (reward.Rule{}) {
		c.Rule = reward.Train
	}
	c.setLimits(c.limits().WithDefaults(DefaultMaxBody))
	if c.Registry == nil {
		c.Registry = prometheus.NewRegistry()
		c.Registry.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	}
	return c, nil
}

// New returns the server's routes as an http.Handler, safe for concurrent
// use. Serve adds what only the connection layer can do: protocol errors
// in the JSON envelope and the drain.
func New(cfg Config) (http.Handler, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return newHandler(cfg, routes)
}

// Serve serves on ln until ctx is cancelled, then drains (httpd.Server) and
// returns nil once every connection has closed, or an error wrapping
// ErrDrainTimeout if some were still busy after DrainTimeout. Request
// contexts are not derived from ctx, so cancelling it does not abort
// requests being handled.
func Serve(ctx context.Context, ln net.Listener, cfg Config) error {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return err
	}
	h, err := newHandler(cfg, routes)
	if err != nil {
		return err
	}
	hs := &httpd.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    cfg.MaxHeaderBytes,
		DrainGrace:        cfg.DrainGrace,
		DrainTimeout:      cfg.DrainTimeout,
		Draining:          &h.draining,
		Reject:            h.reject,
	}
	return hs.Serve(ctx, ln)
}
