package tokenizer

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

// naive is a textbook byte-level BPE over token strings, read from
// tokenizer.json with encoding/json alone: the reference the packed merge
// table, the byte-pair table and the word cache are checked against. It
// shares nothing with the package's merge code.
type naive struct {
	vocab map[string]int
	ranks map[[2]string]int
}

var (
	naiveOnce sync.Once
	naiveBPE  *naive
	naiveErr  error
)

func loadNaive(tb testing.TB) *naive {
	tb.Helper()
	naiveOnce.Do(func() {
		b, err := os.ReadFile(DefaultPath())
		if err != nil {
			naiveErr = err
			return
		}
		var f struct {
			Model struct {
				Vocab  map[string]int `json:"vocab"`
				Merges [][2]string    `json:"merges"`
			} `json:"model"`
		}
		if naiveErr = json.Unmarshal(b, &f); naiveErr != nil {
			return
		}
		n := &naive{vocab: f.Model.Vocab, ranks: make(map[[2]string]int, len(f.Model.Merges))}
		for i, m := range f.Model.Merges {
			n.ranks[m] = i
		}
		naiveBPE = n
	})
	if naiveErr != nil {
		tb.Fatal(naiveErr)
	}
	return naiveBPE
}

// encode merges the byte-level symbols of w, always the lowest-ranked
// adjacent pair, the leftmost on ties, and returns the ids.
func (n *naive) encode(w string) []int {
	var syms []string
	for i := 0; i < len(w); i++ {
		syms = append(syms, string(byteRunes[w[i]]))
	}
	for {
		best, at := -1, -1
		for i := 0; i+1 < len(syms); i++ {
			if r, ok := n.ranks[[2]string{syms[i], syms[i+1]}]; ok && (best < 0 || r < best) {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		syms = slices.Replace(syms, at, at+2, syms[at]+syms[at+1])
	}
	ids := make([]int, len(syms))
	for i, s := range syms {
		ids[i] = n.vocab[s]
	}
	return ids
}

// checkAgainstNaive encodes every pre-token of s (NFC, no added tokens) with
// the tokenizer, through its cache twice (a miss, then a hit) and past it,
// and with the naive BPE.
func checkAgainstNaive(t *testing.T, tk *Tokenizer, n *naive, s string) {
	t.Helper()
	for i := 0; i < len(s); {
		j := nextPretoken(s, i)
		w := s[i:j]
		i = j
		want := n.encode(w)
		for round := range 2 {
			var got []int
			c := tk.caches.acquire()
			tk.word(c, w, &got)
			c.release()
			if !slices.Equal(got, want) {
				t.Fatalf("pre-token %q (round %d): got %v, naive BPE %v", w, round, got, want)
			}
		}
		sc := new(scratch)
		var got []int
		appendIDs(&got, tk.bpe(sc, w))
		if !slices.Equal(got, want) {
			t.Fatalf("pre-token %q uncached: got %v, naive BPE %v", w, got, want)
		}
	}
}

// TestBPEMatchesNaive runs the golden strings and long words of every
// script class (CJK, Hangul, emoji, Cyrillic, invalid bytes) through both.
func TestBPEMatchesNaive(t *testing.T) {
	tk, n := qwenTokenizer(t), loadNaive(t)
	texts := []string{
		strings.Repeat("的", 130), "한국어는어렵지않습니다", "🙂🙃🙂👍🏽👨‍👩‍👧", "Здравствуйтедорогиедрузья",
		"\xff\xfe\x80abc", strings.Repeat("ab", 70), "func (t *Tokenizer) bpe(sc *scratch, w string) []int32 {",
	}
	for _, c := range readGolden(t) {
		texts = append(texts, c.Text)
	}
	for _, s := range texts {
		if start, _, _ := tk.raw.next(s); start >= 0 {
			continue
		}
		checkAgainstNaive(t, tk, n, s)
	}
}

// FuzzBPEMatchesNaive checks the merge code against the naive BPE on any
// input without added tokens.
func FuzzBPEMatchesNaive(f *testing.F) {
	tk, n := qwenTokenizer(f), loadNaive(f)
	for _, c := range readGolden(f) {
		f.Add(c.Text)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 512 {
			return
		}
		if start, _, _ := tk.raw.next(s); start >= 0 {
			return
		}
		checkAgainstNaive(t, tk, n, s)
	})
}
