package reward

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind is what a response's answer was read as.
type Kind uint8

// Kinds of prediction. The zero value is Unparseable.
const (
	// Unparseable: no <answer>…</answer>, or an answer that is neither
	// impossible, nor holds an [L, H], nor is a single integer.
	Unparseable Kind = iota
	// Impossible: the answer is "impossible" in any letter case.
	Impossible
	// Interval: the answer holds [L, H]; L > H is kept as read.
	Interval
	// Scalar: the answer is one non-negative integer (a point estimate).
	Scalar
)

var kindNames = [...]string{"unparseable", "impossible", "interval", "scalar"}

// String returns "unparseable", "impossible", "interval" or "scalar".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + itoa(int64(k)) + ")"
}

// Prediction is a parsed answer. For an Interval, Low and High are L and H
// as written (not swapped); for a Scalar both hold the value; otherwise
// both are zero. Numbers longer than int64 saturate at math.MaxInt64.
type Prediction struct {
	Kind      Kind
	Low, High int64
}

const (
	openTag  = "<answer>"
	closeTag = "</answer>"
)

// Parse reads a model response the way the reference rule reward does
// (parse_answer in the authors' budget_probe_reward.py, whose regular
// expressions are Python's: \d is any Unicode decimal digit, \s and
// str.strip() any Unicode white space):
//
//  1. The answer is the content of the first <answer>…</answer> (newlines
//     included), trimmed of white space. No such pair → Unparseable.
//  2. An answer equal to "impossible", ignoring the case of ASCII letters
//     only (Python's answer.lower() == "impossible": no non-ASCII letter
//     lowercases to one of its letters, so "impoſſible" is not it) →
//     Impossible.
//  3. Else the first "[L, H]" anywhere in the answer, L and H runs of
//     decimal digits with optional white space around each → Interval.
//  4. Else an answer that is only decimal digits → Scalar.
//  5. Anything else → Unparseable.
//
// White space is what Python's str.isspace accepts: Go's unicode.IsSpace
// and the separators U+001C–U+001F. A decimal digit is any character of
// Unicode category Nd (ASCII 0–9, full-width ０–９, Arabic-Indic, …), read
// by its digit value: "[１００, ２００]" is [100, 200]. Tags are
// case-sensitive. Parse does not allocate.
func Parse(response string) Prediction {
	ans, ok := Answer(response)
	if !ok {
		return Prediction{}
	}
	if asciiEqualFold(ans, "impossible") {
		return Prediction{Kind: Impossible}
	}
	if lo, hi, ok := firstInterval(ans); ok {
		return Prediction{Kind: Interval, Low: lo, High: hi}
	}
	if v, n := readDigits(ans, 0); n == len(ans) && n > 0 {
		return Prediction{Kind: Scalar, Low: v, High: v}
	}
	return Prediction{}
}

// Answer returns the content of the first <answer>…</answer> in
// response, trimmed of white space as Python's str.strip() trims it, and
// whether there is one.
func Answer(response string) (string, bool) {
	i := strings.Index(response, openTag)
	if i < 0 {
		return "", false
	}
	rest := response[i+len(openTag):]
	j := strings.Index(rest, closeTag)
	if j < 0 {
		return "", false
	}
	return trimSpace(rest[:j]), true
}

// firstInterval finds the leftmost "[ L , H ]" in s.
func firstInterval(s string) (lo, hi int64, ok bool) {
	for i := 0; ; i++ {
		k := strings.IndexByte(s[i:], '[')
		if k < 0 {
			return 0, 0, false
		}
		i += k
		if lo, hi, ok := intervalAt(s, i+1); ok {
			return lo, hi, true
		}
	}
}

// intervalAt matches `\s*\d+\s*,\s*\d+\s*\]` at s[p:].
func intervalAt(s string, p int) (lo, hi int64, ok bool) {
	p = skipSpace(s, p)
	lo, n := readDigits(s, p)
	if n == 0 {
		return 0, 0, false
	}
	p = skipSpace(s, p+n)
	if p >= len(s) || s[p] != ',' {
		return 0, 0, false
	}
	p = skipSpace(s, p+1)
	hi, n = readDigits(s, p)
	if n == 0 {
		return 0, 0, false
	}
	p = skipSpace(s, p+n)
	if p >= len(s) || s[p] != ']' {
		return 0, 0, false
	}
	return lo, hi, true
}

