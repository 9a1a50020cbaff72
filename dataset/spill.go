package dataset

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"

	"unsafe"

	"bagen-data/internal/uring"
	"bagen-data/probes"
	"bagen-data/rollout"
)

// spill keeps the text of every trajectory on disk between the planning
// pass and the writing pass, so memory holds only ids, counts and classes.
// Records are appended by one goroutine; after finish, any number of
// goroutines may read them.
type spill struct {
	f   *os.File
	w   *bufio.Writer
	off int64
	fd  int // f's descriptor, for rings

	mu      sync.Mutex
	rings   []*uring.Ring // free rings, one per worker reading at once
	noRings bool          // io_uring is unavailable or not wanted: pread only
}

// newSpill makes a spill in dir; preadOnly reads it without io_uring.
func newSpill(dir string, preadOnly bool) (*spill, error) {
	f, err := os.CreateTemp(dir, ".spill-*")
	if err != nil {
		return nil, err
	}
	return &spill{f: f, w: bufio.NewWriterSize(f, 1<<20), noRings: preadOnly}, nil
}

// add appends a trajectory's turns and returns where they are.
func (s *spill) add(rec []byte) (off int64, n int32, err error) {
	off = s.off
	if _, err := s.w.Write(rec); err != nil {
		return 0, 0, err
	}
	s.off += int64(len(rec))
	return off, int32(len(rec)), nil
}

func (s *spill) finish() error {
	if err := s.w.Flush(); err != nil {
		return err
	}
	rc, err := s.f.SyscallConn()
	if err != nil {
		return err
	}
	return rc.Control(func(fd uintptr) { s.fd = int(fd) })
}

// read fills buf with the spill's bytes at off.
func (s *spill) read(off int64, buf []byte) ([]byte, error) {
	_, err := s.f.ReadAt(buf, off)
	return buf, err
}

// readAll fills each bufs[i] with the spill's bytes at offs[i]: through an
// io_uring, all with one system call, where there is one; the reads it
// could not do, and all of them without it, with pread.
func (s *spill) readAll(offs []int64, bufs [][]byte) error {
	pending := []int(nil)
	if r := s.ring(); r != nil {
		failed, ok, err := r.Read(s.fd, offs, bufs)
		if err != nil {
			return err // reads may still be landing in bufs: the ring stays open
		}
		s.release(r, ok)
		pending = failed
	} else {
		pending = make([]int, len(bufs))
		for i := range pending {
			pending[i] = i
		}
	}
	for _, i := range pending {
		if _, err := s.read(offs[i], bufs[i]); err != nil {
			return err
		}
	}
	return nil
}

// ring returns a free ring, making one if none is free, or nil when
// io_uring cannot be used.
func (s *spill) ring() *uring.Ring {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.noRings {
		return nil
	}
	if n := len(s.rings); n > 0 {
		r := s.rings[n-1]
		s.rings = s.rings[:n-1]
		return r
	}
	r, err := uring.New(chunkRows)
	if err != nil {
		s.noRings = true
		return nil
	}
	return r
}

// release returns r to the free rings, or closes it when it is no longer
// usable.
func (s *spill) release(r *uring.Ring, ok bool) {
	if !ok {
		r.Close()
		return
	}
	s.mu.Lock()
	s.rings = append(s.rings, r)
	s.mu.Unlock()
}

func (s *spill) close() error {
	s.mu.Lock()
	for _, r := range s.rings {
		r.Close()
	}
	s.rings = nil
	s.mu.Unlock()
	name := s.f.Name()
	err := s.f.Close()
	return errors.Join(err, os.Remove(name))
}

// encodeTurns serialises the paired messages and counts of a trajectory:
// uvarint T, then per turn the raw user text, the assistant text, in_k and
// out_k.
func encodeTurns(t rollout.Trajectory, a probes.Accounting) []byte {
	b, _ := appendTurns(nil, t, a)
	return b
}

// appendTurns appends the record encodeTurns makes to b, and says where
// each turn ends in the record: a row showing k turns reads only the
// record's first ends[k-1] bytes.
func appendTurns(b []byte, t rollout.Trajectory, a probes.Accounting) ([]byte, []int32) {
	size := 10
	for _, p := range a.Pairs {
		size += len(t.Messages[p[0]].Content) + len(t.Messages[p[1]].Content) + 40
	}
	b = slices.Grow(b[:0], size)
	ends := make([]int32, len(a.Pairs))
	b = binary.AppendUvarint(b, uint64(len(a.Pairs)))
	for k, p := range a.Pairs {
		b = appendString(b, t.Messages[p[0]].Content)
		b = appendString(b, t.Messages[p[1]].Content)
		b = binary.AppendUvarint(b, uint64(a.Turns[k].In))
		b = binary.AppendUvarint(b, uint64(a.Turns[k].Out))
		ends[k] = int32(len(b))
	}
	return b, ends
}

// records are buffers for spill records between the workers that encode
// them and the one that appends them to the spill.
// A record larger than maxPooledRecord is left to the collector.
var records = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledRecord = 4 << 20

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errCorrupt = errors.New("dataset: corrupt spill record")

// decodeTurns is the inverse of encodeTurns: a trajectory whose messages
// are the pairs in order, and its accounting.
func decodeTurns(b []byte) (rollout.Trajectory, probes.Accounting, error) {
	return decodeTurnsN(b, -1)
}

// decodeTurnsN decodes the first want turns of a record (all of them when
// want is negative or more than it has): b may end after those turns.
func decodeTurnsN(b []byte, want int) (rollout.Trajectory, probes.Accounting, error) {
	var t rollout.Trajectory
	var a probes.Accounting
	all, k := binary.Uvarint(b)
	n := all
	if want >= 0 && uint64(want) < all {
		n = uint64(want)
	}
	// Each turn takes at least four bytes: a bad count cannot allocate.
	if k <= 0 || n > uint64(len(b)-k)/4 {
		return t, a, errCorrupt
	}
	b = b[k:]
	t.Messages = make([]rollout.Message, 0, 2*n)
	a.Turns = make([]probes.TurnTokens, n)
	a.Pairs = make([][2]int, n)
	a.TrailingAt = -1
	for i := range int(n) {
		var user, asst string
		var in, out uint64
		var ok bool
		if user, b, ok = readString(b); !ok {
			return t, a, errCorrupt
		}
		if asst, b, ok = readString(b); !ok {
			return t, a, errCorrupt
		}
		if in, b, ok = readUvarint(b); !ok {
			return t, a, errCorrupt
		}
		if out, b, ok = readUvarint(b); !ok {
			return t, a, errCorrupt
		}
		t.Messages = append(t.Messages,
			rollout.Message{Role: "user", Content: user},
			rollout.Message{Role: "assistant", Content: asst})
		a.Pairs[i] = [2]int{2 * i, 2*i + 1}
		a.Turns[i] = probes.TurnTokens{In: int64(in), Out: int64(out)}
	}
	if n == all && len(b) != 0 {
		return t, a, fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(b))
	}
	return t, a, nil
}

// readString returns the string at the start of b without copying it: the
// string shares b's memory, so b must never be modified afterwards (a
// spill record is read into memory of its chunk's arena, released only
// once the chunk's rows are written, and only decoded). A row then
// holds its trajectory's text once, not once in the record and again in
// its strings.
func readString(b []byte) (string, []byte, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return "", nil, false
	}
	if n == 0 {
		return "", b[k:], true
	}
	return unsafe.String(&b[k], int(n)), b[k+int(n):], true
}

func readUvarint(b []byte) (uint64, []byte, bool) {
	v, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, nil, false
	}
	return v, b[k:], true
}
