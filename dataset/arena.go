package dataset

import "sync"

// arenaBlock is the size of the blocks an arena hands out memory from;
// larger requests get memory of their own.
const arenaBlock = 1 << 20

// blocks are the arenas' free blocks. Reusing them spares a build the
// allocation, zeroing and collection of every spill record it reads: the
// records' bytes are overwritten by the read before anyone looks at them.
var blocks = sync.Pool{New: func() any { b := make([]byte, arenaBlock); return &b }}

// arena hands out memory for the spill records a chunk's rows are rendered
// from; the rows' strings share it. It is released once the chunk's rows
// are written (the parquet writer copies their values), and must not be
// used after.
type arena struct {
	cur  []byte    // the free part of the current block
	used []*[]byte // the blocks handed out from
	// recs are the spill records of the chunk's rows, first's first, when
	// they were read all at once before rendering (rowWriter.load).
	recs  [][]byte
	first int
}

// alloc returns n bytes of the arena, with unspecified contents.
func (a *arena) alloc(n int) []byte {
	if n > arenaBlock/4 {
		return make([]byte, n)
	}
	if len(a.cur) < n {
		b := blocks.Get().(*[]byte)
		a.used = append(a.used, b)
		a.cur = *b
	}
	out := a.cur[:n:n]
	a.cur = a.cur[n:]
	return out
}

// release returns the arena's blocks for reuse.
func (a *arena) release() {
	for _, b := range a.used {
		blocks.Put(b)
	}
	a.cur, a.used, a.recs = nil, nil, nil
}
