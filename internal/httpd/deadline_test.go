package httpd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countingListener counts the deadline changes that reach its sockets.
type countingListener struct {
	net.Listener
	// stops counts read deadlines already past when set: the way
	// net/http stops its background read.
	reads, stops, writes atomic.Int64
	closed               atomic.Int64 // connections the server closed
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, l: l}, nil
}

type countingConn struct {
	net.Conn
	l *countingListener
}

func (c *countingConn) SetReadDeadline(t time.Time) error {
	c.l.reads.Add(1)
	if !t.IsZero() && t.Before(time.Now()) {
		c.l.stops.Add(1)
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *countingConn) Close() error {
	c.l.closed.Add(1)
	return c.Conn.Close()
}

func (c *countingConn) SetWriteDeadline(t time.Time) error {
	c.l.writes.Add(1)
	return c.Conn.SetWriteDeadline(t)
}

// serveTest serves h through a Server with s's limits on a loopback
// listener wrapped by wrap (nil: none) and returns its address.
func serveTest(t *testing.T, s Server, h http.HandlerFunc, wrap func(net.Listener) net.Listener) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if wrap != nil {
		ln = wrap(ln)
	}
	s.Handler = h
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return addr
}

// echoLen answers a POST with the length of its body.
func echoLen(w http.ResponseWriter, r *http.Request) {
	n, err := io.Copy(io.Discard, r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	fmt.Fprint(w, n)
}

// keepAlive sends n POSTs on one kept-alive connection and closes it.
func keepAlive(t *testing.T, addr string, n int) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	for i := range n {
		if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || string(body) != "5" {
			t.Fatalf("request %d: %s %q, want 200 \"5\"", i, resp.Status, body)
		}
	}
}

// TestDeadlineChangesPerRequest counts the socket deadline changes of
// 200 requests on one connection under the servers' default timeouts.
// net/http asks for 7 read deadlines and 2 write deadlines a request
// (idle, none, header, whole request, none for its background read, long
// past to stop that read, none; the response's, none). The socket sees
// the first header deadline, then two changes for each time net/http
// stops its background read (the stop, and arming the next request's),
// and one write deadline in all. net/http stops that read after most
// requests (about 199 in 200 here, 170 under the race detector); which
// ones depends on its goroutines' timing.
func TestDeadlineChangesPerRequest(t *testing.T) {
	l := Limits{}.WithDefaults(1 << 20)
	var cl *countingListener
	addr := serveTest(t, Server{ReadHeaderTimeout: l.ReadHeaderTimeout, ReadTimeout: l.ReadTimeout,
		WriteTimeout: l.WriteTimeout, IdleTimeout: l.IdleTimeout}, echoLen,
		func(ln net.Listener) net.Listener { cl = &countingListener{Listener: ln}; return cl })
	const n = 200
	keepAlive(t, addr, n)
	// The server re-arms after the last response; wait for it to close
	// the connection the client closed.
	for end := time.Now().Add(10 * time.Second); cl.closed.Load() == 0 && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	r, stops, w := cl.reads.Load(), cl.stops.Load(), cl.writes.Load()
	if r != 1+2*stops || w != 1 || stops < 1 || stops > n {
		t.Fatalf("%d requests: %d read deadline changes (%d of them stops), %d write deadline changes; want 1 + 2 × stops, stops in [1, %d], and 1",
			n, r, stops, w, n)
	}
}

// readUntilClosed reads c until the server closes it and returns how
// long that took from start.
func readUntilClosed(t *testing.T, c net.Conn, start time.Time) time.Duration {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, c)
	if err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("waiting for the server to close: %v", err)
	}
	return time.Since(start)
}

// between fails unless lo <= took < lo+slack: a timeout neither early
// nor much late.
func between(t *testing.T, what string, took, lo time.Duration) {
	t.Helper()
	const slack = 2 * time.Second
	if took < lo || took >= lo+slack {
		t.Errorf("%s after %v, want within [%v, %v)", what, took.Round(time.Millisecond), lo, lo+slack)
	}
}