// skipSpace returns the position after the white space at s[p:].
func skipSpace(s string, p int) int {
	for p < len(s) && isSpace(s[p]) {
		p++
	}
	if p < len(s) && s[p] >= utf8.RuneSelf {
		return skipSpaceFrom(s, p)
	}
	return p
}

// skipSpaceFrom is skipSpace past a non-ASCII character.
func skipSpaceFrom(s string, p int) int {
	for p < len(s) {
		n := spaceAt(s, p)
		if n == 0 {
			break
		}
		p += n
	}
	return p
}

// spaceAt returns the byte length of the white-space character at s[p:]
// (p < len(s)), or 0 when there is none: Python's str.isspace, which is
// unicode.IsSpace and the ASCII separators U+001C–U+001F.
func spaceAt(s string, p int) int {
	if c := s[p]; c < utf8.RuneSelf {
		if isSpace(c) {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRuneInString(s[p:])
	if unicode.IsSpace(r) {
		return n
	}
	return 0
}

// isSpace reports an ASCII white-space byte to Python: \t \n \v \f \r,
// the separators \x1c–\x1f and the space.
func isSpace(c byte) bool {
	return c == ' ' || '\t' <= c && c <= '\r' || '\x1c' <= c && c <= '\x1f'
}

// trimSpace trims s of white space at both ends, as Python's str.strip().
func trimSpace(s string) string {
	if n := len(s); n > 0 && s[0] < utf8.RuneSelf && !isSpace(s[0]) && s[n-1] < utf8.RuneSelf && !isSpace(s[n-1]) {
		return s // the usual answer: nothing to trim
	}
	s = s[skipSpace(s, 0):]
	for len(s) > 0 {
		c := s[len(s)-1]
		if c < utf8.RuneSelf {
			if !isSpace(c) {
				break
			}
			s = s[:len(s)-1]
			continue
		}
		r, n := utf8.DecodeLastRuneInString(s)
		if !unicode.IsSpace(r) {
			break
		}
		s = s[:len(s)-n]
	}
	return s
}

// readDigits reads the run of decimal digits at s[p:], returning its value
// (saturated at math.MaxInt64) and its length in bytes.
func readDigits(s string, p int) (v int64, n int) {
	i := p
	for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
		v = addDigit(v, int64(s[i]-'0'))
	}
	if i < len(s) && s[i] >= utf8.RuneSelf {
		return readDigitsFrom(s, p, i, v)
	}
	return v, i - p
}

// readDigitsFrom is readDigits of s[p:] past a non-ASCII character at
// s[i], the value of s[p:i] being v.
func readDigitsFrom(s string, p, i int, v int64) (int64, int) {
	for i < len(s) {
		d, w := digitAt(s, i)
		if w == 0 {
			break
		}
		v = addDigit(v, d)
		i += w
	}
	return v, i - p
}

// addDigit appends decimal digit d to v, saturating at math.MaxInt64.
func addDigit(v, d int64) int64 {
	if v > (math.MaxInt64-d)/10 {
		return math.MaxInt64
	}
	return v*10 + d
}

// digitAt returns the value and byte length of the decimal digit at s[p:]
// (p < len(s)), or width 0 when there is none. A decimal digit is a
// character of category Nd (Python's \d and int()): Unicode encodes each
// script's digits as a contiguous run 0…9, so a character's value is its
// distance from the start of its run of unicode.Nd, modulo 10.
func digitAt(s string, p int) (d int64, width int) {
	if c := s[p]; c < utf8.RuneSelf {
		if '0' <= c && c <= '9' {
			return int64(c - '0'), 1
		}
		return 0, 0
	}
	r, n := utf8.DecodeRuneInString(s[p:])
	if lo, ok := ndRunStart(r); ok {
		return int64(r-lo) % 10, n
	}
	return 0, 0
}

// ndRunStart returns the first character of the range of unicode.Nd that
// holds r.
func ndRunStart(r rune) (rune, bool) {
	if r <= 0xFFFF {
		for _, rg := range unicode.Nd.R16 {
			if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
				return rune(rg.Lo), true
			}
		}
		return 0, false
	}
	for _, rg := range unicode.Nd.R32 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return rune(rg.Lo), true
		}
	}
	return 0, false
}

// itoa formats v without fmt, for String methods.
func itoa(v int64) string {
	var b [20]byte
	return string(appendInt(b[:0], v))
}

// asciiEqualFold reports whether s equals lower, an ASCII lowercase word,
// when s's ASCII letters are lowercased. Unlike strings.EqualFold it
// applies no Unicode folding (ſ, U+017F, folds to s there).
func asciiEqualFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
