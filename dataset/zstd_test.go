package dataset

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// Pages compressed by pageCodec decompress with an independent zstd
// decoder (klauspost/compress, which DuckDB-free readers of the files use
// through parquet-go) to the same bytes, whatever the output buffer given.
func TestPageCodecRoundTrip(t *testing.T) {
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 1<<20)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	pages := map[string][]byte{
		"empty":  {},
		"one":    []byte("x"),
		"text":   []byte(strings.Repeat("#___XOP_\nYou can push but not pull boxes. ", 30000)),
		"random": random,
	}
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
