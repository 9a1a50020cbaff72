package tokenizer

import (
	"hash/maphash"
	"strings"
	"sync"
)

// Cache bounds: pre-tokens longer than maxCachedWord bytes are not cached
// (they rarely repeat), and each shard holds at most shardEntries words,
// about 64k words and a few MB in all.
const (
	cacheShards   = 32
	shardEntries  = 2048
	maxCachedWord = 128
)

// wordCache maps pre-tokens to their BPE ids. It is sharded to keep lock
// contention low and bounded by clearing a full shard, which keeps the cost
// of eviction at zero bookkeeping per hit. Safe for concurrent use.
type wordCache struct {
	seed   maphash.Seed
	shards [cacheShards]cacheShard
}

type cacheShard struct {
	mu sync.RWMutex
	m  map[string][]int32
	_  [40]byte // keep shards on separate cache lines
}

func newWordCache() *wordCache {
	c := &wordCache{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].m = make(map[string][]int32)
	}
	return c
}

func (c *wordCache) shard(w string) *cacheShard {
	return &c.shards[maphash.String(c.seed, w)%cacheShards]
}

// get returns the cached ids of w; the caller must not modify them.
func (c *wordCache) get(w string) ([]int32, bool) {
	s := c.shard(w)
	s.mu.RLock()
	ids, ok := s.m[w]
	s.mu.RUnlock()
	return ids, ok
}

// put caches a copy of w (so the cache never pins a caller's long text) with
// ids, which must not be modified afterwards.
func (c *wordCache) put(w string, ids []int32) {
	s := c.shard(w)
	s.mu.Lock()
	if len(s.m) >= shardEntries {
		clear(s.m)
	}
	s.m[strings.Clone(w)] = ids
	s.mu.Unlock()
}

// reset empties the cache.
func (c *wordCache) reset() {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		clear(s.m)
		s.mu.Unlock()
	}
}
