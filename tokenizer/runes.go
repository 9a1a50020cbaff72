package tokenizer

import (
	"unicode/utf8"
)

// Words of characters that never merge across their edges.
//
// A word's BPE splits wherever no merge can cross: if A's tokens at its
// right end, over the whole of A's own BPE run, never form a merge rule with
// B's tokens at its left end over B's run, then no step of the run on AB can
// join the two sides (the pair across the cut never has a rule), each side
// takes its own steps, in its own order, and BPE(AB) = BPE(A) BPE(B). So a
// word of characters that are each cut off from their neighbours is the
// concatenation of its characters' own tokens.
//
// runeTable holds, for every non-ASCII character of the Basic Multilingual
// Plane, the tokens of its UTF-8 bytes alone and of a space before it (the
// Qwen pattern's letter words start with one), and whether its edges are
// cut off from any character's: isolated on the right when no token ever at
// its right end has a merge with a token ever at the left end of any
// character, and on the left likewise. A boundary is a cut when the
// character before it is isolated on the right or the one after it on the
// left. Rare CJK characters, Yi syllables and most of the other scripts'
// rare letters are isolated; common ones, which form words as tokens, are
// not, and their words take the ordinary BPE.
type runeTable struct {
	alone  [1 << 16]runeEntry // the character's bytes
	spaced [1 << 16]runeEntry // a space and the character's bytes
}

// runeEntry packs up to three token ids of runeIDBits bits each, their
// count and the entry's flags.
type runeEntry uint64

const (
	runeIDBits = 18
	runeIDMask = 1<<runeIDBits - 1
	runeCount  = 3 * runeIDBits // two bits: how many ids, 1 to 3
	runeRight  = 1 << (runeCount + 2)
	runeLeft   = 1 << (runeCount + 3)
	runeValid  = 1 << (runeCount + 4)
)

func (e runeEntry) count() int { return int(e>>runeCount) & 3 }

// edgeRun is the BPE run of a piece of at most four bytes: its final
// tokens and the tokens seen at its left and right ends along the way
// (each merge at an end adds one).
type edgeRun struct {
	toks, left, right [4]int32
	nt, nl, nr        int
}

// runEdges runs BPE on b (one to four bytes) the plain way, recording the
// tokens at each end after every merge.
func (t *Tokenizer) runEdges(b []byte) edgeRun {
	var r edgeRun
	syms := r.toks[:len(b)]
	for i, c := range b {
		syms[i] = t.byteIDs[c]
	}
	r.left[0], r.right[0], r.nl, r.nr = syms[0], syms[len(syms)-1], 1, 1
	for {
		pos, best := -1, uint32(noRank)
		for i := 0; i+1 < len(syms); i++ {
			if rk := t.rank(syms[i], syms[i+1]); rk < best {
				pos, best = i, rk
			}
		}
		if pos < 0 {
			break
		}
		syms[pos] = t.merged(best)
		syms = append(syms[:pos+1], syms[pos+2:]...)
		if pos == 0 {
			r.left[r.nl], r.nl = syms[0], r.nl+1
		}
		if pos == len(syms)-1 {
			r.right[r.nr], r.nr = syms[pos], r.nr+1
		}
	}
	r.nt = len(syms)
	return r
}

// buildRunes fills t.runes from the merges; it leaves it nil when a token
// id does not fit runeIDBits.
func (t *Tokenizer) buildRunes() {
	maxID := t.largestID()
	if maxID > runeIDMask {
		return
	}
	alone, spaced := t.runAll()
	joinsRight, joinsLeft := t.joins(alone, spaced, maxID)
	none := func(ids []int32, joins []bool) bool {
		for _, id := range ids {
			if joins[id] {
				return false
			}
		}
		return true
	}
	t.runes = new(runeTable)
	for r := rune(utf8.RuneSelf); r < 1<<16; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		a, sp := &alone[r], &spaced[r]
		t.runes.alone[r] = pack(a, none(a.right[:a.nr], joinsRight), none(a.left[:a.nl], joinsLeft))
		t.runes.spaced[r] = pack(sp, none(sp.right[:sp.nr], joinsRight), false)
	}
}

// largestID is the largest token id of the byte tokens and the merges.
func (t *Tokenizer) largestID() int32 {
	maxID := int32(0)
	for _, id := range t.byteIDs {
		maxID = max(maxID, id)
	}
	for _, s := range t.merges.slots {
		if s != emptySlot {
			key := s >> rankBits
			maxID = max(maxID, int32(key>>idBits), int32(key&(1<<idBits-1)))
		}
	}
	for r := range t.mergeTo {
		maxID = max(maxID, t.merged(uint32(r)))
	}
	return maxID
}

