package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// FuzzEncode checks, on any input, that encoding never panics, that Count
// agrees with Encode, and that decoding gives the text back in NFC. It is
// seeded from golden.jsonl.
func FuzzEncode(f *testing.F) {
	tk := qwenTokenizer(f)
	for _, c := range readGolden(f) {
		f.Add(c.Text)
	}
	f.Add("a\xffb\xc3")
	f.Add("<think>\u0338")
	f.Fuzz(func(t *testing.T, s string) {
		ids := tk.Encode(s)
		if n := tk.Count(s); n != len(ids) {
			t.Fatalf("Count(%q) = %d, len(Encode) = %d", s, n, len(ids))
		}
		if !utf8.ValidString(s) {
			return
		}
		got, want := tk.Decode(ids), norm.NFC.String(s)
		if got == want {
			return
		}
		// NFC applies between added tokens, so a combining mark right after
		// one (">" + U+0338 is "≯") stays uncomposed; the texts are still
		// canonically equivalent.
		if start, _, _ := tk.raw.next(s); start < 0 || norm.NFC.String(got) != want {
			t.Fatalf("Decode(Encode(%q)) = %q, want %q", s, got, want)
		}
	})
}

// TestDecodeInvalidUTF8 checks that bytes that are not UTF-8 are encoded one
// byte-level token each and come back unchanged.
func TestDecodeInvalidUTF8(t *testing.T) {
	tk := qwenTokenizer(t)
	for _, s := range []string{"\xff", "a\xffb", "\xc3", "é\xe2\x82", strings.Repeat("\x80", 200)} {
		if got := tk.Decode(tk.Encode(s)); got != s {
			t.Errorf("Decode(Encode(%q)) = %q", s, got)
		}
	}
}
