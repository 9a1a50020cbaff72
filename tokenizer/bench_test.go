package tokenizer

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// proseText is testdata/prose.txt, English prose, repeated to about 90 KB.
func proseText(b *testing.B) string {
	data, err := os.ReadFile("testdata/prose.txt")
	if err != nil {
		b.Fatal(err)
	}
	return strings.Repeat(string(data), 16)
}

// sokobanText is a deterministic rollout-like text: 200 turns of an 8×8
// Sokoban grid with coordinates and an answer, as the prompts show them.
func sokobanText() string {
	r := rand.New(rand.NewPCG(7, 11))
	cells := []byte("____#X_O")
	var sb strings.Builder
	for turn := range 200 {
		fmt.Fprintf(&sb, "<|im_start|>user\nTurn %d. You are given the grid:\n", turn+1)
		for y := range 8 {
			for x := range 8 {
				c := cells[r.IntN(len(cells))]
				if y == 0 || y == 7 || x == 0 || x == 7 {
					c = '#'
				}
				sb.WriteByte(c)
			}
			sb.WriteByte('\n')
		}
		fmt.Fprintf(&sb, "Player at (%d, %d); boxes at [(%d, %d)]; targets at [(%d, %d)].<|im_end|>\n",
			r.IntN(8), r.IntN(8), r.IntN(8), r.IntN(8), r.IntN(8), r.IntN(8))
		fmt.Fprintf(&sb, "<|im_start|>assistant\n<think>The box must go right.</think><answer>Right || Up</answer><|im_end|>\n")
	}
	return sb.String()
}

// randomText is a deterministic 256 KB of random Basic Multilingual Plane
// letters, spaces and a little punctuation and digits, NFC: almost every
// word is new.
func randomText() string {
	r := rand.New(rand.NewPCG(19, 6))
	var pool []rune
	for c := rune(0x20); c < 0x10000; c++ {
		if unicode.IsGraphic(c) && !unicode.Is(unicode.Co, c) && norm.NFC.PropertiesString(string(c)).CCC() == 0 {
			pool = append(pool, c)
		}
	}
	var sb strings.Builder
	for sb.Len() < 256<<10 {
		switch x := r.IntN(10); {
		case x < 2:
			sb.WriteByte(' ')
		case x < 3:
			sb.WriteString([]string{"\n", "\t", "  ", "\r\n", "'s ", "123"}[r.IntN(6)])
		default:
			sb.WriteRune(pool[r.IntN(len(pool))])
		}
	}
	return norm.NFC.String(sb.String())
}

// goText is the Go sources of GOROOT's fmt, strings and net/http packages,
// about 1 MB, or "" when GOROOT is not there.
func goText() string {
	var sb strings.Builder
	for _, dir := range []string{"fmt", "strings", "net/http"} {
		files, _ := filepath.Glob(filepath.Join(goRoot(), "src", dir, "*.go"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				sb.Write(b)
			}
		}
	}
	return sb.String()
}

// BenchmarkCount measures Count on long English prose and on Sokoban
// rollout text, with the word cache warm (the steady state), and on prose,
// Go sources and random Unicode with the cache emptied before every call
// (every word a miss the first time it is seen).
func BenchmarkCount(b *testing.B) {
	tk := qwenTokenizer(b)
	texts := []struct {
		name string
		text string
		cold bool
	}{
		{"prose", proseText(b), false},
		{"sokoban", sokobanText(), false},
		{"prose-cold", proseText(b)[:len(proseText(b))/16], true},
		{"go-cold", goText(), true},
		{"random-cold", randomText(), true},
	}
	for _, tt := range texts {
		b.Run(tt.name, func(b *testing.B) {
			if tt.text == "" {
				b.Skip("no Go sources under GOROOT")
			}
			b.SetBytes(int64(len(tt.text)))
			tk.Count(tt.text)
			b.ReportAllocs()
			for b.Loop() {
				if tt.cold {
					tk.caches.reset()
				}
				tk.Count(tt.text)
			}
		})
	}
}

// BenchmarkEncode measures Encode on the prose, including the id slice.
func BenchmarkEncode(b *testing.B) {
	tk := qwenTokenizer(b)
	text := proseText(b)
	b.SetBytes(int64(len(text)))
	tk.Count(text)
	b.ReportAllocs()
	for b.Loop() {
		tk.Encode(text)
	}
}

// BenchmarkCountParallel counts the prose from every goroutine at once, one
// paragraph a call as a build counts one message a call, with the word cache
// warm: the cost of sharing one Tokenizer between goroutines shows here
// (run with -cpu 2 or more).
func BenchmarkCountParallel(b *testing.B) {
	tk := qwenTokenizer(b)
	text := proseText(b)
	paras := strings.SplitAfter(text, "\n\n")
	tk.Count(text)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			for _, p := range paras {
				tk.Count(p)
			}
		}
	})
}

// BenchmarkPretokens measures the Qwen2 pre-tokenizer alone on Go sources
// and on random Unicode.
func BenchmarkPretokens(b *testing.B) {
	for _, tt := range []struct{ name, text string }{{"go", goText()}, {"random", randomText()}} {
		b.Run(tt.name, func(b *testing.B) {
			if tt.text == "" {
				b.Skip("no Go sources under GOROOT")
			}
			b.SetBytes(int64(len(tt.text)))
			for b.Loop() {
				for i := 0; i < len(tt.text); {
					i = nextPretoken(tt.text, i)
				}
			}
		})
	}
}

// goRoot is the Go installation's root as `go env GOROOT` reports it, or
// "" without a go command.
func goRoot() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
