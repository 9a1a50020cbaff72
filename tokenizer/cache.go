package tokenizer

import (
	"hash/maphash"
	"math/bits"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Cache bounds: pre-tokens longer than maxCachedWord bytes are not cached
// (they rarely repeat), and each shard of a word cache holds at most
// shardEntries words: 32k words in 2 MB of slots a cache, besides the
// front table. A Tokenizer keeps at most maxCaches word caches. The size
// is measured: at 4 MB (64k words) the cache and the 2 MB merge table did
// not fit this machine's last-level cache together, and every first-seen
// word of unseen text paid for it (random Unicode ran at two thirds of its
// speed with 1 MB); at 1 MB a build, whose messages repeat words across
// trajectories, spent 5-8% more CPU on re-tokenizing evicted words. 2 MB
// builds as fast as 4 MB and reads unseen text as fast as 1 MB.
const (
	cacheShards   = 16
	shardEntries  = 2048
	shardSlots    = 2 * shardEntries // a power of two: the table is at most half full
	maxCachedWord = 128
	maxCaches     = 8
	frontBits     = 12      // the front table has 1<<frontBits slots, 128 KB
	maxKeptIDs    = 1 << 20 // Encode keeps a buffer of at most 8 MB between calls
)

// wordCache maps pre-tokens to their BPE ids and holds the scratch buffers
// of BPE runs. One Count or Encode call holds it for the whole call (its
// mutex, taken once), so a word's lookup takes no lock and no atomic
// operation. It is split into shards that are bounded by clearing a full
// one, which keeps the cost of eviction at zero bookkeeping per hit. Each
// shard is an open-addressing table of 32-byte slots: a word of at most 16
// bytes is kept in its slot, as two integers, and so are up to three ids,
// so that looking up a short word of few tokens — most words — reads one
// cache line and compares two integers; longer words and id lists go to
// two arenas. In front of the shards, a direct-mapped table of 128 KB,
// small enough to stay in a core's L2 cache, holds the short words last
// found or put, so the frequent words of warm text are found there. The
// tables are allocated on first use.
type wordCache struct {
	mu     sync.Mutex
	seed   uint64
	front  []cacheSlot // 1<<frontBits slots, at hash>>(64-frontBits)
	shards []cacheShard
	sc     scratch
	ids    []int // Encode's ids before they are copied out
	// Whether words with a byte outside ASCII go through the shards
	// (sampleNonASCII, noteNonASCII).
	naBypass        bool
	naSeen          uint32   // such words seen
	naLooked, naHit uint16   // such words looked up in this window, and found
	_               [64]byte // keep two caches' mutexes off one cache line
}

type cacheShard struct {
	slots []cacheSlot
	n     int
	text  []byte  // the cached words longer than 16 bytes, back to back
	ids   []int32 // id lists longer than 3, back to back
}

// cacheSlot holds one cached word; textLen 0 marks a free slot (a cached
// word has two bytes or more).
type cacheSlot struct {
	k0, k1  uint64 // the word, zero-padded, when it has at most 16 bytes; else its hash and offset in text
	textLen uint8
	idsLen  uint8
	_       [2]byte
	ids     [3]int32 // the ids, or ids[0] is their offset in ids when there are more than 3
}

// wordKey is what a lookup needs of a word: its bytes packed (short words)
// and its hash.
type wordKey struct {
	k0, k1, hash uint64
}

// nonASCII reports whether w, whose key k is, has a byte outside ASCII. A
// word of at most 16 bytes is in k's lanes (each byte of k0 and k1 is one
// of w's bytes or an OR of some of them).
func (k wordKey) nonASCII(w string) bool {
	if len(w) <= 16 {
		return (k.k0|k.k1)&highBits != 0
	}
	return !isASCII(w)
}

// isASCII reports whether every byte of s is ASCII.
func isASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if le64(s[i:])&highBits != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Words with a byte outside ASCII go through the cache's shards only while
// such words are found in the cache often enough. Text in most scripts
// repeats its words as English does, but text that does not (rare
// characters, long runs of CJK without spaces) misses on almost every word
// and pays a probe and an insertion for nothing: on tokbench's random
// Unicode that was a fifth of the time. Every such word is looked up in
// the front table; every naWindow of them, the cache decides again from
// how many were found (in the front table, or in the shards when they
// were looked up there). While it bypasses the shards, one such word in
// naSample still goes through them, so that words that repeat reach the
// front table and turn the shards back on. The ids are the same either
// way.
const (
	naWindow  = 256
	naMinHits = naWindow / 8
	naSample  = 16
)

// sampleNonASCII reports whether the word with a byte outside ASCII about
// to be encoded, not in the front table, goes through the shards.
func (c *wordCache) sampleNonASCII() bool {
	c.naSeen++
	return !c.naBypass || c.naSeen%naSample == 0
}

// noteNonASCII records whether such a word was found in the cache.
func (c *wordCache) noteNonASCII(hit bool) {
	c.naLooked++
	if hit {
		c.naHit++
	}
	if c.naLooked == naWindow {
		c.naBypass = c.naHit < naMinHits
		c.naLooked, c.naHit = 0, 0
	}
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
	seed := maphash.Comparable(maphash.MakeSeed(), 0)
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
		c.front = make([]cacheSlot, 1<<frontBits)
		c.shards = make([]cacheShard, cacheShards)
		for i := range c.shards {
			c.shards[i].slots = make([]cacheSlot, shardSlots)
		}
	}
	return c
}

