package tokenizer

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
)

var (
	qwenOnce sync.Once
	qwen     *Tokenizer
	qwenErr  error
)

// qwenTokenizer loads the real Qwen tokenizer.json once per test binary.
func qwenTokenizer(tb testing.TB) *Tokenizer {
	tb.Helper()
	qwenOnce.Do(func() {
		path := DefaultPath()
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			qwenErr = fmt.Errorf("%s is missing: run `make tokenizer` first", path)
			return
		}
		qwen, qwenErr = Load(path)
	})
	if qwenErr != nil {
		tb.Fatal(qwenErr)
	}
	return qwen
}

type goldenCase struct {
	Text string `json:"text"`
	IDs  []int  `json:"ids"`
}

// readGolden reads testdata/golden.jsonl (see golden.mjs).
func readGolden(tb testing.TB) []goldenCase {
	tb.Helper()
	f, err := os.Open("testdata/golden.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var cases []goldenCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		var c goldenCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			tb.Fatalf("golden.jsonl:%d: %v", line, err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return cases
}

func TestGolden(t *testing.T) {
	tk := qwenTokenizer(t)
	cases := readGolden(t)
	if len(cases) < 300 {
		t.Fatalf("golden.jsonl has %d cases, want at least 300", len(cases))
	}
	for i, c := range cases {
		if got := tk.Encode(c.Text); !slices.Equal(got, c.IDs) {
			t.Errorf("golden.jsonl:%d: Encode(%q)\n got %v\nwant %v", i+1, c.Text, got, c.IDs)
		}
		if got := tk.Count(c.Text); got != len(c.IDs) {
			t.Errorf("golden.jsonl:%d: Count(%q) = %d, want %d", i+1, c.Text, got, len(c.IDs))
		}
	}
}

// TestEncodeHF pins ids worked out from Hugging Face's documented behaviour
// where it matters most or where the JavaScript port used for golden.jsonl
// is wrong (see golden.mjs).
func TestEncodeHF(t *testing.T) {
	tk := qwenTokenizer(t)
	tests := []struct {
		name string
		in   string
		want []int
	}{
		// Lowest rank first, leftmost on ties; a left-to-right merger gives 5 tokens.
		{"chapter", "\nCHAPTER XXIII", []int{198, 87439, 29288, 22615}},
		{"hello", "Hello world", []int{9707, 1879}},
		{"added tokens", "<think>hi</think><answer>[120, 300]</answer>",
			[]int{151667, 6023, 151668, 27, 9217, 30768, 16, 17, 15, 11, 220, 18, 15, 15, 30961, 9217, 29}},
		{"contraction upper", "DON'T", []int{84641, 17323}},
		// U+0085 is \s for Oniguruma: " \u0085" is whitespace, not " " + symbol.
		{"nel before symbol", "x \u0085!", []int{87, 220, 126, 227, 0}},
		{"nel before letter", " \u0085a", []int{220, 126, 227, 64}},
		// U+FEFF is not \s: "\uFEFF#" is one pre-token, the vocabulary's "ï»¿#".
		{"bom before symbol", "\uFEFF#", []int{42272}},
		{"bom after spaces", "  \uFEFFThe", []int{220, 75780, 785}},
		{"empty", "", []int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tk.Encode(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("Encode(%q) = %v, want %v", tt.in, got, tt.want)
			}
			if got := tk.Count(tt.in); got != len(tt.want) {
				t.Errorf("Count(%q) = %d, want %d", tt.in, got, len(tt.want))
			}
		})
	}
}

