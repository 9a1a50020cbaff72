package tokenizer

import "testing"

// pretokenAlphabet has a rune of each class, and the bytes the pattern
// names: the contractions' letters, ', \r, \n, space, other white space
// (ASCII, U+0085, U+00A0), ſ, an invalid byte and a CJK letter.
var pretokenAlphabet = []string{"a", "Z", "s", "T", "r", "E", "l", "d", "m", "v", "1", "'", "!", "_", " ",
	"\t", "\r", "\n", "\v", "é", "\u0085", "\u00a0", "ſ", "\xff", "你", "٣"}

// TestPretokenASCII checks the ASCII fast path of nextPretoken against
// nextPretokenSlow, which tries the pattern's alternatives in order, at
// every position of every string of up to four symbols of
// pretokenAlphabet.
func TestPretokenASCII(t *testing.T) {
	var walk func(s string, depth int)
	walk = func(s string, depth int) {
		for i := 0; i < len(s); i++ {
			if got, want := nextPretoken(s, i), nextPretokenSlow(s, i); got != want {
				t.Fatalf("nextPretoken(%q, %d) = %d, nextPretokenSlow = %d", s, i, got, want)
			}
		}
		if depth == 0 {
			return
		}
		for _, a := range pretokenAlphabet {
			walk(s+a, depth-1)
		}
	}
	walk("", 4)
}

// FuzzPretokenASCII checks nextPretoken against nextPretokenSlow on any
// input, at every position.
func FuzzPretokenASCII(f *testing.F) {
	for _, c := range readGolden(f) {
		f.Add(c.Text)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i := 0; i < len(s); i++ {
			if got, want := nextPretoken(s, i), nextPretokenSlow(s, i); got != want {
				t.Fatalf("nextPretoken(%q, %d) = %d, nextPretokenSlow = %d", s, i, got, want)
			}
		}
	})
}
