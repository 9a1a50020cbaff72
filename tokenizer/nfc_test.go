package tokenizer

import (
	"testing"

	"golang.org/x/text/unicode/norm"
)

// TestIsNFC checks isNFC against norm.NFC.IsNormalString on every rune of
// the Basic Multilingual Plane alone, after an inert letter, before a
// combining mark, between Hangul jamo and after an invalid byte.
func TestIsNFC(t *testing.T) {
	n := 0
	for r := rune(0); r < 1<<16; r++ {
		c := string(r)
		for _, s := range []string{c, "e" + c, c + "\u0301", c + "\u0301\u0327", "\u1100" + c + "\u11a8",
			"x" + c + c + "y", "\xff" + c, c + "Å"} {
			got, want := isNFC(s), norm.NFC.IsNormalString(s)
			if got != want {
				t.Fatalf("isNFC(%+q) = %v, norm.NFC.IsNormalString = %v", s, got, want)
			}
			if !want {
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no string was outside NFC: the test checks nothing")
	}
	if inert := nfcInert(); inert['a'>>6]&(1<<('a'&63)) == 0 || inert[0x301>>6]&(1<<(0x301&63)) != 0 {
		t.Error("nfcInert: want 'a' inert and U+0301 not")
	}
}

// FuzzIsNFC checks isNFC against norm.NFC.IsNormalString on any input.
func FuzzIsNFC(f *testing.F) {
	for _, c := range readGolden(f) {
		f.Add(c.Text)
	}
	f.Add("e\u0301\u0327x\u1100\u1161\u11a8")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isNFC(s), norm.NFC.IsNormalString(s); got != want {
			t.Fatalf("isNFC(%+q) = %v, norm.NFC.IsNormalString = %v", s, got, want)
		}
	})
}