// key returns w's key. A word of at most 16 bytes is read as two
// little-endian integers (zero past its end) and hashed with one
// multiplication; a longer one with maphash.
func (c *wordCache) key(w string) wordKey {
	var k0, k1 uint64
	switch n := len(w); {
	case n > 16:
		h := maphash.String(longSeed, w) ^ c.seed
		return wordKey{k0: h, hash: h}
	case n > 8:
		k0 = le64(w)
		k1 = le64(w[n-8:]) >> (8 * (16 - n))
	case n >= 4:
		k0 = uint64(le32(w)) | uint64(le32(w[n-4:]))<<(8*(n-4))
	default:
		for i := n - 1; i >= 0; i-- {
			k0 = k0<<8 | uint64(w[i])
		}
	}
	hi, lo := bits.Mul64(k0^c.seed, k1^uint64(len(w))^0x9E3779B97F4A7C15)
	return wordKey{k0: k0, k1: k1, hash: hi ^ lo}
}

// longSeed hashes words longer than 16 bytes; each cache's seed is mixed in.
var longSeed = maphash.MakeSeed()

func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func le32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// fronted returns the front slot of w, when it holds w.
func (c *wordCache) fronted(k wordKey, w string) (*cacheSlot, bool) {
	f := &c.front[k.hash>>(64-frontBits)]
	return f, len(w) <= 16 && f.textLen == uint8(len(w)) && f.k0 == k.k0 && f.k1 == k.k1
}

// promote copies sl, a slot of the shards, into the front table when the
// word and its ids fit in it.
func (c *wordCache) promote(k wordKey, sl *cacheSlot) {
	if sl.textLen <= 16 && int(sl.idsLen) <= len(sl.ids) {
		c.front[k.hash>>(64-frontBits)] = *sl
	}
}

// find returns w's shard and its slot there, or the free slot where it
// would go.
func (c *wordCache) find(k wordKey, w string) (*cacheShard, *cacheSlot) {
	s := &c.shards[k.hash%cacheShards]
	return s, s.lookup(k, w)
}

func (s *cacheShard) lookup(k wordKey, w string) *cacheSlot {
	n := uint8(len(w))
	for i := (k.hash >> 5) & (shardSlots - 1); ; i = (i + 1) & (shardSlots - 1) {
		sl := &s.slots[i]
		if sl.textLen == 0 {
			return sl
		}
		if sl.textLen == n && sl.k0 == k.k0 {
			if n <= 16 {
				if sl.k1 == k.k1 {
					return sl
				}
			} else if string(s.text[sl.k1:sl.k1+uint64(n)]) == w {
				return sl
			}
		}
	}
}

// get appends the ids of the cached word in sl to *out (unless out is nil)
// and returns how many there are.
func (s *cacheShard) get(sl *cacheSlot, out *[]int) int {
	n := int(sl.idsLen)
	if out != nil {
		if n <= len(sl.ids) {
			appendIDs(out, sl.ids[:n])
		} else {
			appendIDs(out, s.ids[sl.ids[0]:int(sl.ids[0])+n])
		}
	}
	return n
}

// put caches w (2 ≤ len(w) ≤ maxCachedWord) with ids (len(ids) ≤ len(w)),
// copying both, in sl, the free slot find returned for it, and returns the
// slot it took.
func (s *cacheShard) put(sl *cacheSlot, k wordKey, w string, ids []int32) *cacheSlot {
	if s.n >= shardEntries {
		s.clear()
		sl = s.lookup(k, w)
	}
	*sl = cacheSlot{k0: k.k0, k1: k.k1, textLen: uint8(len(w)), idsLen: uint8(len(ids))}
	if len(w) > 16 {
		sl.k1 = uint64(len(s.text))
		s.text = append(s.text, w...)
	}
	if len(ids) <= len(sl.ids) {
		copy(sl.ids[:], ids)
	} else {
		sl.ids[0] = int32(len(s.ids))
		s.ids = append(s.ids, ids...)
	}
	s.n++
	return sl
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
		clear(c.front)
		for j := range c.shards {
			c.shards[j].clear()
		}
		c.mu.Unlock()
	}
}
