package pagecodec

import (
	"bytes"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// codecs are the codecs this binary has: Go, and LibZstd with cgo.
func codecs() []*Codec {
	if LibZstd == nil {
		return []*Codec{Go}
	}
	return []*Codec{Go, LibZstd}
}

// testPages are pages of every kind: empty, one byte, repetitive text and
// incompressible bytes.
func testPages() map[string][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 1<<20)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	return map[string][]byte{
		"empty":  {},
		"one":    []byte("x"),
		"text":   []byte(strings.Repeat("#___XOP_\nYou can push but not pull boxes. ", 30000)),
		"random": random,
	}
}

// Pages compressed by each codec decompress with an independent zstd
// decoder (klauspost/compress, which DuckDB-free readers of the files use
// through parquet-go) to the same bytes, whatever the output buffer given.
func TestRoundTrip(t *testing.T) {
	for _, c := range codecs() {
		t.Run(c.Name, func(t *testing.T) { roundTrip(t, c) })
	}
}

func roundTrip(t *testing.T, pageCodec *Codec) {
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	pages := testPages()
	for name, page := range pages {
		for _, dst := range [][]byte{nil, make([]byte, 0, 16), make([]byte, 5, 4<<20)} {
			enc, err := pageCodec.Encode(dst, page)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got, err := dec.DecodeAll(enc, nil)
			if err != nil {
				t.Fatalf("%s (dst cap %d): decode: %v", name, cap(dst), err)
			}
			if !bytes.Equal(got, page) {
				t.Fatalf("%s (dst cap %d): round trip gave %d bytes, want %d", name, cap(dst), len(got), len(page))
			}
			back, err := pageCodec.Decode(nil, enc)
			if err != nil || !bytes.Equal(back, page) {
				t.Fatalf("%s: pageCodec.Decode: %v", name, err)
			}
		}
	}
	if enc, _ := pageCodec.Encode(nil, pages["text"]); len(enc)*50 > len(pages["text"]) {
		t.Errorf("repetitive text compressed to %d of %d bytes", len(enc), len(pages["text"]))
	}
}

// The names the manifest records: the encoder, its level and the version
// built in (go.mod's klauspost/compress; the libzstd that DataDog/zstd
// v1.5.7 bundles).
func TestNames(t *testing.T) {
	if want := "zstd default level, klauspost/compress v1.20.3"; Go.Name != want {
		t.Errorf("Go.Name = %q, want %q", Go.Name, want)
	}
	if LibZstd == nil {
		if Default != Go {
			t.Errorf("without cgo Default is %q, want Go", Default.Name)
		}
		return
	}
	if want := "zstd level 3, libzstd 1.5.7"; LibZstd.Name != want {
		t.Errorf("LibZstd.Name = %q, want %q", LibZstd.Name, want)
	}
	if Default != LibZstd {
		t.Errorf("with cgo Default is %q, want LibZstd", Default.Name)
	}
}

// BenchmarkEncode compresses a page of rollout text (the embedded Sokoban,
// warehouse and Search-R1 fixtures, 60 kB of what a build's message
// columns hold) with each codec; ratio is compressed/original bytes.
func BenchmarkEncode(b *testing.B) {
	var page []byte
	for _, f := range []string{"sokoban", "warehouse", "searchr1"} {
		data, err := os.ReadFile("../../fixtures/testdata/" + f + ".golden.jsonl")
		if err != nil {
			b.Fatal(err)
		}
		page = append(page, data...)
	}
	for _, c := range codecs() {
		b.Run(c.Name, func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			var dst []byte
			for b.Loop() {
				var err error
				if dst, err = c.Encode(dst[:0], page); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(dst))/float64(len(page)), "ratio")
		})
	}
}

func TestGoZstdVersion(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want := "github.com/klauspost/compress " + goZstdVersion + "\n"
	if !strings.Contains(string(mod), want) {
		t.Errorf("go.mod requires no %q: update goZstdVersion (the manifest's codec name)", strings.TrimSpace(want))
	}
}
