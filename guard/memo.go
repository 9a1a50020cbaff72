package guard

import (
	"bytes"
	"container/list"
	"hash/maphash"
	"math/bits"
	"net/http"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"bagen-data/internal/jsonlex"
	"bagen-data/rollout"
)

// Every request of a session sends its whole history again: the history
// grows by a turn a call, and reading it all costs time in proportion to
// its length (about 5 ms for a megabyte). A reader that keeps a memo of the
// last body it read of a session — the body, and where each element of
// its history array ended — reads the next body only from the first
// element that does not stand byte for byte at the same place: what it
// read before that point reads the same way again, since reading is
// decided by the bytes alone. A changed byte anywhere before an element
// (a cache marker moved, an edited system prompt) only means that
// element and those after it are read again. The memo is a matter of
// speed alone: which memo a body is read against changes nothing in the
// Request read, only how much of it is read anew (FuzzReadAgainstMemo).

// readMemo is what reading a body left for reading its session's next
// body. Once kept (memos.put), only its count of holders changes.
type readMemo struct {
	body  []byte
	start int // offset just past the history array's '['
	tail  int // offset just past its ']'
	marks []histMark
	// items and echoed are the history's after its last element.
	items  []rollout.Message
	echoed []string
	// read is the Request read, and hashes its prefix hashes.
	read   *Request
	hashes []uint64
	// resumed counts the elements taken from the memo it was read
	// against; tailKnown says the body after the history was the memo's.
	resumed   int
	tailKnown bool
	// refs counts the memo's holders: the memos that keep it and each
	// reading against it. free, when set, is given the body once none
	// is left.
	refs atomic.Int32
	free func([]byte)
}

// hold counts one more holder of m (none for nil) and returns m.
func (m *readMemo) hold() *readMemo {
	if m != nil {
		m.refs.Add(1)
	}
	return m
}

// drop counts one holder of m less; the last gives the body to free.
func (m *readMemo) drop() {
	if m != nil && m.refs.Add(-1) == 0 && m.free != nil {
		m.free(m.body)
	}
}

// histMark is where an element of the history array ended and the
// reading's state after it.
type histMark struct {
	end    int // offset just past the element
	items  int // the history's items so far
	echoed []string
	inRun  bool
}

// histState is what a reader builds from the history array, element by
// element: the items, the ids of the last assistant turn, and whether the
// last item kept is the assistant's (Responses groups a turn's items).
type histState struct {
	items  []rollout.Message
	echoed []string
	inRun  bool
}

// history reads the history array, elem reading one element into h, and
// records where each element ends. With a memo of an earlier body, the
// elements of the memo that end within the bytes the two bodies share are
// taken from it and reading goes on after them; and when the rest of the
// body after the array is the rest of the memo's body after its array,
// the rest is not read again (lx.tailKnown): the Request is the memo's
// with this history (lexRead).
func (lx *lexReader) history(h *histState, elem func() bool) int {
	if !lx.ok || lx.d.Kind() != jsonlex.Array || !lx.d.Begin('[') {
		lx.fail()
		return 0
	}
	n := lx.resume(h)
	for ; lx.d.Next(n, ']'); n++ {
		if !elem() {
			lx.fail()
			return n
		}
		lx.memo.marks = append(lx.memo.marks, histMark{end: lx.d.Offset(), items: len(h.items),
			echoed: slices.Clone(h.echoed), inRun: h.inRun})
	}
	m, p := lx.memo, lx.prev
	m.tail, m.items, m.echoed = lx.d.Offset(), slices.Clip(h.items), h.echoed
	if m.resumed > 0 && lx.d.Err() == nil && bytes.Equal(lx.body[m.tail:], p.body[p.tail:]) {
		// The top-level object's closing brace, the last byte but
		// whitespace, as in the memo's body.
		lx.tailKnown, m.tailKnown = true, true
		lx.d.Seek(len(bytes.TrimRight(lx.body, " \t\r\n")) - 1)
	}
	return n
}

// withHistory is the Request p read with m's history in place of its
// own: what a body reads as whose bytes outside its history array are
// p's.
func (p *readMemo) withHistory(m *readMemo) *Request {
	r := *p.read
	if lead := len(p.read.Items) - len(p.items); lead > 0 {
		r.Items = append(slices.Clip(p.read.Items[:lead]), m.items...)
	} else {
		r.Items = m.items
	}
	r.Echoed = m.echoed
	return &r
}

// resume takes from lx.prev the elements that end within the bytes its
// body shares with this one, moves past them and returns their number.
func (lx *lexReader) resume(h *histState) int {
	start := lx.d.Offset()
	lx.memo.start = start
	p := lx.prev
	if p == nil || p.start != start || len(p.marks) == 0 {
		return 0
	}
	k := sort.Search(len(p.marks), func(i int) bool { return p.marks[i].end > lx.shared })
	if k == 0 {
		return 0
	}
	m := p.marks[k-1]
	if m.items > 0 {
		h.items = append(make([]rollout.Message, 0, m.items+16), p.items[:m.items]...)
	}
	h.echoed = slices.Clone(m.echoed)
	h.inRun = m.inRun
	lx.d.Seek(m.end)
	lx.memo.marks = append(lx.memo.marks, p.marks[:k]...)
	lx.memo.resumed = k
	return k
}

