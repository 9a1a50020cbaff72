package httpd

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// listener wraps each accepted connection in a conn and keeps the set of
// open ones, so that the drain can close exactly the idle ones. Safe for
// concurrent use.
type listener struct {
	net.Listener
	s     *Server
	mu    sync.Mutex
	conns map[*conn]struct{}
}

func newListener(ln net.Listener, s *Server) *listener {
	return &listener{Listener: ln, s: s, conns: map[*conn]struct{}{}}
}

// Accept implements net.Listener.
func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	nc := &conn{Conn: c, s: l.s}
	nc.rd.limit, nc.wd.limit = l.s.readArm, l.s.WriteTimeout
	return nc, nil
}

// track is the http.Server's ConnState hook.
func (l *listener) track(nc net.Conn, s http.ConnState) {
	c, ok := nc.(*conn)
	if !ok {
		return
	}
	switch s {
	case http.StateNew:
		l.mu.Lock()
		l.conns[c] = struct{}{}
		l.mu.Unlock()
	case http.StateActive:
		c.phase.Store(phaseBusy)
	case http.StateIdle:
		c.idleSince.Store(time.Now().UnixNano())
		c.phase.Store(phaseIdle)
	case http.StateClosed, http.StateHijacked:
		l.mu.Lock()
		delete(l.conns, c)
		l.mu.Unlock()
	}
}

// closeIdle closes every connection that has been idle — a response
// written and no byte of a next request received — for at least settle,
// and returns how many connections remain open.
func (l *listener) closeIdle(settle time.Duration) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	before := time.Now().Add(-settle).UnixNano()
	for c := range l.conns {
		if c.idleSince.Load() <= before && c.phase.CompareAndSwap(phaseIdle, phaseClosing) {
			c.Conn.Close()
		}
	}
	return len(l.conns)
}

// Connection phases, as the drain sees them.
const (
	// The zero phase: accepted, no request yet. The client opened it to
	// send one, so the drain leaves it to ReadHeaderTimeout rather than
	// close it under that request.
	_ int32 = iota
	// phaseIdle: a response was written and no byte of a next request has
	// arrived since.
	phaseIdle
	// phaseBusy: a request is arriving or being answered.
	phaseBusy
	// phaseClosing: the drain closed it while idle.
	phaseClosing
)

// conn is an accepted connection. It marks itself busy when request bytes
// arrive, it rewrites the plain-text errors net/http writes for requests
// it cannot parse into the JSON envelope, and it keeps its deadlines
// lazily (deadline).
type conn struct {
	net.Conn
	s         *Server
	phase     atomic.Int32
	idleSince atomic.Int64 // unix ns
	rd, wd    deadline
}

// Read implements net.Conn.
func (c *conn) Read(p []byte) (int, error) {
	for {
		n, err := c.Conn.Read(p)
		if n > 0 {
			c.phase.CompareAndSwap(phaseIdle, phaseBusy)
			return n, err
		}
		if err == nil || !c.rd.early(err, c.Conn.SetReadDeadline) {
			return n, err
		}
	}
}

// Write implements net.Conn. A response net/http wrote itself is
// replaced by the same status with the body Server.Reject gives.
func (c *conn) Write(p []byte) (int, error) {
	pe, ok := Canned(p, c.s.MaxHeaderBytes)
	if !ok {
		return c.write(p)
	}
	if _, err := c.write(AppendResponse(nil, pe.Code, c.s.reject(pe, c.RemoteAddr().String()))); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *conn) write(p []byte) (int, error) {
	done := 0
	for {
		n, err := c.Conn.Write(p[done:])
		done += n
		if err == nil || !c.wd.early(err, c.Conn.SetWriteDeadline) {
			return done, err
		}
	}
}

// SetReadDeadline implements net.Conn (see deadline).
func (c *conn) SetReadDeadline(t time.Time) error { return c.rd.set(t, c.Conn.SetReadDeadline) }

// SetWriteDeadline implements net.Conn (see deadline).
func (c *conn) SetWriteDeadline(t time.Time) error { return c.wd.set(t, c.Conn.SetWriteDeadline) }

// SetDeadline implements net.Conn (see deadline).
func (c *conn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetReadDeadline(t), c.SetWriteDeadline(t))
}

