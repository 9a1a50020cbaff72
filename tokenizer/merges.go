package tokenizer

import "math/bits"

// Merge table limits: a slot packs a pair of ids of idBits bits each and a
// rank of rankBits bits into one uint64.
const (
	idBits    = 20
	rankBits  = 64 - 2*idBits
	maxPairID = 1<<idBits - 2 // the all-ones id is the empty slot's
	maxRank   = 1<<rankBits - 1
)

// mergeTable maps a pair of token ids to the rank of its merge; mergeTo
// (in Tokenizer) gives the token a rank makes. It is an open-addressing
// hash table with linear probing over a power-of-two array of packed
// uint64s kept at most two thirds full: a lookup is one multiply and,
// almost always, one cache line, and Qwen's 151k merges take 2 MB, where a
// Go map of the same pairs takes a hash call, a group probe and four times
// the memory. It is read-only once built, so safe for concurrent reads.
//
// In front of it, a one-hash Bloom filter of 2^20 bits (128 KB, which stays
// in a core's L2 cache) answers most lookups of pairs that have no merge —
// three in four on text of random scripts — without touching the table; a
// pair it lets through is looked up as before, so no answer changes.
type mergeTable struct {
	slots  []uint64 // pairKey<<rankBits | rank, or emptySlot
	shift  uint8    // 64 − log2(len(slots))
	filter []uint64 // bit filterBit(key) is set for every key in slots
}

// filterBits is log2 of the filter's size in bits.
const filterBits = 20

// filterBit returns key's bit in the filter, from a hash independent of
// home's.
func filterBit(key uint64) uint64 { return (key * 0xD6E8FEB86659FD93) >> (64 - filterBits) }

// emptySlot marks a free slot: it holds the pair (2^20−1, 2^20−1), which
// no vocabulary this package accepts has.
const emptySlot = ^uint64(0)

// pairKey packs a pair of ids, each at most maxPairID.
func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<idBits | uint64(uint32(b)) }

// newMergeTable returns a table sized for n pairs.
func newMergeTable(n int) mergeTable {
	size := 1 << bits.Len(uint(n+n/2)|7)
	t := mergeTable{slots: make([]uint64, size), shift: uint8(64 - bits.TrailingZeros(uint(size))),
		filter: make([]uint64, 1<<filterBits/64)}
	for i := range t.slots {
		t.slots[i] = emptySlot
	}
	return t
}

// home returns the first slot to probe for key (Fibonacci hashing).
func (t *mergeTable) home(key uint64) uint64 { return (key * 0x9E3779B97F4A7C15) >> t.shift }

// put sets the rank of the pair key, replacing an earlier one.
func (t *mergeTable) put(key uint64, rank uint32) {
	mask := uint64(len(t.slots) - 1)
	for i := t.home(key); ; i = (i + 1) & mask {
		if s := t.slots[i]; s == emptySlot || s>>rankBits == key {
			t.slots[i] = key<<rankBits | uint64(rank)
			b := filterBit(key)
			t.filter[b/64] |= 1 << (b % 64)
			return
		}
	}
}

// rank returns the rank of the pair key, or noRank.
func (t *mergeTable) rank(key uint64) uint32 {
	if b := filterBit(key); t.filter[b/64]&(1<<(b%64)) == 0 {
		return noRank
	}
	mask := uint64(len(t.slots) - 1)
	for i := t.home(key); ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == emptySlot {
			return noRank
		}
		if s>>rankBits == key {
			return uint32(s & maxRank)
		}
	}
}
