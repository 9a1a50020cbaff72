package tokenizer

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestRuneWord checks words made from the rune table against BPE on 200,000
// random words of one to eight characters drawn from the whole Basic
// Multilingual Plane outside ASCII and from common CJK, Hangul and Cyrillic,
// with and without a space before them, and that the table takes most of
// the random ones and leaves to BPE the words it cannot cut ("的", a common
// character, is not cut off from its neighbours).
func TestRuneWord(t *testing.T) {
	tk := qwenTokenizer(t)
	if tk.runes == nil {
		t.Fatal("no rune table for Qwen's tokenizer")
	}
	pools := []struct {
		name   string
		lo, hi rune
	}{{"bmp", 0x80, 0x10000}, {"cjk", 0x4E00, 0x4F00}, {"hangul", 0xAC00, 0xAD00}, {"cyrillic", 0x400, 0x460}}
	r := rand.New(rand.NewPCG(5, 8))
	var sc scratch
	taken := map[string]int{}
	for _, p := range pools {
		for range 50_000 {
			var sb strings.Builder
			if r.IntN(2) == 0 {
				sb.WriteByte(' ')
			}
			for range 1 + r.IntN(8) {
				c := p.lo + r.Int32N(p.hi-p.lo)
				if !utf8.ValidRune(c) {
					c = 0x4E00
				}
				sb.WriteRune(c)
			}
			w := sb.String()
			got, ok := tk.runeWord(w, nil)
			if !ok {
				continue
			}
			taken[p.name]++
			if want := tk.bpe(&sc, w); !slices.Equal(got, want) {
				t.Fatalf("runeWord(%q) = %v, BPE %v", w, got, want)
			}
		}
	}
	// The words are the same on every run, and so are the counts, pinned
	// here so that a change to the cut rules shows; most words of random
	// characters take the table.
	want := map[string]int{"bmp": 39072, "cjk": 25815, "hangul": 45501, "cyrillic": 10981}
	if !maps.Equal(taken, want) {
		t.Errorf("the table took %v of 50,000 words each, want %v", taken, want)
	}
	for _, w := range []string{"", " ", "a", " ab", "\xff\xfe", "你\xff", "🙂", " 你a", "的的"} {
		if ids, ok := tk.runeWord(w, nil); ok {
			t.Errorf("runeWord(%q) = %v, want it left to BPE", w, ids)
		}
	}
}

// TestDecodeRune checks decodeRune against utf8.DecodeRuneInString on every
// string of one to three bytes that starts outside ASCII, followed by a
// fourth byte or not.
func TestDecodeRune(t *testing.T) {
	var buf [4]byte
	n := 0
	for b0 := 0x80; b0 < 0x100; b0++ {
		for b1 := 0; b1 < 0x100; b1++ {
			for b2 := 0; b2 < 0x100; b2++ {
				buf[0], buf[1], buf[2], buf[3] = byte(b0), byte(b1), byte(b2), 0x80
				for _, s := range []string{string(buf[:3]), string(buf[:4])} {
					r, w := decodeRune(s)
					wr, ww := utf8.DecodeRuneInString(s)
					if r != wr || w != ww {
						t.Fatalf("decodeRune(%q) = %U, %d; utf8 says %U, %d", s, r, w, wr, ww)
					}
					n++
				}
			}
			for _, s := range []string{string(buf[:1]), string([]byte{byte(b0), byte(b1)})} {
				r, w := decodeRune(s)
				if wr, ww := utf8.DecodeRuneInString(s); r != wr || w != ww {
					t.Fatalf("decodeRune(%q) = %U, %d; utf8 says %U, %d", s, r, w, wr, ww)
				}
				n++
			}
		}
	}
	if n != 128*256*256*2+128*256*2 {
		t.Fatalf("checked %d strings", n)
	}
}
