package tokenizer

import "math"

// noRank is the rank of a pair that has no merge.
const noRank = math.MaxUint32

// heapWords is the symbol count above which merge switches from scanning
// the pair ranks (quadratic, fast for short words) to a priority queue
// (n log n, for long runs such as CJK sentences or repeated characters).
const heapWords = 96

// scratch holds the buffers of one BPE run; each word cache has one.
type scratch struct {
	syms  []int32  // current symbols (token ids)
	ranks []uint32 // rank of the pair (syms[i], syms[i+1])
	prev  []int32  // linked list over symbol positions (heap version)
	next  []int32
	heap  []uint64 // rank<<32 | position, a binary min-heap
}

// merged returns the token the merge of the given rank makes. Vocabularies
// that number merged tokens in merge order (Qwen's: rank + 256) need no
// load from mergeTo, which is a cache miss as often as not.
func (t *Tokenizer) merged(rank uint32) int32 {
	if t.mergeBase >= 0 {
		return int32(rank) + t.mergeBase
	}
	return t.mergeTo[rank]
}

// rank returns the rank of merging a and b, or noRank.
func (t *Tokenizer) rank(a, b int32) uint32 { return t.merges.rank(pairKey(a, b)) }

// bpe tokenizes one pre-token: its bytes become byte-level symbols, which are
// merged. The result lives in sc and is valid until sc is reused.
func (t *Tokenizer) bpe(sc *scratch, w string) []int32 {
	syms := sc.syms[:0]
	for i := 0; i < len(w); i++ {
		syms = append(syms, t.byteIDs[w[i]])
	}
	sc.syms = syms
	if len(syms) > heapWords {
		return t.mergeHeap(sc, syms)
	}
	return t.mergeScan(sc, syms, w)
}

// grow returns s resized to n, reallocating only when its capacity is short.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, 2*n)
	}
	return s[:n]
}

// mergeScan repeatedly merges the lowest-ranked adjacent pair, the leftmost
// on ties, keeping the rank of every pair so that a merge costs two lookups.
// syms are the byte symbols of w, whose pairs' ranks come from the byte-pair
// table.
func (t *Tokenizer) mergeScan(sc *scratch, syms []int32, w string) []int32 {
	n := len(syms)
	sc.ranks = grow(sc.ranks, n)
	ranks := sc.ranks
	for i := 0; i+1 < n; i++ {
		ranks[i] = t.bytePairs[int(w[i])<<8|int(w[i+1])]
	}
	for n > 1 {
		pos, best := -1, uint32(noRank)
		for i, r := range ranks[:n-1] {
			if r < best {
				pos, best = i, r
			}
		}
		if pos < 0 {
			break
		}
		syms[pos] = t.merged(best)
		copy(syms[pos+1:], syms[pos+2:n])
		if pos+2 < n {
			copy(ranks[pos+1:], ranks[pos+2:n-1])
		}
		n--
		if pos > 0 {
			ranks[pos-1] = t.rank(syms[pos-1], syms[pos])
		}
		if pos+1 < n {
			ranks[pos] = t.rank(syms[pos], syms[pos+1])
		}
	}
	return syms[:n]
}

// mergeHeap does what mergeScan does with a priority queue of (rank,
// position), as Hugging Face's Word::merge_all does. An entry is stale when
// its left symbol is gone or the pair there now has another rank; ranks
// identify pairs, so a live entry with the same rank is the same pair.
func (t *Tokenizer) mergeHeap(sc *scratch, syms []int32) []int32 {
	n := len(syms)
	sc.prev, sc.next = grow(sc.prev, n), grow(sc.next, n)
	prev, next := sc.prev, sc.next
	h := heap(sc.heap[:0])
	for i := range n {
		prev[i], next[i] = int32(i-1), int32(i+1)
		if i+1 < n {
			if r := t.rank(syms[i], syms[i+1]); r != noRank {
				h.push(uint64(r)<<32 | uint64(i))
			}
		}
	}
	next[n-1] = -1
	for len(h) > 0 {
		top := h.pop()
		rank, pos := uint32(top>>32), int32(uint32(top))
		nx := next[pos]
		if syms[pos] < 0 || nx < 0 {
			continue
		}
		if t.rank(syms[pos], syms[nx]) != rank {
			continue
		}
		id := t.merged(rank)
		syms[pos], syms[nx] = id, -1
		next[pos] = next[nx]
		if q := next[pos]; q >= 0 {
			prev[q] = pos
			if r := t.rank(id, syms[q]); r != noRank {
				h.push(uint64(r)<<32 | uint64(pos))
			}
		}
		if p := prev[pos]; p >= 0 {
			if r := t.rank(syms[p], id); r != noRank {
				h.push(uint64(r)<<32 | uint64(p))
			}
		}
	}
	sc.heap = h[:0]
	out := syms[:0]
	for i := int32(0); i >= 0; i = next[i] {
		out = append(out, syms[i])
	}
	return out
}

// heap is a binary min-heap of uint64.
type heap []uint64

func (h *heap) push(v uint64) {
	s := append(*h, v)
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p] <= s[i] {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
	*h = s
}

func (h *heap) pop() uint64 {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		m, l, r := i, 2*i+1, 2*i+2
		if l < len(s) && s[l] < s[m] {
			m = l
		}
		if r < len(s) && s[r] < s[m] {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