// runAll is the BPE run of every non-ASCII character of the Basic
// Multilingual Plane, alone and after a space.
func (t *Tokenizer) runAll() (alone, spaced *[1 << 16]edgeRun) {
	alone, spaced = new([1 << 16]edgeRun), new([1 << 16]edgeRun)
	var buf [4]byte
	for r := rune(utf8.RuneSelf); r < 1<<16; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		buf[0] = ' '
		n := utf8.EncodeRune(buf[1:], r)
		alone[r] = t.runEdges(buf[1 : 1+n])
		spaced[r] = t.runEdges(buf[:1+n])
	}
	return alone, spaced
}

// joins marks the tokens that have a merge rule across a cut: joinsRight
// the tokens ever at a left part's right end (a character's, alone or
// spaced) that merge with a token ever at a right part's left end, and
// joinsLeft those left ends that merge with such a right end.
func (t *Tokenizer) joins(alone, spaced *[1 << 16]edgeRun, maxID int32) (joinsRight, joinsLeft []bool) {
	rightEnds, leftEnds := make([]bool, maxID+1), make([]bool, maxID+1)
	for r := range alone {
		for _, id := range alone[r].right[:alone[r].nr] {
			rightEnds[id] = true
		}
		for _, id := range spaced[r].right[:spaced[r].nr] {
			rightEnds[id] = true
		}
		for _, id := range alone[r].left[:alone[r].nl] {
			leftEnds[id] = true
		}
	}
	joinsRight, joinsLeft = make([]bool, maxID+1), make([]bool, maxID+1)
	for _, s := range t.merges.slots {
		if s != emptySlot {
			key := s >> rankBits
			a, b := key>>idBits, key&(1<<idBits-1)
			joinsRight[a] = joinsRight[a] || leftEnds[b]
			joinsLeft[b] = joinsLeft[b] || rightEnds[a]
		}
	}
	return joinsRight, joinsLeft
}

// pack makes the entry of a run; a run of more than three tokens gets an
// invalid one.
func pack(e *edgeRun, right, left bool) runeEntry {
	if e.nt > 3 {
		return 0
	}
	var v runeEntry
	for i, id := range e.toks[:e.nt] {
		v |= runeEntry(id) << (i * runeIDBits)
	}
	v |= runeEntry(e.nt)<<runeCount | runeValid
	if right {
		v |= runeRight
	}
	if left {
		v |= runeLeft
	}
	return v
}

// runeWord appends the ids of w to ids from the rune table and reports
// whether it could: when w is characters of the Basic Multilingual Plane
// outside ASCII, the first possibly after a space, with a cut at each
// boundary between two of them.
func (t *Tokenizer) runeWord(w string, ids []int32) ([]int32, bool) {
	rt := t.runes
	if rt == nil || w == "" {
		return ids, false
	}
	i, table := 0, &rt.alone
	if w[0] == ' ' {
		i, table = 1, &rt.spaced
	}
	var prev runeEntry // the entry before, 0 at the first
	for i < len(w) {
		if w[i] < utf8.RuneSelf {
			return ids, false
		}
		r, size := decodeRune(w[i:])
		if r >= 1<<16 || size == 1 {
			return ids, false
		}
		e := table[r]
		if e&runeValid == 0 || (prev != 0 && prev&runeRight == 0 && e&runeLeft == 0) {
			return ids, false
		}
		for k := range e.count() {
			ids = append(ids, int32(e>>(k*runeIDBits))&runeIDMask)
		}
		prev, table = e, &rt.alone
		i += size
	}
	return ids, prev != 0
}

// decodeRune is utf8.DecodeRuneInString for s starting with a byte outside
// ASCII, with the two- and three-byte forms (the Basic Multilingual
// Plane) decoded inline: the library's table-driven path cost a tenth of
// the time of random Unicode text.
func decodeRune(s string) (rune, int) {
	if len(s) >= 3 {
		b0, b1, b2 := s[0], s[1], s[2]
		if b0&0xF0 == 0xE0 && b1&0xC0 == 0x80 && b2&0xC0 == 0x80 {
			r := rune(b0&0x0F)<<12 | rune(b1&0x3F)<<6 | rune(b2&0x3F)
			if r >= 0x800 && (r < 0xD800 || r > 0xDFFF) {
				return r, 3
			}
		} else if b0 >= 0xC2 && b0 < 0xE0 && b1&0xC0 == 0x80 {
			return rune(b0&0x1F)<<6 | rune(b1&0x3F), 2
		}
	}
	return utf8.DecodeRuneInString(s)
}
