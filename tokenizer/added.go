package tokenizer

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// addedToken is one entry of tokenizer.json's added_tokens.
type addedToken struct {
	content    string
	id         int32
	singleWord bool // match only where no word character touches it
	lstrip     bool // swallow the whitespace on its left
	rstrip     bool // swallow the whitespace on its right
	normalized bool // match against the normalized text, not the raw one
}

// addedSet finds added tokens in text the way Hugging Face's
// AddedVocabulary does: an Aho-Corasick search with leftmost-longest match
// semantics, then the single_word, lstrip and rstrip rules. A nil *addedSet
// finds nothing.
type addedSet struct {
	toks    []addedToken
	byFirst [256][]int // indexes of toks by first byte, longest first
	first   int        // the first byte every token shares, or -1
}

// newAddedSet returns the set of toks with a non-empty content, or nil if
// there are none (Hugging Face ignores empty added tokens).
func newAddedSet(toks []addedToken) *addedSet {
	a := &addedSet{first: -1}
	for _, t := range toks {
		if t.content != "" {
			a.toks = append(a.toks, t)
		}
	}
	if len(a.toks) == 0 {
		return nil
	}
	for i, t := range a.toks {
		b := t.content[0]
		a.byFirst[b] = append(a.byFirst[b], i)
		switch {
		case i == 0:
			a.first = int(b)
		case a.first != int(b):
			a.first = -2
		}
	}
	if a.first < 0 {
		a.first = -1
	}
	for b := range a.byFirst {
		idx := a.byFirst[b]
		sort.SliceStable(idx, func(i, j int) bool {
			return len(a.toks[idx[i]].content) > len(a.toks[idx[j]].content)
		})
	}
	return a
}

// next finds the first added token in s and returns the span it takes
// (widened by lstrip/rstrip) and its id; start is -1 when there is none.
// Like Hugging Face, a match rejected by single_word stays part of the text
// and the search goes on after it.
func (a *addedSet) next(s string) (start, end int, id int32) {
	if a == nil {
		return -1, -1, 0
	}
	for pos := 0; pos < len(s); {
		ms, t := a.find(s, pos)
		if t == nil {
			break
		}
		me := ms + len(t.content)
		if t.singleWord && (endsWithWord(s[:ms]) || startsWithWord(s[me:])) {
			pos = me
			continue
		}
		if t.lstrip {
			ms = len(strings.TrimRightFunc(s[:ms], unicode.IsSpace))
		}
		if t.rstrip {
			me = len(s) - len(strings.TrimLeftFunc(s[me:], unicode.IsSpace))
		}
		return ms, me, t.id
	}
	return -1, -1, 0
}

// find returns the leftmost position at or after pos where a token starts,
// and the longest token starting there.
func (a *addedSet) find(s string, pos int) (int, *addedToken) {
	for i := pos; i < len(s); i++ {
		if a.first >= 0 {
			j := strings.IndexByte(s[i:], byte(a.first))
			if j < 0 {
				return -1, nil
			}
			i += j
		}
		for _, k := range a.byFirst[s[i]] {
			if t := &a.toks[k]; strings.HasPrefix(s[i:], t.content) {
				return i, t
			}
		}
	}
	return -1, nil
}

// isWord reports whether r is a \w character of Rust's regex crate, which
// Hugging Face uses for single_word: Alphabetic, Mark, Decimal_Number,
// Connector_Punctuation or Join_Control.
func isWord(r rune) bool {
	return unicode.IsLetter(r) || unicode.In(r, unicode.M, unicode.Nd, unicode.Nl, unicode.Pc, unicode.Other_Alphabetic) ||
		r == 0x200C || r == 0x200D
}

func endsWithWord(s string) bool {
	r, w := utf8.DecodeLastRuneInString(s)
	return w > 0 && isWord(r)
}

func startsWithWord(s string) bool {
	r, w := utf8.DecodeRuneInString(s)
	return w > 0 && isWord(r)
}