// TestPretokens pins the pre-token splits of Qwen2Pattern; each was
// checked against Oniguruma 6.9.8, the regex engine Hugging Face uses.
func TestPretokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Hello world", []string{"Hello", " world"}},
		{"\nCHAPTER XXIII", []string{"\n", "CHAPTER", " XXIII"}},
		{"DON'T don't", []string{"DON", "'T", " don", "'t"}},
		{"'re 'VE 'Ll 'd 'x", []string{"'re", " '", "VE", " '", "Ll", " '", "d", " '", "x"}},
		{"'ſt", []string{"'ſ", "t"}},
		{"123 4", []string{"1", "2", "3", " ", "4"}},
		{"a  b", []string{"a", " ", " b"}},
		{"a   \n  b", []string{"a", "   \n", " ", " b"}},
		{"x  \n", []string{"x", "  \n"}},
		{"trailing   ", []string{"trailing", "   "}},
		{" !!\n\nx", []string{" !!\n\n", "x"}},
		{"\t!", []string{"\t", "!"}},
		{"\tfoo", []string{"\tfoo"}},
		{"#_P__#\n", []string{"#_", "P", "__#\n"}},
		{"x \u0085!", []string{"x", " ", "\u0085", "!"}},
		{"\uFEFF# a", []string{"\uFEFF#", " a"}},
		{"e\u0301\u0301x", []string{"e", "\u0301\u0301", "x"}},
		{"你好，世界", []string{"你好", "，世界"}},
		{"a\xffb", []string{"a", "\xffb"}},
		{"\xff\xfe ", []string{"\xff\xfe", " "}},
	}
	for _, tt := range tests {
		var got []string
		for i := 0; i < len(tt.in); {
			j := nextPretoken(tt.in, i)
			got = append(got, tt.in[i:j])
			i = j
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("pre-tokens of %q = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestContractionFold checks that contraction accepts every spelling that
// Unicode simple case folding makes of s, t, re, ve, m, ll and d.
func TestContractionFold(t *testing.T) {
	folds := func(c rune) []string {
		out := []string{string(c)}
		for r := unicode.SimpleFold(c); r != c; r = unicode.SimpleFold(r) {
			out = append(out, string(r))
		}
		return out
	}
	n := 0
	for _, c := range []string{"s", "t", "re", "ve", "m", "ll", "d"} {
		spellings := []string{""}
		for _, r := range c {
			var next []string
			for _, p := range spellings {
				for _, f := range folds(r) {
					next = append(next, p+f)
				}
			}
			spellings = next
		}
		for _, s := range spellings {
			n++
			if got := contraction(s + "x"); got != len(s) {
				t.Errorf("contraction(%q) = %d, want %d", s+"x", got, len(s))
			}
		}
	}
	if n != 21 { // s S ſ; t T; m M; d D; four spellings each of re, ve, ll
		t.Errorf("checked %d spellings, want 21", n)
	}
	for _, s := range []string{"", "x", "r", "l", "lx", "ſ"[:1], "é"} {
		if got := contraction(s); got != 0 {
			t.Errorf("contraction(%q) = %d, want 0", s, got)
		}
	}
}

// TestMergeHeap checks that the priority-queue merge, used for long words,
// agrees with the scanning merge on every golden pre-token and on long runs.
func TestMergeHeap(t *testing.T) {
	tk := qwenTokenizer(t)
	words := []string{strings.Repeat("a", 300), strings.Repeat("ab", 150), strings.Repeat("哈", 100),
		strings.Repeat(" ", 200), strings.Repeat("=", 97)}
	for _, c := range readGolden(t) {
		for i := 0; i < len(c.Text); {
			j := nextPretoken(c.Text, i)
			words = append(words, c.Text[i:j])
			i = j
		}
	}
	var s1, s2 scratch
	for _, w := range words {
		syms := make([]int32, len(w))
		for i := range len(w) {
			syms[i] = tk.byteIDs[w[i]]
		}
		scan := slices.Clone(tk.mergeScan(&s1, slices.Clone(syms), w))
		heap := tk.mergeHeap(&s2, slices.Clone(syms))
		if !slices.Equal(scan, heap) {
			t.Errorf("word %q: mergeScan %v, mergeHeap %v", w, scan, heap)
		}
	}
}

func TestDecode(t *testing.T) {
	tk := qwenTokenizer(t)
	tests := []struct {
		name string
		ids  []int
		want string
	}{
		{"chapter", []int{198, 87439, 29288, 22615}, "\nCHAPTER XXIII"},
		{"added", []int{151667, 6023, 151668}, "<think>hi</think>"},
		{"unknown ids skipped", []int{-1, 9707, 1 << 30}, "Hello"},
		{"partial character", []int{126}, "\xc2"},
		{"none", nil, ""},
	}
	for _, tt := range tests {
		if got := tk.Decode(tt.ids); got != tt.want {
			t.Errorf("%s: Decode(%v) = %q, want %q", tt.name, tt.ids, got, tt.want)
		}
	}
}

// TestNFC checks that text is normalized before pre-tokenization but added
// tokens are cut out first.
func TestNFC(t *testing.T) {
	tk := qwenTokenizer(t)
	tests := []struct{ a, b string }{
		{"cafe\u0301", "café"},
		{"\u212b", "\u00c5"},
		{"<think>e\u0301</think>", "<think>é</think>"},
	}
	for _, tt := range tests {
		if got, want := tk.Encode(tt.a), tk.Encode(tt.b); !slices.Equal(got, want) {
			t.Errorf("Encode(%q) = %v, want Encode(%q) = %v", tt.a, got, tt.b, want)
		}
	}
	// ">" + U+0338 composes to "≯" under NFC, but ">" ends an added token.
	if got, want := tk.Decode(tk.Encode("<think>\u0338")), "<think>\u0338"; got != want {
		t.Errorf("Decode(Encode(%q)) = %q, want %q", "<think>\u0338", got, want)
	}
}

// TestConcurrent encodes from several goroutines, with as many word caches
// as GOMAXPROCS and with a single one (every call but one waits for it);
// run with -race.
func TestConcurrent(t *testing.T) {
	shared := qwenTokenizer(t)
	one := *shared
	one.caches = newCacheSet(1)
	cases := readGolden(t)
	for name, tk := range map[string]*Tokenizer{"shared": shared, "one cache": &one} {
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := g; i < len(cases); i += 2 {
					c := cases[i]
					if got := tk.Count(c.Text); got != len(c.IDs) {
						t.Errorf("%s, goroutine %d: Count(%q) = %d, want %d", name, g, c.Text, got, len(c.IDs))
					}
					if got := tk.Encode(c.Text); !slices.Equal(got, c.IDs) {
						t.Errorf("%s, goroutine %d: Encode(%q) = %v, want %v", name, g, c.Text, got, c.IDs)
					}
				}
			})
		}
		wg.Wait()
	}
}