// prefixLen is the length of the longest common prefix of a and b.
func prefixLen(a, b []byte) int {
	n := min(len(a), len(b))
	const chunk = 4 << 10
	i := 0
	for i+chunk <= n && bytes.Equal(a[i:i+chunk], b[i:i+chunk]) {
		i += chunk
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// memoBytes bounds the bodies the memos of all sessions hold.
const memoBytes = 256 << 20

// memos keeps the last memo of each session, the least recently used
// dropped past memoBytes. Safe for concurrent use.
type memos struct {
	mu    sync.Mutex
	limit int // memoBytes
	bytes int
	byKey map[string]*list.Element
	lru   list.List // of *memoEntry, front: most recently used
}

type memoEntry struct {
	key  string
	memo *readMemo
}

func newMemos() *memos { return &memos{limit: memoBytes, byKey: map[string]*list.Element{}} }

// get is the memo kept under key, held (drop it when done), nil for
// none.
func (ms *memos) get(key string) *readMemo {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	e, ok := ms.byKey[key]
	if !ok {
		return nil
	}
	ms.lru.MoveToFront(e)
	return e.Value.(*memoEntry).memo.hold()
}

// put keeps m under key in place of the one kept before; m's first
// holder is the memos.
func (ms *memos) put(key string, m *readMemo) {
	var dropped []*readMemo
	ms.mu.Lock()
	if e, ok := ms.byKey[key]; ok {
		dropped = append(dropped, ms.remove(e))
	}
	m.refs.Add(1)
	ms.byKey[key] = ms.lru.PushFront(&memoEntry{key: key, memo: m})
	ms.bytes += len(m.body)
	for ms.bytes > ms.limit && ms.lru.Len() > 1 {
		dropped = append(dropped, ms.remove(ms.lru.Back()))
	}
	ms.mu.Unlock()
	for _, old := range dropped {
		old.drop()
	}
}

// remove takes e out of the memos and returns its memo.
func (ms *memos) remove(e *list.Element) *readMemo {
	me := e.Value.(*memoEntry)
	ms.lru.Remove(e)
	delete(ms.byKey, me.key)
	ms.bytes -= len(me.memo.body)
	return me.memo
}

// memoMin is the smallest body whose memo is kept: a shorter one reads
// in less time than the memo saves.
const memoMin = 16 << 10

// memoSeed hashes the opening of a body whose session no header names.
var memoSeed = maphash.MakeSeed()

// memoKey is the key of a request's memo: its codec and the session a
// header names, or else the body's first 4 KiB (a client that names no
// session gets the memo of its last body with the same opening). "" for
// a body too small to keep one of.
func memoKey(codec Codec, h http.Header, body []byte) string {
	if len(body) < memoMin {
		return ""
	}
	if name, how := explicitID(h, &Request{}); how == "header" {
		return codec.Name() + "\x00h\x00" + childKey(h, name)
	}
	sum := maphash.Bytes(memoSeed, body[:4<<10])
	return codec.Name() + "\x00b\x00" + string(appendUint64(nil, sum))
}

func appendUint64(b []byte, v uint64) []byte {
	for i := range 8 {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

// readRequest reads body as codec's request, and its prefix hashes,
// against the memo of its session, and keeps the memo it leaves. free,
// when set, takes body back once nothing holds it: at once when no memo
// keeps it.
func (g *Guard) readRequest(codec Codec, h http.Header, body []byte, free func([]byte)) (*Request, []uint64, error) {
	mr, ok := codec.(memoReader)
	key := memoKey(codec, h, body)
	if !ok || key == "" {
		r, err := codec.Request(body)
		if free != nil {
			free(body)
		}
		if err != nil {
			return nil, nil, err
		}
		return r, prefixHashes(r.Items), nil
	}
	prev := g.memos.get(key)
	defer prev.drop()
	r, m, err := mr.read(body, prev)
	if m == nil && free != nil {
		free(body)
	}
	if err != nil {
		return nil, nil, err
	}
	var hashes []uint64
	if prev != nil {
		hashes = prefixHashesFrom(prev.read.Items, prev.hashes, r.Items)
	} else {
		hashes = prefixHashes(r.Items)
	}
	if m != nil {
		m.hashes, m.free = hashes, free
		g.memos.put(key, m)
	}
	return r, hashes, nil
}

// bodyClasses are the capacities of the pooled body buffers: powers of
// two from 16 KiB to 16 MiB.
const (
	bodyClassMin = 14
	bodyClassMax = 24
)

// bodyBufs keeps, by capacity, the buffers of the request copies read
// alongside: a buffer made for each body was zeroed, and collected, each
// time (a megabyte at each call of a long session).
var bodyBufs [bodyClassMax - bodyClassMin + 1]sync.Pool

// bodyClass is the class of a buffer for n bytes, -1 for none.
func bodyClass(n int64) int {
	c := max(bits.Len64(uint64(max(n, 1)-1)), bodyClassMin)
	if c > bodyClassMax {
		return -1
	}
	return c - bodyClassMin
}

// bodyBuf is an empty buffer for n bytes.
func bodyBuf(n int64) []byte {
	c := bodyClass(n)
	if c < 0 {
		return make([]byte, 0, n)
	}
	if b, ok := bodyBufs[c].Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, 1<<(c+bodyClassMin))
}

// freeBody takes back a buffer bodyBuf made.
func freeBody(b []byte) {
	if c := bodyClass(int64(cap(b))); c >= 0 && cap(b) == 1<<(c+bodyClassMin) {
		bodyBufs[c].Put(&b)
	}
}

// memoReader is a codec whose request reader keeps memos.
type memoReader interface {
	// read reads body, against prev when not nil; the memo is nil when
	// the body was read with encoding/json.
	read(body []byte, prev *readMemo) (*Request, *readMemo, error)
}