// TestDeadlinesStillFire checks each timeout on a connection that has
// already carried requests, so that the socket holds a deadline armed
// for an earlier one: none fires early, none much late.
func TestDeadlinesStillFire(t *testing.T) {
	t.Run("header", func(t *testing.T) {
		addr := serveTest(t, Server{ReadHeaderTimeout: 300 * time.Millisecond, ReadTimeout: 5 * time.Second,
			IdleTimeout: 5 * time.Second}, echoLen, nil)
		c := dialAfter(t, addr, 3)
		// 200 ms into the idle wait, half a request line: the header
		// deadline counts from here, not from the idle deadline armed
		// 200 ms earlier.
		time.Sleep(200 * time.Millisecond)
		start := time.Now()
		io.WriteString(c, "POST / HTTP/1.1\r\nHost")
		between(t, "half a header closed", readUntilClosed(t, c, start), 300*time.Millisecond)
	})
	t.Run("idle", func(t *testing.T) {
		// The read deadline is armed at most 100 ms ahead; the idle
		// connection must outlive those wake-ups.
		addr := serveTest(t, Server{ReadHeaderTimeout: 100 * time.Millisecond, ReadTimeout: 100 * time.Millisecond,
			IdleTimeout: 600 * time.Millisecond}, echoLen, nil)
		c := dialAfter(t, addr, 2)
		// The idle deadline is set after the third answer is written, so
		// after start.
		start := time.Now()
		roundTrip(t, c, bufio.NewReader(c))
		between(t, "an idle connection closed", readUntilClosed(t, c, start), 600*time.Millisecond)
	})
	t.Run("body", func(t *testing.T) {
		var sent atomic.Int64 // unix ns
		failed := make(chan time.Duration, 1)
		h := func(w http.ResponseWriter, r *http.Request) {
			if _, err := io.Copy(io.Discard, r.Body); err != nil {
				failed <- time.Since(time.Unix(0, sent.Load()))
				return
			}
			fmt.Fprint(w, "5")
		}
		addr := serveTest(t, Server{ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 400 * time.Millisecond,
			IdleTimeout: 5 * time.Second}, h, nil)
		c := dialAfter(t, addr, 3)
		sent.Store(time.Now().UnixNano())
		io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhel")
		failedAfter(t, failed, "a stalled body failed", 400*time.Millisecond)
	})
	t.Run("write", func(t *testing.T) {
		var sent atomic.Int64 // unix ns; 0 until the big request
		failed := make(chan time.Duration, 1)
		h := func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			if sent.Load() == 0 {
				fmt.Fprint(w, "5")
				return
			}
			chunk := make([]byte, 1<<20)
			for range 1 << 10 {
				if _, err := w.Write(chunk); err != nil {
					failed <- time.Since(time.Unix(0, sent.Load()))
					return
				}
			}
		}
		addr := serveTest(t, Server{WriteTimeout: 500 * time.Millisecond, IdleTimeout: 5 * time.Second}, h, nil)
		c := dialAfter(t, addr, 3)
		sent.Store(time.Now().UnixNano())
		// The client never reads the 1 GiB answer.
		io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
		failedAfter(t, failed, "a write to a client that stopped reading failed", 500*time.Millisecond)
	})
}

// failedAfter waits for a handler's report of how long after its request
// was sent a read or write failed, and checks it with between.
func failedAfter(t *testing.T, failed <-chan time.Duration, what string, lo time.Duration) {
	t.Helper()
	select {
	case took := <-failed:
		between(t, what, took, lo)
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: not within 5s", what)
	}
}

// dialAfter opens a connection and sends n requests on it, answered.
func dialAfter(t *testing.T, addr string, n int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	br := bufio.NewReader(c)
	for range n {
		roundTrip(t, c, br)
	}
	if br.Buffered() > 0 {
		t.Fatalf("%d bytes after the answers", br.Buffered())
	}
	return c
}

// roundTrip sends one request on c and reads its answer from br.
func roundTrip(t *testing.T, c net.Conn, br *bufio.Reader) {
	t.Helper()
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// BenchmarkKeepAlive sends requests one after another on one kept-alive
// loopback connection to a Server with the servers' default timeouts and
// reports the socket deadline changes a request besides the time.
func BenchmarkKeepAlive(b *testing.B) {
	l := Limits{}.WithDefaults(1 << 20)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	s := Server{Handler: http.HandlerFunc(echoLen), ReadHeaderTimeout: l.ReadHeaderTimeout, ReadTimeout: l.ReadTimeout,
		WriteTimeout: l.WriteTimeout, IdleTimeout: l.IdleTimeout}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, cl) }()
	defer func() {
		cancel()
		<-done
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	req := []byte("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
	resp := make([]byte, 0, 256)
	for b.Loop() {
		if _, err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		// The answer is headers and "5"; read to its last byte.
		resp = resp[:0]
		for len(resp) < 5 || string(resp[len(resp)-5:]) != "\r\n\r\n5" {
			x, err := br.ReadByte()
			if err != nil {
				b.Fatal(err)
			}
			resp = append(resp, x)
		}
	}
	b.ReportMetric(float64(cl.reads.Load()+cl.writes.Load())/float64(b.N), "deadlines/op")
}
