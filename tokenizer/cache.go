package tokenizer

import (
	"hash/maphash"
	"sync"
)

// Cache bounds: pre-tokens longer than maxCachedWord bytes are not cached
// (they rarely repeat), and each shard holds at most shardEntries words,
// about 64k words and a few MB in all.
const (
	cacheShards   = 32
	shardEntries  = 2048
	shardSlots    = 2 * shardEntries // a power of two: the table is at most half full
	maxCachedWord = 128
)

// wordCache maps pre-tokens to their BPE ids. It is sharded to keep lock
// contention low and bounded by clearing a full shard, which keeps the cost
// of eviction at zero bookkeeping per hit. Each shard is an open-addressing
// table over two arenas, one for the words' bytes and one for their ids, so
// a miss costs no allocation once the arenas have grown, and the hash that
// picks the shard also picks the slot. Safe for concurrent use.
type wordCache struct {
	seed   maphash.Seed
	shards [cacheShards]cacheShard
}

type cacheShard struct {
	mu    sync.RWMutex
	slots []cacheSlot
	n     int
	text  []byte  // the cached words, back to back
	ids   []int32 // their ids, back to back
	_     [40]byte
}

// cacheSlot locates one cached word; hash 0 marks a free slot.
type cacheSlot struct {
	hash    uint64
	text    uint32 // offset in text
	ids     uint32 // offset in ids
	textLen uint8
	idsLen  uint8
}

func newWordCache() *wordCache {
	c := &wordCache{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].slots = make([]cacheSlot, shardSlots)
	}
	return c
}

// hash returns w's hash, never 0.
func (c *wordCache) hash(w string) uint64 { return maphash.String(c.seed, w) | 1 }

// lookup returns the slot of w, or of the free slot where it would go.
// The caller holds s.mu.
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
	s.mu.RLock()
	sl := s.lookup(h, w)
	if sl.hash != 0 {
		ids := s.ids[sl.ids : sl.ids+uint32(sl.idsLen)]
		appendIDs(out, ids)
		n, ok = len(ids), true
	}
	s.mu.RUnlock()
	return n, ok
}

// put caches w (len(w) ≤ maxCachedWord) with ids (len(ids) ≤ len(w)),
// copying both.
func (c *wordCache) put(h uint64, w string, ids []int32) {
	s := &c.shards[h%cacheShards]
	s.mu.Lock()
	if s.n >= shardEntries {
		s.clear()
	}
	if sl := s.lookup(h, w); sl.hash == 0 {
		*sl = cacheSlot{hash: h, text: uint32(len(s.text)), ids: uint32(len(s.ids)), textLen: uint8(len(w)), idsLen: uint8(len(ids))}
		s.text = append(s.text, w...)
		s.ids = append(s.ids, ids...)
		s.n++
	}
	s.mu.Unlock()
}

// clear empties the shard, keeping its arenas' capacity. The caller holds
// s.mu for writing.
func (s *cacheShard) clear() {
	clear(s.slots)
	s.text, s.ids, s.n = s.text[:0], s.ids[:0], 0
}

// reset empties the cache.
func (c *wordCache) reset() {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		s.clear()
		s.mu.Unlock()
	}
}
