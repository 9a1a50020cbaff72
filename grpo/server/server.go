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
	// Limits bounds requests and the drain; each zero field means the
	// default httpd.Limits names, and MaxBody's is DefaultMaxBody.
	httpd.Limits
	// Log receives one access-log record per request; nil logs nothing.
	Log *slog.Logger
	// Registry receives the metrics and is served on /metrics; nil means
	// a new registry with the Go runtime and process collectors.
	Registry *prometheus.Registry
}

// DefaultMaxBody is Config.MaxBody's default and the commands'
// --max-body: room for a long agent history, which the model truncates
// to its context anyway.
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
	if err := httpd.ConfigError(append(bad, c.Limits.Problems()...)); err != nil {
		return c, err
	}
	c.Limits = c.Limits.WithDefaults(DefaultMaxBody)
	if c.Registry == nil {
		c.Registry = httpd.NewRegistry()
	}
	return c, nil
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
	hs := cfg.Limits.Server(h)
	hs.Draining, hs.Reject = &h.draining, h.reject
	return hs.Serve(ctx, ln)
}