// deadline is one direction of a connection's deadline, kept on the
// socket lazily. net/http sets the read deadline seven times a request
// (idle, none, the header's, the whole request's, none for the
// background read, long past to stop it, none) and the write deadline
// twice, and every change of a socket's deadline moves a runtime timer,
// about a microsecond a request in all. Here the socket keeps the
// deadline it has while that is still ahead and no later than the one
// wanted; a Read or Write it stops early is retried with the wanted
// deadline armed (early). A timeout therefore never fires late, and a
// deadline already past, the way to interrupt a blocked Read, takes
// effect at once.
//
// One use behaves unlike a plain socket's: a deadline in the past set to
// interrupt a blocked Read and then none, before that Read has returned,
// lets the Read go on, since it finds none wanted and retries. net/http
// waits for the interrupted Read to return before it sets none.
type deadline struct {
	// limit caps how far ahead a deadline is armed (0: no cap), so that
	// the long idle deadline does not have to be moved back for the
	// shorter header deadline that follows it; a connection idle for
	// longer wakes once a limit to arm the rest.
	limit time.Duration
	mu    sync.Mutex
	want  time.Time // zero: none
	armed time.Time // zero: none
	// passed: the armed deadline was past when armed (an interrupt).
	passed bool
}

// set wants t (zero: none) and changes the socket's deadline with apply
// only when the one armed is later than t or was already past when
// armed; the clock is read only then. Wanting none leaves the armed
// deadline: a Read or Write it stops is retried, as is one stopped by an
// armed deadline that has passed since.
func (d *deadline) set(t time.Time, apply func(time.Time) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.want = t
	if t.IsZero() || !d.armed.IsZero() && !d.passed && !d.armed.After(t) {
		return nil
	}
	return d.arm(time.Now(), apply)
}

// arm sets the socket's deadline to the wanted one, at most limit ahead
// (none wanted: limit ahead, or none without a limit). The caller holds
// mu.
func (d *deadline) arm(now time.Time, apply func(time.Time) error) error {
	t := d.want
	if d.limit > 0 && (t.IsZero() || t.Sub(now) > d.limit) {
		t = now.Add(d.limit)
	}
	d.passed = !t.IsZero() && !t.After(now)
	if t.Equal(d.armed) {
		return nil
	}
	d.armed = t
	return apply(t)
}

// early reports whether err is a timeout of the armed deadline before
// the wanted one; if so it arms the wanted one, and the caller retries.
func (d *deadline) early(err error, apply func(time.Time) error) bool {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	if !d.want.IsZero() && !d.want.After(now) {
		return false
	}
	return d.arm(now, apply) == nil
}

// CloseWrite half-closes the connection, so that net/http's lingering
// close (FIN, then wait before closing) works through the wrapper.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// errorHeaders are the headers net/http (server.go, conn.serve) writes
// with the plain-text answers to requests it cannot read, before any
// handler runs.
const errorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// Canned recognises a response net/http wrote itself: the plain-text
// answers to a malformed request (400, 431, 501, 505) and the 417 for an
// Expect other than 100-continue, and returns the error to answer it
// with instead; maxHeader is the server's header limit, for the 431's
// text. A handler that never writes text/plain with these headers nor a
// 417 is never matched.
func Canned(p []byte, maxHeader int) (*ProtocolError, bool) {
	// The canned answers are HTTP/1.1; the 417 takes the request's
	// version.
	rest, ok := bytes.CutPrefix(p, []byte("HTTP/1.1 "))
	if !ok {
		rest, ok = bytes.CutPrefix(p, []byte("HTTP/1.0 "))
	}
	if !ok || len(rest) < 4 || rest[3] != ' ' {
		return nil, false
	}
	code := 0
	for _, d := range rest[:3] {
		if d < '0' || d > '9' {
			return nil, false
		}
		code = code*10 + int(d-'0')
	}
	switch code {
	case http.StatusExpectationFailed:
		return &ProtocolError{code, `expectation failed: only "Expect: 100-continue" is supported`}, true
	case http.StatusBadRequest, http.StatusRequestHeaderFieldsTooLarge, http.StatusNotImplemented, http.StatusHTTPVersionNotSupported:
	default:
		return nil, false
	}
	i := bytes.Index(rest, []byte("\r\n"))
	if i < 0 || !bytes.HasPrefix(rest[i:], []byte(errorHeaders)) {
		return nil, false
	}
	_, detail, _ := bytes.Cut(rest[4:i], []byte(": "))
	switch {
	case code == http.StatusRequestHeaderFieldsTooLarge:
		return &ProtocolError{code, "request header too large: limit " + strconv.Itoa(maxHeader) + " bytes"}, true
	case code == http.StatusNotImplemented:
		return &ProtocolError{code, "not implemented: unsupported transfer encoding"}, true
	case code == http.StatusBadRequest && len(detail) == 0:
		return &ProtocolError{code, ErrBadRequest.Error() + ": malformed request line or header"}, true
	case code == http.StatusBadRequest:
		return &ProtocolError{code, ErrBadRequest.Error() + ": " + string(detail)}, true
	}
	return &ProtocolError{code, "HTTP version not supported: " + string(detail)}, true
}

// AppendResponse appends a whole HTTP/1.1 response with status code and
// a JSON body; the connection closes after it, as net/http's answer did.
func AppendResponse(b []byte, code int, body []byte) []byte {
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(code)...)
	b = append(b, "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	return append(b, body...)
}
