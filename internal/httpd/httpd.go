// Package httpd is what bagen-data's HTTP servers (reward serve, grpo
// serve) share below their routes: serving a listener with the drain that
// answers every request read before it stops (drain.go), the JSON answer
// to requests net/http rejects before any handler runs (conn.go), the
// limits every server's Config embeds (limits.go), the body limit, the
// /healthz and /metrics pages, and around the routes the route table,
// the method check, the per-route request metrics, the default registry
// and the access log (route.go). Each server keeps its own routes, wire
// format, error body and domain metrics.
package httpd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// Sentinels shared by the servers; each maps them to its status codes.
var (
	// ErrBadRequest is wrapped by errors about a request that cannot be
	// read: a malformed request line or header, a body cut short.
	ErrBadRequest = errors.New("bad request")
	// ErrTooLarge: the body exceeds the server's limit.
	ErrTooLarge = errors.New("request body too large")
	// ErrDraining: /healthz while the server drains (503).
	ErrDraining = errors.New("draining")
	// ErrDrainTimeout is wrapped by Serve's error when connections were
	// still busy at the end of Server.DrainTimeout and were closed.
	ErrDrainTimeout = errors.New("drain timeout")
	// ErrMethod: the route exists but not for this method (405).
	ErrMethod = errors.New("method not allowed")
	// ErrNotFound: no route has this path (404).
	ErrNotFound = errors.New("not found")
	// ErrConfig is wrapped by a server's Config validation errors.
	ErrConfig = errors.New("invalid server config")
)

// ProtocolError is a request net/http rejected before routing; Code is
// the status net/http chose and Text says why.
type ProtocolError struct {
	Code int
	Text string
}

func (e *ProtocolError) Error() string { return e.Text }

// Defaults the servers' configs share.
const (
	DefaultMaxHeaderBytes    = 64 << 10
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultTimeout           = 2 * time.Minute // reading a request, writing a response, an idle connection
	// DefaultDrainTimeout is Server.DrainTimeout's default: under
	// Kubernetes' default 30s termination grace period.
	DefaultDrainTimeout = 25 * time.Second
	// DefaultDrainGrace is the commands' --drain-grace: long enough for a
	// load balancer polling /healthz every second or two to notice.
	DefaultDrainGrace = 5 * time.Second
)

// Server serves one handler on a listener and drains it when its context
// is cancelled (see drain.go). Its fields are set before Serve and not
// changed after.
type Server struct {
	Handler http.Handler // required
	// The http.Server limits; zero means net/http's default (none).
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxHeaderBytes bounds the request line and header block; 0 means
	// net/http's 1 MiB.
	MaxHeaderBytes int
	// DrainGrace is how long Serve keeps accepting and serving after its
	// context is cancelled, with Draining set, so that a load balancer
	// polling /healthz sees the server unready before the listener
	// closes; 0 means none.
	DrainGrace time.Duration
	// DrainTimeout bounds the whole drain, grace included; 0 means
	// DefaultDrainTimeout.
	DrainTimeout time.Duration
	// Draining is set when the drain begins: the handler answers /healthz
	// with 503 (Health) and adds Connection: close (Header). nil means a
	// flag of the server's own.
	Draining *atomic.Bool
	// Reject gives the JSON body answering a request net/http rejected
	// before routing (the status is e.Code) and is the place to count
	// it; remote is the client's address. nil means {"error": e.Text}.
	Reject func(e *ProtocolError, remote string) []byte

	// readArm is the shortest positive read timeout: how far ahead a
	// connection's read deadline is armed (see deadline).
	readArm time.Duration
}

func (s *Server) drainTimeout() time.Duration {
	if s.DrainTimeout <= 0 {
		return DefaultDrainTimeout
	}
	return s.DrainTimeout
}

func (s *Server) reject(e *ProtocolError, remote string) []byte {
	if s.Reject == nil {
		return AppendError(nil, e.Text)
	}
	return s.Reject(e, remote)
}

// Serve serves on ln until ctx is cancelled, then drains and returns nil
// once every connection has closed, or an error wrapping ErrDrainTimeout
// if some were still busy after DrainTimeout. Request contexts are not
// derived from ctx, so cancelling it does not abort requests being
// handled.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.Draining == nil {
		s.Draining = new(atomic.Bool)
	}
	for _, d := range []time.Duration{s.ReadHeaderTimeout, s.ReadTimeout, s.IdleTimeout} {
		if d > 0 && (s.readArm == 0 || d < s.readArm) {
			s.readArm = d
		}
	}
	tl := newListener(ln, s)
	srv := &http.Server{
		Handler:           s.Handler,
		ReadHeaderTimeout: s.ReadHeaderTimeout,
		ReadTimeout:       s.ReadTimeout,
		WriteTimeout:      s.WriteTimeout,
		IdleTimeout:       s.IdleTimeout,
		MaxHeaderBytes:    s.MaxHeaderBytes,
		ConnState:         tl.track,
		// OPTIONS * reaches the handler (and gets a JSON 404) instead of
		// net/http's empty 200.
		DisableGeneralOptionsHandler: true,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(tl) }()
	select {
	case err := <-errc:
		srv.Close()
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	if err := s.drain(srv, tl, errc); err != nil {
		return fmt.Errorf("drain %s: %w", ln.Addr(), err)
	}
	return nil
}

var closeValue = []string{"close"}

// Header marks a response to close its connection while draining, so
// that the client opens its next request on a fresh connection, which a
// load balancer sends elsewhere.
func Header(h http.Header, draining *atomic.Bool) {
	if draining != nil && draining.Load() {
		h["Connection"] = closeValue
	}
}

// Health appends /healthz's answer, {"status":"ok"}, or returns
// ErrDraining once draining, so that load balancers and readiness probes
// stop sending before the listener closes.
func Health(b []byte, draining *atomic.Bool) ([]byte, error) {
	if draining != nil && draining.Load() {
		return b, ErrDraining
	}
	return append(b, `{"status":"ok"}`...), nil
}

// MetricsType is the Content-Type of AppendMetrics' page.
var MetricsType = string(expfmt.FmtText)

// AppendMetrics appends /metrics' answer: g in Prometheus' text
// exposition format.
func AppendMetrics(b []byte, g prometheus.Gatherer) ([]byte, error) {
	mfs, err := g.Gather()
	if err != nil {
		return b, fmt.Errorf("gather metrics: %w", err)
	}
	out := appender{b}
	enc := expfmt.NewEncoder(&out, expfmt.FmtText)
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return out.b, fmt.Errorf("encode metrics: %w", err)
		}
	}
	return out.b, nil
}

// appender is an io.Writer appending to a byte slice.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

// minBodyBuf is a body buffer's first capacity.
const minBodyBuf = 4 << 10

// ReadBody reads r's body into buf[:0], at most limit bytes, and returns
// it. The buffer grows with the bytes that have arrived, doubling when
// full, and never to a declared Content-Length: a client that declares
// 64 MiB and sends ten bytes costs the buffer it was given, not 64 MiB. A
// body of n bytes ends in a buffer of at most 2n + 4 KiB (3n while the
// last doubling copies). Errors wrap ErrTooLarge or ErrBadRequest; the
// bytes read so far are returned with them, for the caller to reuse.
func ReadBody(w http.ResponseWriter, r *http.Request, buf []byte, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return buf[:0], fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, r.ContentLength, limit)
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, max(len(buf), minBodyBuf))
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return buf, fmt.Errorf("%w: limit %d bytes", ErrTooLarge, limit)
			}
			return buf, fmt.Errorf("%w: reading body: %w", ErrBadRequest, err)
		}
	}
}
