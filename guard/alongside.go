package guard

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"
)

// A request whose session a header names, and whose session's decision
// is known before its body is read (pass: no stop, no note to add, no
// gate that reads the request), goes upstream at once; the guard reads a
// copy of its body as it is sent and does with the copy what it does
// with a request it read first: the session, the ledger, the turn. The
// answer waits for that reading to end before it is recorded and relayed,
// so that the agent never holds an answer the ledger lacks, as for every
// call.

// alongsideMin is the smallest body forwarded before it is read: reading
// a smaller one first costs less than handing its copy to another
// goroutine.
const alongsideMin = 16 << 10

// alongside reports whether r can go upstream before it is read: its
// length is known, at least alongsideMin and within MaxBody, a header
// names its session, and that session's decision needs neither its body
// nor a ledger another guard wrote since.
func (g *Guard) alongside(r *http.Request) bool {
	if g.cfg.Wait || g.cfg.Loop > 0 || r.ContentLength < alongsideMin || r.ContentLength > g.cfg.MaxBody {
		return false
	}
	name, _ := explicitID(r.Header, &Request{})
	if name == "" || g.cfg.Policy == Stop && parentKey(r.Header, name) != "" {
		return false
	}
	key := childKey(r.Header, name)
	if g.ledger != nil && g.ledger.changed(keyID(key)) {
		return false
	}
	s := g.sessions.held(key)
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stop == nil && s.note == "" && s.root == nil && s.pol.childSpent == 0 && s.pol.childUSD == 0
}

// held is the session of an explicit key, nil when none is held.
func (ss *sessions) held(key string) *Session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.byKey[key]
}

// serveAlongside forwards r at once and reads its body's copy alongside
// (readCopy).
func (g *Guard) serveAlongside(w http.ResponseWriter, r *http.Request, codec Codec) {
	n := max(r.ContentLength, 1)
	if err := g.inflight.Acquire(r.Context(), n); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	defer g.inflight.Release(n)
	c := &call{codec: codec, start: time.Now(), ready: make(chan struct{})}
	body := &copyBody{src: r.Body, buf: bodyBuf(r.ContentLength)}
	body.done = func(b []byte, err error) { go g.readCopy(c, r, b, err) }
	w.Header().Set("X-Bagen-Guard", "pass")
	out := r.Clone(context.WithValue(r.Context(), callKey{}, c))
	out.Body = body
	g.proxy.ServeHTTP(w, out)
	body.Close() // a body the transport never read: the call goes unrecorded
}

// readCopy does with a forwarded request's copy what serveModel does with
// a request it read first; a copy cut short or unreadable leaves the call
// unobserved, as serveModel leaves a request it cannot read.
func (g *Guard) readCopy(c *call, r *http.Request, body []byte, err error) {
	defer close(c.ready)
	if err != nil {
		if body != nil {
			freeBody(body)
		}
		return
	}
	req, hashes, err := g.readRequest(c.codec, r.Header, body, freeBody)
	if err != nil {
		return
	}
	if !c.claim.CompareAndSwap(claimOpen, claimRead) {
		return // the answer went on unobserved
	}
	c.req, c.hashes = req, hashes
	var how string
	var firstTools bool
	c.s, how, c.side, firstTools = g.sessions.resolve(r.Header, req, c.hashes)
	g.begin(c, r, how, firstTools)
	c.observed = true
}

// wait waits for c's request to be read (at once for a request read
// before it was forwarded) and reports whether the call is observed. The
// transport closes every request body, read or not, so the copy ends;
// an upstream that answers before it has the whole body and then reads
// no more of it could hold it back, so the wait is bounded by copyWait,
// after which the call goes unobserved, as a request the guard cannot
// read does: a reading that ends later leaves no trace (claim).
func (c *call) wait() bool {
	if c.ready == nil {
		return true
	}
	t := time.NewTimer(copyWait)
	defer t.Stop()
	select {
	case <-c.ready:
	case <-t.C:
		if c.claim.CompareAndSwap(claimOpen, claimGivenUp) {
			return false
		}
		<-c.ready // the reading took the call first, and is ending
	}
	return c.observed
}

// copyWait bounds how long an answer waits for its request's copy.
var copyWait = 5 * time.Second

// The claim on a call read alongside: the reading takes it to record the
// call, or the answer, tired of waiting, takes it to leave the call
// unobserved; whichever comes second backs off.
const (
	claimOpen int32 = iota
	claimRead
	claimGivenUp
)

// errCopyCut: the transport closed a request body before its end.
var errCopyCut = errors.New("request body closed before its end")

// copyBody is a request body forwarded as it is read, keeping a copy;
// done is given the copy once, at its end or when it fails.
type copyBody struct {
	src  io.ReadCloser
	buf  []byte
	done func([]byte, error)
	once sync.Once
}

func (b *copyBody) Read(p []byte) (int, error) {
	n, err := b.src.Read(p)
	b.buf = append(b.buf, p[:n]...)
	if err != nil {
		end := err
		if errors.Is(err, io.EOF) {
			end = nil
		}
		b.once.Do(func() { b.done(b.buf, end) })
		b.buf = nil // done's now
	}
	return n, err
}

func (b *copyBody) Close() error {
	b.once.Do(func() { b.done(nil, errCopyCut) })
	return b.src.Close()
}
