// Package server serves a trained GRPO head as an OpenAI-compatible budget
// estimator: POST /v1/chat/completions (streaming and not) answers a
// rendered budget probe with the answer text grpo eval writes for it,
// GET /v1/models lists the one model, and GET /healthz, GET /metrics and
// the drain on shutdown are those of every bagen-data server
// (internal/httpd).
//
// Each request is decoded (openai.go), answered by the Config's Estimator
// — a grpo.Estimator (the probe's numbers parsed from its text by
// probes.ParseProbe, the prompt embedded with the checkpoint's Ollama model
// through the embedding cache, the head run), or `bagen-data baseline
// serve`'s model — and encoded as a Chat Completions response or stream. Bad
// input gets a 4xx with an OpenAI-shaped error naming the field; Ollama
// unreachable gets a 503 with the reason, which clients retry.
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

	"bagen-data/grpo"
	"bagen-data/internal/httpd"
	"bagen-data/probes"
)

// Estimator answers one chat; *grpo.Estimator is one, and any other
// estimator (bagen-data baseline's) served the same way is another.
type Estimator interface {
	Answer(ctx context.Context, q grpo.Query) (grpo.Estimate, error)
	// Accounting is the token accounting of the estimator's training
	// data, listed under /v1/models; unknown when it records none.
	Accounting() probes.AccountingKind
}

// Config configures a server. Estimator and Name are required; every other
// zero field takes the default named beside it.
type Config struct {
	// Estimator answers the probes.
	Estimator Estimator
	// Name is the model name clients ask for and /v1/models lists.
	Name string
	// Created is /v1/models' "created" time (the checkpoint's); zero
	// means the Unix epoch.
	Created time.Time
	// MaxBody is the largest request body in bytes; 0 means 8 MiB.
	MaxBody int64
	// MaxHeaderBytes bounds the request line and header block; 0 means
	// 64 KiB.
	MaxHeaderBytes int
	// ReadHeaderTimeout bounds reading request headers; 0 means 10s.
	ReadHeaderTimeout time.Duration
	// ReadTimeout, WriteTimeout and IdleTimeout bound reading a request,
	// answering it and an idle keep-alive connection; 0 means 2m each.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// DrainGrace is how long Serve keeps serving after its context is
	// cancelled, with /healthz answering 503; 0 means none.
	DrainGrace time.Duration
	// DrainTimeout bounds the whole drain; 0 means 25s.
	DrainTimeout time.Duration
	// Log receives one access-log record per request; nil logs nothing.
	Log *slog.Logger
	// Registry receives the metrics and is served on /metrics; nil means
	// a new registry with the Go runtime and process collectors.
	Registry *prometheus.Registry
}

// DefaultMaxBody is Config.MaxBody's default: room for a long agent
// history, which the model truncates to its context anyway.
const DefaultMaxBody = 8 << 20

// withDefaults validates c, reporting every bad field, and fills zeros.
func (c Config) withDefaults() (Config, error) {
	var bad []string
	if c.Estimator == nil {
		bad = append(bad, "Estimator: none")
	}
	if strings.TrimSpace(c.Name) == "" {
		bad = append(bad, "Name: empty")
	}
	bad = append(bad, c.limits().Problems()...)
	if len(bad) > 0 {
		return c, fmt.Errorf("%w: %s", ErrConfig, strings.Join(bad, "; "))
	}
	c.setLimits(c.limits().WithDefaults(DefaultMaxBody))
	if c.Registry == nil {
		c.Registry = prometheus.NewRegistry()
		c.Registry.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	}
	return c, nil
}

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

// New returns the server's routes as an http.Handler, safe for concurrent
// use. Serve adds what only the connection layer can do: protocol errors
// in the JSON envelope and the drain.
func New(cfg Config) (http.Handler, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return newHandler(cfg)
}

// Serve serves on ln until ctx is cancelled, then drains (httpd.Server)
// and returns nil once every connection has closed.
func Serve(ctx context.Context, ln net.Listener, cfg Config) error {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return err
	}
	h, err := newHandler(cfg)
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
