package tokenizer

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestWordCache fills one cache far past its bound with words of every
// length from 2 to maxCachedWord bytes (zero bytes and shared prefixes
// among them) and id lists of 1 to 8 ids, checking that each word is found
// right after it is put, that a word is never found with another's ids, and
// that the shards stay bounded; and that the front table holds each short
// word of few ids right after it is put, and never a word with another's
// ids.
func TestWordCache(t *testing.T) {
	c := newCacheSet(1).acquire()
	defer c.release()
	word := func(i int) string {
		w := fmt.Sprintf("%d\x00", i) + strings.Repeat("x", maxCachedWord)
		return w[:2+i%(maxCachedWord-1)]
	}
	idsOf := func(i int) []int32 {
		ids := make([]int32, 1+i%8)
		for j := range ids {
			ids[j] = int32(i*8 + j)
		}
		return ids
	}
	const words = 5 * cacheShards * shardEntries
	seen := map[string]int{}
	for i := range words {
		w := word(i)
		if j, ok := seen[w]; ok && j != i {
			continue // a shorter prefix made two words equal
		}
		seen[w] = i
		k := c.key(w)
		s, sl := c.find(k, w)
		if sl.textLen != 0 {
			t.Fatalf("word %q found before it was put", w)
		}
		c.promote(k, s.put(sl, k, w, idsOf(i)))
		s, sl = c.find(k, w)
		var got []int
		if sl.textLen == 0 || s.get(sl, &got) != len(idsOf(i)) {
			t.Fatalf("word %q not found right after it was put", w)
		}
		if want := idsOf(i); !slices.Equal(got, toInts(want)) {
			t.Fatalf("word %q: ids %v, want %v", w, got, want)
		}
		f, ok := c.fronted(k, w)
		if short := len(w) <= 16 && len(idsOf(i)) <= 3; ok != short {
			t.Fatalf("word %q with %d ids: in the front table %v, want %v", w, len(idsOf(i)), ok, short)
		}
		if ok && !slices.Equal(f.ids[:f.idsLen], idsOf(i)) {
			t.Fatalf("word %q: front ids %v, want %v", w, f.ids[:f.idsLen], idsOf(i))
		}
	}
	for w, i := range seen {
		if f, ok := c.fronted(c.key(w), w); ok && !slices.Equal(f.ids[:f.idsLen], idsOf(i)) {
			t.Fatalf("word %q: front ids %v, want %v", w, f.ids[:f.idsLen], idsOf(i))
		}
	}
	found := 0
	for w, i := range seen {
		k := c.key(w)
		s, sl := c.find(k, w)
		if sl.textLen == 0 {
			continue
		}
		found++
		var got []int
		s.get(sl, &got)
		if want := idsOf(i); !slices.Equal(got, toInts(want)) {
			t.Fatalf("word %q: ids %v, want %v", w, got, want)
		}
	}
	if found == 0 || found > cacheShards*shardEntries {
		t.Errorf("%d words cached, want 1 to %d", found, cacheShards*shardEntries)
	}
	for i := range c.shards {
		if n := c.shards[i].n; n > shardEntries {
			t.Errorf("shard %d holds %d words, more than %d", i, n, shardEntries)
		}
	}
}

func toInts(ids []int32) []int {
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}

// TestNonASCIIBypass checks when words with a byte outside ASCII go
// through the cache's shards: a window of words never seen before turns
// the shards off for them, a word repeated while they are off turns them
// back on at the end of the next window, ASCII words are not counted, and
// every word gets the ids BPE gives it whichever way it goes.
func TestNonASCIIBypass(t *testing.T) {
	tk := *qwenTokenizer(t) // the shared tokenizer, with a cache of its own
	tk.caches = newCacheSet(1)
	check := func(w string) {
		t.Helper()
		var got []int
		c := tk.caches.acquire()
		tk.word(c, w, &got)
		c.release()
		var want []int
		appendIDs(&want, tk.bpe(new(scratch), w))
		if !slices.Equal(got, want) {
			t.Fatalf("word(%q) = %v, BPE gives %v", w, got, want)
		}
	}
	c := &tk.caches.caches[0]
	for i := range naWindow - 1 {
		check(fmt.Sprintf(" 字%c", 0x4E00+i))
	}
	if c.naBypass {
		t.Fatalf("bypassing after %d words, want the whole window of %d first", naWindow-1, naWindow)
	}
	check(" 字字")
	if !c.naBypass || c.naLooked != 0 {
		t.Fatalf("after %d new words: bypass %v, %d looked up in the window, want true and 0", naWindow, c.naBypass, c.naLooked)
	}
	check("ascii")
	if c.naLooked != 0 || c.naSeen != naWindow {
		t.Fatalf("an ASCII word counted: %d noted, %d seen", c.naLooked, c.naSeen)
	}
	// While bypassing, the first repeats miss the front table and go to
	// BPE; the one that is sampled goes through the shards and reaches the
	// front table, where the others find it. Every repeat is noted, so the
	// window closes at the naWindow-th with naSample misses at most.
	for i := range naWindow {
		check(" 你好")
		if !c.naBypass {
			if i != naWindow-1 {
				t.Fatalf("cache back on after %d repeats, want %d", i+1, naWindow)
			}
			return
		}
	}
	t.Fatalf("still bypassing after %d repeats of one word", naWindow)
}
