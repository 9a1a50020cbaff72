package tokenizer

import (
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// TestIsNFC checks isNFC against norm.NFC.IsNormalString, and toNFC
// against norm.NFC.String, on every rune of
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
			if got, want := toNFC(s), norm.NFC.String(s); got != want {
				t.Fatalf("toNFC(%+q) = %+q, norm.NFC.String = %+q", s, got, want)
			}
			if !want {
				n++
			}
		}
	}
	// Runs of more than 30 combining marks, which NFC breaks with U+034F
	// (the Stream-Safe Text Format), a Hangul syllable split in jamo, and
	// an invalid byte (which decodes as U+FFFD, an inert rune) and U+FFFD
	// itself before U+0343, which NFC replaces.
	for _, s := range []string{"a" + strings.Repeat("\u0301", 40) + "b", "x\u00e9" + strings.Repeat("\u0316\u0301", 20),
		strings.Repeat("\u0301", 31) + "e\u0301", "\u1100\u1161\u11a8 \u1100\u1161",
		"0\xf5\u03430", "0\xef\xbf\xbd\u0343"} { // an invalid byte, and U+FFFD, before a rune NFC replaces

		if got, want := toNFC(s), norm.NFC.String(s); got != want {
			t.Fatalf("toNFC(%+q) = %+q, norm.NFC.String = %+q", s, got, want)
		}
		if got, want := isNFC(s), norm.NFC.IsNormalString(s); got != want {
			t.Fatalf("isNFC(%+q) = %v, norm.NFC.IsNormalString = %v", s, got, want)
		}
	}
	if n == 0 {
		t.Fatal("no string was outside NFC: the test checks nothing")
	}
	if inert := nfcInert(); inert['a'>>6]&(1<<('a'&63)) == 0 || inert[0x301>>6]&(1<<(0x301&63)) != 0 {
		t.Error("nfcInert: want 'a' inert and U+0301 not")
	}
}

// FuzzIsNFC checks isNFC against norm.NFC.IsNormalString, and toNFC
// against norm.NFC.String, on any input.
func FuzzIsNFC(f *testing.F) {
	for _, c := range readGolden(f) {
		f.Add(c.Text)
	}
	f.Add("e\u0301\u0327x\u1100\u1161\u11a8")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isNFC(s), norm.NFC.IsNormalString(s); got != want {
			t.Fatalf("isNFC(%+q) = %v, norm.NFC.IsNormalString = %v", s, got, want)
		}
		if got, want := toNFC(s), norm.NFC.String(s); got != want {
			t.Fatalf("toNFC(%+q) = %+q, norm.NFC.String = %+q", s, got, want)
		}
	})
}
