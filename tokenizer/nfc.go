package tokenizer

import (
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// nfcInert marks the runes of the Basic Multilingual Plane that are in NFC
// on their own, have canonical combining class 0 and combine with nothing
// before them (norm's BoundaryBefore): every ASCII rune, most letters of
// every script. Normalization never changes a run of such runes, and text
// can be checked one piece at a time between them. Built on first use.
var nfcInert = sync.OnceValue(func() *[1 << 10]uint64 {
	var m [1 << 10]uint64
	for r := rune(0); r < 1<<16; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		s := string(r)
		if norm.NFC.IsNormalString(s) && norm.NFC.PropertiesString(s).BoundaryBefore() {
			m[r>>6] |= 1 << (r & 63)
		}
	}
	return &m
})

// isNFC reports whether s is in NFC, as norm.NFC.IsNormalString(s) does:
// it steps over inert runes (nfcInert) and hands norm only the pieces
// around the others, each from the inert rune before it (which may compose
// with what follows) to the next inert rune, a normalization boundary.
// Text with bytes that are not UTF-8 goes to norm whole.
func isNFC(s string) bool {
	normal := true
	if !nfcSpans(s, func(last, end int) bool {
		normal = norm.NFC.IsNormalString(s[last:end])
		return normal
	}) {
		return norm.NFC.IsNormalString(s)
	}
	return normal
}

// nfcSpans calls f with each piece s[last:end] that isNFC hands norm, in
// order, until f returns false. It returns false, and the caller hands norm
// the whole text, when it meets a byte that is not UTF-8 first.
func nfcSpans(s string, f func(last, end int) bool) bool {
	inert := nfcInert()
	last := 0 // where the last inert rune starts
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			// ASCII is inert: step over it eight bytes at a time.
			for i+8 <= len(s) && le64(s[i:])&highBits == 0 {
				i += 8
			}
			for i < len(s) && s[i] < utf8.RuneSelf {
				i++
			}
			last = i - 1
			continue
		}
		r, w := decodeRune(s[i:])
		if r == utf8.RuneError && w == 1 {
			return false
		}
		if r < 1<<16 && inert[r>>6]&(1<<(r&63)) != 0 {
			last = i
			i += w
			continue
		}
		end := i + w
		for end < len(s) {
			if s[end] < utf8.RuneSelf {
				break
			}
			r, w := decodeRune(s[end:])
			if r == utf8.RuneError && w == 1 {
				return false
			}
			if r < 1<<16 && inert[r>>6]&(1<<(r&63)) != 0 {
				break
			}
			end += w
		}
		if !f(last, end) {
			return true
		}
		i = end
	}
	return true
}

// toNFC returns s in NFC, as norm.NFC.String(s) does, and s itself when it
// already is. Only the pieces isNFC hands norm are normalized; the inert
// runs between them are copied, since normalization works on each span
// between two boundaries alone.
func toNFC(s string) string {
	if isNFC(s) {
		return s
	}
	out := make([]byte, 0, len(s)+len(s)/8)
	done := 0 // s[:done] is in out
	if !nfcSpans(s, func(last, end int) bool {
		out = append(out, s[done:last]...)
		out = norm.NFC.AppendString(out, s[last:end])
		done = end
		return true
	}) {
		return norm.NFC.String(s)
	}
	return string(append(out, s[done:]...))
}
