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

	"github.com/prometheus/client_golang/prometheus"

	"bagen-data/internal/httpd"
	"bagen-data/reward"
)

// Config configures a reward server. The zero value serves reward.Train
// with the defaults named on each field.
type Config struct {
	// Rule weights the reward; the zero Rule means reward.Train.
	Rule reward.Rule
	// Limits bounds requests and the drain; each zero field means the
	// default httpd.Limits names, and MaxBody's is DefaultMaxBody.
	httpd.Limits
	// Log receives one access-log record per request; nil logs nothing.
	Log *slog.Logger
	// Registry receives the metrics and is served on /metrics; nil means
	// a new registry with the Go runtime and process collectors.
	Registry *prometheus.Registry
}

// DefaultMaxBody is Config.MaxBody's default and `reward serve`'s
// --max-body: room for a large batch.
const DefaultMaxBody = 64 << 20

// Validate reports every bad field of c, as New and Serve would.
func (c Config) Validate() error {
	_, err := c.withDefaults()
	return err
}

// withDefaults validates c, reporting every bad field, and fills zeros.
func (c Config) withDefaults() (Config, error) {
	bad := c.Limits.Problems()
	if c.Rule.Possible < 0 || c.Rule.Impossible < 0 {
		bad = append(bad, fmt.Sprintf("Rule: weights %v and %v must be non-negative", c.Rule.Possible, c.Rule.Impossible))
	}
	if err := httpd.ConfigError(bad); err != nil {
		return c, err
	}
	if c.Rule == (reward.Rule{}) {
		c.Rule = reward.Train
	}
	c.Limits = c.Limits.WithDefaults(DefaultMaxBody)
	if c.Registry == nil {
		c.Registry = httpd.NewRegistry()
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
	hs := cfg.Limits.Server(h)
	hs.Draining, hs.Reject = &h.draining, h.reject
	return hs.Serve(ctx, ln)
}
