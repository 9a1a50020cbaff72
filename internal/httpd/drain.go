package httpd

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// The drain answers every request the server has read and gives every
// client a chance to learn, from the response itself, that the
// connection is going away:
//
//  1. /healthz answers 503 and every response carries Connection: close,
//     so each client opens its next request on a fresh connection,
//     which a load balancer that saw the 503 sends elsewhere.
//  2. For Server.DrainGrace the server keeps accepting and serving as
//     before: a client that connects or writes on a keep-alive
//     connection during the grace is answered.
//  3. The listener closes once the kernel's accept queue is empty, then
//     each connection closes once idle: after the response in flight
//     (with Connection: close), or at once if it has received no byte of
//     a request since its last response. A connection that has never
//     carried a request is left to ReadHeaderTimeout: its client opened
//     it to send one.
//  4. At Server.DrainTimeout whatever is still open is closed and Serve
//     reports ErrDrainTimeout.
//
// http.Server.Shutdown is not used: it closes idle keep-alive
// connections at once, and drops without an answer any request it reads
// after Shutdown began — including one that arrives on a new or idle
// connection at that moment.
//
// What remains is HTTP/1.1's own race: a client that writes on a
// connection idle through the whole grace at the instant it is closed
// gets no response. A load balancer that has seen the 503 sends nothing
// by then; a direct client can retry, as every route is idempotent.

// Drain timing.
const (
	// sweepEvery is how often the drain looks for idle connections.
	sweepEvery = 20 * time.Millisecond
	// settle is how long a connection must have been idle before the drain
	// closes it: a request net/http had already buffered makes it busy
	// well within this.
	settle = 50 * time.Millisecond
)

// drain stops srv, which serves tl, after its context was cancelled;
// errc receives srv.Serve's result.
func (s *Server) drain(srv *http.Server, tl *listener, errc <-chan error) error {
	deadline := time.Now().Add(s.drainTimeout())
	s.Draining.Store(true)
	var serveErr error
	grace := time.NewTimer(s.DrainGrace)
	select {
	case <-grace.C:
		closeListener(tl.Listener, deadline)
		serveErr = <-errc
	case serveErr = <-errc:
		grace.Stop()
	}
	if errors.Is(serveErr, net.ErrClosed) {
		serveErr = nil
	}
	tick := time.NewTicker(sweepEvery)
	defer tick.Stop()
	for open := tl.closeIdle(settle); open > 0; open = tl.closeIdle(settle) {
		if time.Now().After(deadline) {
			srv.Close()
			return fmt.Errorf("%w: closed %d connections still busy after %v", ErrDrainTimeout, open, s.drainTimeout())
		}
		<-tick.C
	}
	srv.Close()
	if serveErr != nil {
		return fmt.Errorf("accept during the drain grace: %w", serveErr)
	}
	return nil
}

// closeListener closes ln once its accept queue is empty, where the
// kernel reports it (Linux), so that closing does not reset connections
// whose handshake the kernel completed and whose clients may already have
// written a request; the accept loop keeps taking them meanwhile.
func closeListener(ln net.Listener, deadline time.Time) {
	for acceptQueue(ln) > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	ln.Close()
}
