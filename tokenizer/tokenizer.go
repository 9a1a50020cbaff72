package tokenizer

import (
	"fmt"
	"runtime"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Tokenizer encodes text into Qwen token ids as Hugging Face's tokenizers
// library does with encode(text, add_special_tokens=False). Build one with
// Parse, Load or Open. A Tokenizer is safe for concurrent use.
type Tokenizer struct {
	merges       mergeTable       // pair of ids → rank of its merge
	mergeTo      []int32          // rank → the token that merge makes
	mergeBase    int32            // mergeTo[r] = r + mergeBase for every r, or −1
	bytePairs    []uint32         // rank of merging the tokens of bytes x and y, at x<<8 | y
	byteIDs      [256]int32       // the token of each single byte
	pieces       []string         // id → the bytes the token stands for
	vocab        map[string]int32 // byte-level text → id; only with ignoreMerges
	raw          *addedSet        // added tokens matched in the raw text
	normed       *addedSet        // added tokens matched in the normalized text
	nfc          bool             // apply the NFC normalizer
	ignoreMerges bool             // a pre-token in the vocabulary is one token
	runes        *runeTable       // words of characters cut off from each other; nil without
	caches       *cacheSet        // word caches, one per concurrent call
}

// model is what a tokenizer is built from, whatever its source.
type model struct {
	source       string           // file, URL or spec, for errors
	vocab        map[string]int32 // byte-level token text → id
	vocabField   string           // field names for errors
	merges       [][2]string
	mergesField  string
	added        []addedToken
	nfc          bool
	ignoreMerges bool
}

// build checks m and makes its Tokenizer.
func build(m *model) (*Tokenizer, error) {
	t := &Tokenizer{
		merges:       newMergeTable(len(m.merges)),
		nfc:          m.nfc,
		ignoreMerges: m.ignoreMerges,
		caches:       newCacheSet(runtime.GOMAXPROCS(0)),
	}
	if m.ignoreMerges {
		t.vocab = m.vocab
	}
	for b := range t.byteIDs {
		id, ok := m.vocab[string(byteRunes[b])]
		if !ok {
			return nil, &FieldError{File: m.source, Field: m.vocabField,
				Err: fmt.Errorf("%w: no token for byte 0x%02x (%q)", ErrMalformed, b, string(byteRunes[b]))}
		}
		t.byteIDs[b] = id
	}
	// The id → text table does not depend on the merges: build both at
	// once (loading is a command's start, on one core otherwise).
	pieces := make(chan struct{})
	go func() {
		t.buildPieces(m)
		close(pieces)
	}()
	err := t.buildMerges(m)
	if err == nil {
		t.buildRunes()
	}
	<-pieces
	if err != nil {
		return nil, err
	}
	var raw, normed []addedToken
	for _, a := range m.added {
		if a.normalized {
			if m.nfc {
				a.content = norm.NFC.String(a.content)
			}
			normed = append(normed, a)
		} else {
			raw = append(raw, a)
		}
	}
	t.raw, t.normed = newAddedSet(raw), newAddedSet(normed)
	return t, nil
}

// buildMerges fills t.merges, t.mergeTo and t.bytePairs. A pair listed
// twice keeps its last rank, as Hugging Face's map construction does.
func (t *Tokenizer) buildMerges(m *model) error {
	if len(m.merges) > maxRank {
		return &FieldError{File: m.source, Field: m.mergesField,
			Err: fmt.Errorf("%w: %d merges, more than the %d this package supports", ErrMalformed, len(m.merges), maxRank)}
	}
	t.mergeTo = make([]int32, len(m.merges))
	for i, mg := range m.merges {
		field := func() string { return fmt.Sprintf("%s[%d]", m.mergesField, i) }
		a, ok := m.vocab[mg[0]]
		if !ok {
			return &FieldError{File: m.source, Field: field(), Err: fmt.Errorf("%w: %q is not in the vocabulary", ErrMalformed, mg[0])}
		}
		b, ok := m.vocab[mg[1]]
		if !ok {
			return &FieldError{File: m.source, Field: field(), Err: fmt.Errorf("%w: %q is not in the vocabulary", ErrMalformed, mg[1])}
		}
		c, ok := m.vocab[mg[0]+mg[1]]
		if !ok {
			return &FieldError{File: m.source, Field: field(), Err: fmt.Errorf("%w: merged token %q is not in the vocabulary", ErrMalformed, mg[0]+mg[1])}
		}
		if max(a, b) > maxPairID {
			return &FieldError{File: m.source, Field: field(),
				Err: fmt.Errorf("%w: token id %d is above %d, the largest this package supports in a merge", ErrMalformed, max(a, b), maxPairID)}
		}
		t.merges.put(pairKey(a, b), uint32(i))
		t.mergeTo[i] = c
	}
	t.mergeBase = -1
	if len(t.mergeTo) > 0 {
		t.mergeBase = t.mergeTo[0]
		for r, id := range t.mergeTo {
			if id != int32(r)+t.mergeBase {
				t.mergeBase = -1
				break
			}
		}
	}
	t.bytePairs = make([]uint32, 1<<16)
	for x := range 256 {
		for y := range 256 {
			t.bytePairs[x<<8|y] = t.rank(t.byteIDs[x], t.byteIDs[y])
		}
	}
	return nil
}

// buildPieces fills t.pieces; an added token's id overrides the vocabulary's.
func (t *Tokenizer) buildPieces(m *model) {
	n := int32(0)
	for _, id := range m.vocab {
		n = max(n, id+1)
	}
	for _, a := range m.added {
		n = max(n, a.id+1)
	}
	t.pieces = make([]string, n)
	for tok, id := range m.vocab {
		t.pieces[id] = unByteLevel(tok)
	}
	for _, a := range m.added {
		t.pieces[a.id] = a.content
	}
}

// Encode returns the token ids of s.
func (t *Tokenizer) Encode(s string) []int {
	c := t.caches.acquire()
	buf := c.ids[:0]
	t.run(c, s, &buf)
	// The ids are gathered in the cache's buffer and copied once into a
	// slice of their exact length: growing the result as it fills copied
	// it several times over.
	out := make([]int, len(buf))
	copy(out, buf)
	if cap(buf) <= maxKeptIDs {
		c.ids = buf
	}
	c.release()
	return out
}

// Count returns len(t.Encode(s)) without building the slice; once the words
// of s are cached it does not allocate.
func (t *Tokenizer) Count(s string) int {
	c := t.caches.acquire()
	n := t.run(c, s, nil)
	c.release()
	return n
}

// Decode returns the text of ids: the bytes of each token, concatenated.
// Unknown ids are skipped. Unlike Hugging Face, which replaces invalid UTF-8
// with U+FFFD, Decode returns the bytes as they are, so the decoding of a
// prefix that ends inside a character is a prefix of the full decoding.
func (t *Tokenizer) Decode(ids []int) string {
	var sb strings.Builder
	for _, id := range ids {
		if id >= 0 && id < len(t.pieces) {
			sb.WriteString(t.pieces[id])
		}
	}
	return sb.String()
}

// run encodes s, appending the ids to *out unless out is nil, and returns
// how many there are.
func (t *Tokenizer) run(c *wordCache, s string, out *[]int) int {
	n := 0
	for s != "" {
		start, end, id := t.raw.next(s)
		if start < 0 {
			return n + t.segment(c, s, out)
		}
		n += t.segment(c, s[:start], out) + 1
		if out != nil {
			*out = append(*out, int(id))
		}
		s = s[end:]
	}
	return n
}

// segment encodes text between raw added tokens: normalize, cut out the
// normalized added tokens, pre-tokenize the rest.
func (t *Tokenizer) segment(c *wordCache, s string, out *[]int) int {
	if t.nfc {
		s = toNFC(s)
	}
	n := 0
	for s != "" {
		start, end, id := t.normed.next(s)
		if start < 0 {
			return n + t.pretokens(c, s, out)
		}
		n += t.pretokens(c, s[:start], out) + 1
		if out != nil {
			*out = append(*out, int(id))
		}
		s = s[end:]
	}
	return n
}

// pretokens splits s with the Qwen2 pattern and encodes each piece.
func (t *Tokenizer) pretokens(c *wordCache, s string, out *[]int) int {
	n := 0
	for i := 0; i < len(s); {
		j := nextPretoken(s, i)
		n += t.word(c, s[i:j], out)
		i = j
	}
	return n
}

// word encodes one pre-token, through the cache c when it is short. A
// pre-token of one byte is its byte's token, and one of two bytes is the
// token their merge makes or their two tokens: a fifth of Go sources'
// pre-tokens have two bytes, and looking them up costs more than this.
func (t *Tokenizer) word(c *wordCache, w string, out *[]int) int {
	switch {
	case len(w) == 1:
		if out != nil {
			*out = append(*out, int(t.byteIDs[w[0]]))
		}
		return 1
	case len(w) == 2 && !t.ignoreMerges:
		if r := t.bytePairs[int(w[0])<<8|int(w[1])]; r != noRank {
			if out != nil {
				*out = append(*out, int(t.merged(r)))
			}
			return 1
		}
		if out != nil {
			*out = append(*out, int(t.byteIDs[w[0]]), int(t.byteIDs[w[1]]))
		}
		return 2
	}
	if len(w) > maxCachedWord {
		ids := t.encodeWord(&c.sc, w)
		appendIDs(out, ids)
		return len(ids)
	}
	k := c.key(w)
	na := k.nonASCII(w)
	if f, ok := c.fronted(k, w); ok {
		if na {
			c.noteNonASCII(true)
		}
		appendIDs(out, f.ids[:f.idsLen])
		return int(f.idsLen)
	}
	if na {
		return t.nonASCIIWord(c, k, w, out)
	}
	n, _ := t.shardWord(c, k, w, out)
	return n
}

// nonASCIIWord encodes w, a word with a byte outside ASCII that is not in
// the front table, through the shards of c when c samples it
// (sampleNonASCII), and notes whether they had it.
func (t *Tokenizer) nonASCIIWord(c *wordCache, k wordKey, w string, out *[]int) int {
	n, hit := 0, false
	if c.sampleNonASCII() {
		n, hit = t.shardWord(c, k, w, out)
	} else {
		ids := t.encodeWord(&c.sc, w)
		appendIDs(out, ids)
		n = len(ids)
	}
	c.noteNonASCII(hit)
	return n
}

// shardWord encodes w, not in the front table, through the shards of the
// cache c and reports whether they had it.
func (t *Tokenizer) shardWord(c *wordCache, k wordKey, w string, out *[]int) (int, bool) {
	s, sl := c.find(k, w)
	if sl.textLen != 0 {
		c.promote(k, sl)
		return s.get(sl, out), true
	}
	ids := t.encodeWord(&c.sc, w)
	c.promote(k, s.put(sl, k, w, ids))
	appendIDs(out, ids)
	return len(ids), false
}

// encodeWord returns the ids of the pre-token w, computed; they live in sc
// until it is reused.
func (t *Tokenizer) encodeWord(sc *scratch, w string) []int32 {
	if id, ok := t.whole(w); ok {
		return []int32{id}
	}
	if w[0] >= utf8.RuneSelf || w[0] == ' ' {
		if ids, ok := t.runeWord(w, sc.syms[:0]); ok {
			sc.syms = ids
			return ids
		}
	}
	return t.bpe(sc, w)
}

// whole returns the id of w as one token when the model's ignore_merges
// option lets a pre-token found in the vocabulary skip BPE.
func (t *Tokenizer) whole(w string) (int32, bool) {
	if !t.ignoreMerges {
		return 0, false
	}
	id, ok := t.vocab[byteLevel(w)]
	return id, ok
}

func appendIDs(out *[]int, ids []int32) {
	if out == nil {
		return
	}
	for _, id := range ids {
		*out = append(*out, int(id))
	}
}
