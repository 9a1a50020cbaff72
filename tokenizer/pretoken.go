package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// Qwen2Pattern is the Split pre-tokenizer regex of Qwen2 and Qwen3, the only
// one this package implements (by hand, in nextPretoken).
const Qwen2Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// Character classes of the pattern. Every rune falls in exactly one.
const (
	clsOther   = iota // [^\s\p{L}\p{N}]: punctuation, symbols, marks, controls, invalid bytes
	clsLetter         // \p{L}
	clsNumber         // \p{N}
	clsSpace          // \s except \r and \n
	clsNewline        // \r or \n
	clsEnd            // past the end of the text
)

// asciiClass holds the class of each ASCII byte.
var asciiClass = func() (c [utf8.RuneSelf]uint8) {
	for b := range c {
		c[b] = classOf(rune(b))
	}
	return c
}()

// bmpClass holds the class of each rune of the Basic Multilingual Plane, two
// bits a rune (clsNewline is ASCII only), so that classifying non-ASCII text
// is a table load instead of three searches of Unicode's range tables.
var bmpClass = func() *[1 << 14]uint8 {
	var c [1 << 14]uint8
	for r := rune(0); r < 1<<16; r++ {
		if cls := classOf(r); cls != clsNewline {
			c[r>>2] |= cls << (2 * (r & 3))
		}
	}
	return &c
}()

// classOf classifies a rune the way Oniguruma does for UTF-8 text: \s is
// 0009–000D, 0085 and the Zs, Zl, Zp categories — Unicode's White_Space
// property, which is what unicode.IsSpace tests.
func classOf(r rune) uint8 {
	switch {
	case r == '\r' || r == '\n':
		return clsNewline
	case unicode.IsLetter(r):
		return clsLetter
	case unicode.IsNumber(r):
		return clsNumber
	case unicode.IsSpace(r):
		return clsSpace
	}
	return clsOther
}

// classAt returns the class and byte width of the rune at s[i]; an invalid
// byte is one clsOther symbol of width 1, and the end of s is clsEnd. The
// ASCII case is inlined where it is called.
func classAt(s string, i int) (cls uint8, w int) {
	if i < len(s) && s[i] < utf8.RuneSelf {
		return asciiClass[s[i]], 1
	}
	return classAtSlow(s, i)
}

func classAtSlow(s string, i int) (cls uint8, w int) {
	if i >= len(s) {
		return clsEnd, 0
	}
	r, w := decodeRune(s[i:])
	if r == utf8.RuneError && w == 1 {
		return clsOther, 1
	}
	if r < 1<<16 {
		return bmpClass[r>>2] >> (2 * (r & 3)) & 3, w
	}
	return classOf(r), w
}

// nextPretoken returns the end of the pre-token that starts at s[i], i <
// len(s): the match Oniguruma finds for Qwen2Pattern there. Every rune is
// matched by some alternative, so matches tile the text. A pre-token that
// starts with an ASCII byte is matched here, by class; others by
// nextPretokenSlow, which tries the alternatives in the pattern's order.
func nextPretoken(s string, i int) int {
	b := s[i]
	if b >= utf8.RuneSelf {
		return nextPretokenSlow(s, i)
	}
	switch asciiClass[b] {
	case clsLetter: // [^\r\n\p{L}\p{N}]?\p{L}+ without its first part
		return letters(s, i+1)
	case clsNumber: // \p{N}
		return i + 1
	case clsOther:
		if b == '\'' {
			if n := contraction(s[i+1:]); n > 0 {
				return i + 1 + n
			}
		}
		if c, w := classAt(s, i+1); c == clsLetter {
			return letters(s, i+1+w)
		}
		return newlines(s, others(s, i+1)) // [^\s\p{L}\p{N}]+[\r\n]*
	case clsSpace:
		c, w := classAt(s, i+1)
		if c == clsLetter {
			return letters(s, i+1+w)
		}
		if b == ' ' && c == clsOther { // ` [^\s\p{L}\p{N}]+[\r\n]*`
			return newlines(s, others(s, i+1+w))
		}
	}
	return whitespace(s, i)
}

