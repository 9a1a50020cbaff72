package httpd

import (
	"bytes"
	"net"
	"net/http"
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
	return &conn{Conn: c, s: l.s}, nil
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
	// phaseNew: accepted, no request yet. The client opened it to send
	// one, so the drain leaves it to ReadHeaderTimeout rather than close
	// it under that request.
	phaseNew int32 = iota
	// phaseIdle: a response was written and no byte of a next request has
	// arrived since.
	phaseIdle
	// phaseBusy: a request is arriving or being answered.
	phaseBusy
	// phaseClosing: the drain closed it while idle.
	phaseClosing
)

// conn is an accepted connection. It marks itself busy when request bytes
// arrive, and it rewrites the plain-text errors net/http writes for
// requests it cannot parse into the JSON envelope.
type conn struct {
	net.Conn
	s         *Server
	phase     atomic.Int32
	idleSince atomic.Int64 // unix ns
}

// Read implements net.Conn.
func (c *conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.phase.CompareAndSwap(phaseIdle, phaseBusy)
	}
	return n, err
}

// Write implements net.Conn. A response net/http wrote itself is
// replaced by the same status with the body Server.Reject gives.
func (c *conn) Write(p []byte) (int, error) {
	pe, ok := Canned(p, c.s.MaxHeaderBytes)
	if !ok {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(AppendResponse(nil, pe.Code, c.s.reject(pe, c.RemoteAddr().String()))); err != nil {
		return 0, err
	}
	return len(p), nil
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
