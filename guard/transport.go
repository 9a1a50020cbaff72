package guard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"bagen-data/internal/httpd"
)

// ServeHTTP routes a request: the three model APIs are observed, /healthz,
// /metrics and the live page (GET / and GET /sessions.json) are the
// guard's own, everything else (GET /v1/models included) goes upstream
// untouched.
func (g *Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isPage(r) {
		g.servePage(w, r)
		return
	}
	httpd.Header(w.Header(), g.draining)
	switch r.URL.Path {
	case "/healthz":
		g.health(w)
		return
	case "/metrics":
		g.metricsPage(w)
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
	// ready, for a request forwarded before it was read (alongside.go),
	// is closed once its copy is read; observed says whether it could
	// be. nil: the request was read first, and is observed.
	ready    chan struct{}
	observed bool
	claim    atomic.Int32 // claimOpen, claimRead, claimGivenUp
}

type callKey struct{}

func (g *Guard) serveModel(w http.ResponseWriter, r *http.Request, codec Codec) {
	if g.alongside(r) {
		g.serveAlongside(w, r, codec)
		return
	}
	body, release, err := g.readBody(w, r)
	if err != nil {
		status := http.StatusBadRequest
		if errors.Is(err, httpd.ErrTooLarge) {
			status = http.StatusRequestEntityTooLarge
		}
		writeError(w, status, err)
		return
	}
	defer release()
	req, hashes, err := g.readRequest(codec, r.Header, body, nil)
	if err != nil {
		// Not the guard's to judge: the upstream answers it.
		g.forward(w, r, body, nil)
		return
	}
	c := &call{codec: codec, req: req, hashes: hashes, start: time.Now()}
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
func (g *Guard) readBody(w http.ResponseWriter, r *http.Request) ([]byte, func(), error) {
	n := r.ContentLength
	if n < 0 || n > g.cfg.MaxBody {
		n = g.cfg.MaxBody
	}
	if err := g.inflight.Acquire(r.Context(), max(n, 1)); err != nil {
		return nil, nil, err
	}
	release := func() { g.inflight.Release(max(n, 1)) }
	body, err := httpd.ReadBody(w, r, nil, g.cfg.MaxBody)
	if err != nil {
		release()
		return nil, nil, fmt.Errorf("bagen-data guard: %w", err)
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
	if c == nil || !c.wait() {
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
	if c, _ := r.Context().Value(callKey{}).(*call); c != nil && c.wait() {
		c.status = status
		g.finish(c, nil)
	}
	writeError(w, status, fmt.Errorf("bagen-data guard: upstream %s: %w", g.upstream.Host, err))
}

// writeError answers {"error": "…"}.
func writeError(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(httpd.AppendError(nil, err.Error()))
}

// health answers /healthz: 200 {"status":"ok"}, or 503 once draining, so
// that a load balancer stops sending before the listener closes.
func (g *Guard) health(w http.ResponseWriter) {
	b, err := httpd.Health(nil, g.draining)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// metricsPage answers /metrics in Prometheus' text format.
func (g *Guard) metricsPage(w http.ResponseWriter) {
	b, err := httpd.AppendMetrics(nil, g.metrics.reg)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", httpd.MetricsType)
	w.Write(b)
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
