package dataset

import (
	"crypto/sha256"
	"hash"
	"io"
)

// asyncHash passes its reader's bytes through and hashes them (SHA-256) on
// a goroutine of its own: the one goroutine that reads a build's input and
// splits it into records for the workers then spends its time on that,
// not on the hash, which was a third of its work. Read copies what it
// returns into one of a few buffers for the hashing goroutine; the digest
// is of exactly the bytes Read returned, in order.
type asyncHash struct {
	r      io.Reader
	h      hash.Hash
	free   chan []byte // buffers the hashing goroutine is done with
	full   chan []byte // buffers for it to hash, in order
	done   chan struct{}
	size   int // capacity of each buffer
	made   int // buffers allocated so far, at most hashBuffers
	closed bool
}

// hashBuffers is how many buffers may be in flight to the hashing
// goroutine, and hashBufferSize the most each holds.
const (
	hashBuffers    = 4
	hashBufferSize = 1 << 20
)

// newAsyncHash hashes what is read from r; size, r's length if known (else
// 0), keeps the buffers of a small input small.
func newAsyncHash(r io.Reader, size int64) *asyncHash {
	a := &asyncHash{r: r, h: sha256.New(), free: make(chan []byte, hashBuffers), full: make(chan []byte, hashBuffers), done: make(chan struct{})}
	a.size = hashBufferSize
	if size > 0 {
		a.size = int(min(max(size, 4096), hashBufferSize))
	}
	go func() {
		defer close(a.done)
		for b := range a.full {
			a.h.Write(b)
			a.free <- b
		}
	}()
	return a
}

func (a *asyncHash) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	for rest := p[:n]; len(rest) > 0; {
		b := a.buffer()
		k := min(len(rest), cap(b))
		a.full <- append(b[:0], rest[:k]...)
		rest = rest[k:]
	}
	return n, err
}

// buffer returns a free buffer, allocating one while fewer than
// hashBuffers exist.
func (a *asyncHash) buffer() []byte {
	select {
	case b := <-a.free:
		return b
	default:
	}
	if a.made < hashBuffers {
		a.made++
		return make([]byte, 0, a.size)
	}
	return <-a.free
}

// Sum waits for the hashing goroutine and returns the digest of all the
// bytes read; nothing may be read after.
func (a *asyncHash) Sum() []byte {
	a.close()
	return a.h.Sum(nil)
}

// close stops the hashing goroutine once it has hashed what was read.
func (a *asyncHash) close() {
	if !a.closed {
		a.closed = true
		close(a.full)
		<-a.done
	}
}
