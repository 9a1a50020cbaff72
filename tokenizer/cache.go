package tokenizer

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// Cache bounds: pre-tokens longer than maxCachedWord bytes are not cached
// (they rarely repeat), and each shard of a word cache holds at most
// shardEntries words, about 64k words and a few MB a cache. A Tokenizer
// keeps at most maxCaches word caches.
const (
	cacheShards   = 32
	shardEntries  = 2048
	shardSlots    = 2 * shardEntries // a power of two: the table is at most half full
	maxCachedWord = 128
	maxCaches     = 8
)

// wordCache maps pre-tokens to their BPE ids and holds the scratch buffers
// of BPE runs. One Count or Encode call holds it for the whole call (its
// mutex, taken once), so a word's lookup takes no lock and no atomic
// operation. It is split into shards that are bounded by clearing a full
// one, which keeps the cost of eviction at zero bookkeeping per hit. Each
// shard is an open-addressing table over two arenas, one for the words'
// bytes and one for their ids, so a miss costs no allocation once the
// arenas have grown. The shards are allocated on first use.
type wordCache struct {
	mu     sync.Mutex
	seed   maphash.Seed
	shards []cacheShard
	sc     scratch
	_      [64]byte // keep two caches' mutexes off one cache line
}

type cacheShard struct {
	slots []cacheSlot
	n     int
	text  []byte  // the cached words, back to back
	ids   []int32 // their ids, back to back
}

// cacheSlot locates one cached word; hash 0 marks a free slot.
type cacheSlot struct {
	hash    uint64
	text    uint32 // offset in text
	ids     uint32 // offset in ids
	textLen uint8
	idsLen  uint8
}

// cacheSet is a Tokenizer's word caches: a call takes the first one free,
// or waits for one when every one is busy. Safe for concurrent use.
type cacheSet struct {
	caches []wordCache
	next   atomic.Uint32 // which cache to wait for when all are busy
}

// newCacheSet returns a set of n (1 ≤ n ≤ maxCaches) empty caches.
func newCacheSet(n int) *cacheSet {
	n = min(max(n, 1), maxCaches)
	s := &cacheSet{caches: make([]wordCache, n)}
	seed := maphash.MakeSeed()
	for i := range s.caches {
		s.caches[i].seed = seed
	}
	return s
}

// acquire locks a cache for the caller, who releases it with release.
func (s *cacheSet) acquire() *wordCache {
	for i := range s.caches {
		if c := &s.caches[i]; c.mu.TryLock() {
			return c.ready()
		}
	}
	c := &s.caches[s.next.Add(1)%uint32(len(s.caches))]
	c.mu.Lock()
	return c.ready()
}

// release unlocks a cache acquire returned.
func (c *wordCache) release() { c.mu.Unlock() }

// ready allocates c's shards on first use. The caller holds c.mu.
func (c *wordCache) ready() *wordCache {
	if c.shards == nil {
		c.shards = make([]cacheShard, cacheShards)
		for i := range c.shards {
			c.shards[i].slots = make([]cacheSlot, shardSlots)
		}
	}
	return c
}

// hash returns w's hash, never 0.
func (c *wordCache) hash(w string) uint64 { return maphash.String(c.seed, w) | 1 }

// lookup returns the slot of w, or of the free slot where it would go.
func (s *cacheShard) lookup(h uint64, w string) *cacheSlot {
	for i := (h >> 5) & (shardSlots - 1); ; i = (i + 1) & (shardSlots - 1) {
		sl := &s.slots[i]
		if sl.hash == 0 || sl.hash == h && int(sl.textLen) == len(w) && string(s.text[sl.text:sl.text+uint32(sl.textLen)]) == w {
			return sl
		}
	}
}

// get appends the cached ids of w to *out (unless out is nil) and returns
// how many there are; ok is false when w is not cached.
func (c *wordCache) get(h uint64, w string, out *[]int) (n int, ok bool) {
	s := &c.shards[h%cacheShards]
	sl := s.lookup(h, w)
	if sl.hash == 0 {
		return 0, false
	}
	ids := s.ids[sl.ids : sl.ids+uint32(sl.idsLen)]
	appendIDs(out, ids)
	return len(ids), true
}

// put caches w (len(w) ≤ maxCachedWord) with ids (len(ids) ≤ len(w)),
// copying both.
func (c *wordCache) put(h uint64, w string, ids []int32) {
	s := &c.shards[h%cacheShards]
	if s.n >= shardEntries {
		s.clear()
	}
	if sl := s.lookup(h, w); sl.hash == 0 {
		*sl = cacheSlot{hash: h, text: uint32(len(s.text)), ids: uint32(len(s.ids)), textLen: uint8(len(w)), idsLen: uint8(len(ids))}
		s.text = append(s.text, w...)
		s.ids = append(s.ids, ids...)
		s.n++
	}
}

// clear empties the shard, keeping its arenas' capacity.
func (s *cacheShard) clear() {
	clear(s.slots)
	s.text, s.ids, s.n = s.text[:0], s.ids[:0], 0
}

// reset empties every cache.
func (s *cacheSet) reset() {
	for i := range s.caches {
		c := &s.caches[i]
		c.mu.Lock()
		for j := range c.shards {
			c.shards[j].clear()
		}
		c.mu.Unlock()
	}
}