// nextPretokenSlow is nextPretoken for any first rune.
func nextPretokenSlow(s string, i int) int {
	c, w := classAt(s, i)
	// (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if s[i] == '\'' {
		if n := contraction(s[i+1:]); n > 0 {
			return i + 1 + n
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	switch c {
	case clsLetter:
		return letters(s, i+w)
	case clsOther, clsSpace:
		if c2, w2 := classAt(s, i+w); c2 == clsLetter {
			return letters(s, i+w+w2)
		}
	}
	// \p{N}
	if c == clsNumber {
		return i + w
	}
	// ` ?[^\s\p{L}\p{N}]+[\r\n]*`
	j := i
	if s[i] == ' ' {
		j = i + 1
	}
	if c2, w2 := classAt(s, j); c2 == clsOther {
		return newlines(s, others(s, j+w2))
	}
	// Only whitespace is left: \s*[\r\n]+ | \s+(?!\S) | \s+
	return whitespace(s, i)
}

// contraction returns the length of the (?i:s|t|re|ve|m|ll|d) that rest
// starts with, or 0. Oniguruma's case folding also lets ſ (U+017F, which
// folds to s) match s; no other non-ASCII rune folds to these letters.
func contraction(rest string) int {
	if rest == "" {
		return 0
	}
	// |0x20 lower-cases ASCII letters and maps nothing else onto one.
	switch rest[0] | 0x20 {
	case 's', 't', 'm', 'd':
		return 1
	case 'r', 'v':
		if len(rest) > 1 && rest[1]|0x20 == 'e' {
			return 2
		}
	case 'l':
		if len(rest) > 1 && rest[1]|0x20 == 'l' {
			return 2
		}
	}
	if len(rest) > 1 && rest[0] == 0xC5 && rest[1] == 0xBF { // ſ
		return 2
	}
	return 0
}

// letters returns the end of the run of letters starting at s[i].
func letters(s string, i int) int {
	for i < len(s) {
		if b := s[i]; b < utf8.RuneSelf {
			if asciiClass[b] != clsLetter {
				break
			}
			i++
			continue
		}
		c, w := classAtSlow(s, i)
		if c != clsLetter {
			break
		}
		i += w
	}
	return i
}

// highBits is the top bit of each of eight bytes: the bytes of a
// little-endian uint64 are ASCII when it has none of them.
const highBits = 0x8080808080808080

// others returns the end of the run of clsOther runes starting at s[i].
func others(s string, i int) int {
	for i < len(s) {
		if b := s[i]; b < utf8.RuneSelf {
			if asciiClass[b] != clsOther {
				break
			}
			i++
			continue
		}
		c, w := classAtSlow(s, i)
		if c != clsOther {
			break
		}
		i += w
	}
	return i
}

// newlines returns the end of the run of \r and \n starting at s[i].
func newlines(s string, i int) int {
	for i < len(s) && (s[i] == '\r' || s[i] == '\n') {
		i++
	}
	return i
}

// whitespace matches \s*[\r\n]+|\s+(?!\S)|\s+ at s[i], a whitespace rune.
// The first alternative backtracks to the last \r or \n of the whitespace
// run; the second gives back the run's last rune unless the run ends the
// text; the third takes a lone whitespace rune before non-space.
func whitespace(s string, i int) int {
	end, lastNL, last := i, -1, i
	for end < len(s) {
		var c uint8
		w := 1
		if b := s[end]; b < utf8.RuneSelf {
			c = asciiClass[b]
		} else {
			c, w = classAtSlow(s, end)
		}
		if c != clsSpace && c != clsNewline {
			break
		}
		if c == clsNewline {
			lastNL = end + w
		}
		last = end
		end += w
	}
	switch {
	case lastNL >= 0:
		return lastNL
	case end == len(s) || last == i:
		return end
	}
	return last
}
