package uring

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"bagen-data/internal/testenv"
)

// A ring reads what pread reads: a thousand records at random offsets
// and of random sizes (empty ones too) from a 1 MiB file, through a ring
// of 8 entries, so in many batches; a read past the end comes back short
// and is left to the caller.
func TestRingReadsWhatPreadReads(t *testing.T) {
	r, err := New(8)
	if err != nil {
		testenv.Need(t, "io_uring", err)
	}
	defer r.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	f, data := randomFile(t, rng, 1<<20)
	offs := make([]int64, 1000)
	bufs := make([][]byte, len(offs))
	for i := range offs {
		n := rng.IntN(20000)
		if i%97 == 0 {
			n = 0
		}
		offs[i], bufs[i] = int64(rng.IntN(len(data)-n+1)), make([]byte, n)
	}
	short := len(offs) - 1
	offs[short], bufs[short] = int64(len(data)-10), make([]byte, 20)
	failed, ok, err := r.Read(int(f.Fd()), offs, bufs)
	if err != nil || !ok {
		t.Fatalf("read: ok %v, err %v", ok, err)
	}
	if len(failed) != 1 || failed[0] != short {
		t.Fatalf("reads left to pread: %v, want [%d] (the one past the end)", failed, short)
	}
	for i := range offs[:short] {
		if want := data[offs[i] : offs[i]+int64(len(bufs[i]))]; !bytes.Equal(bufs[i], want) {
			t.Fatalf("read %d (%d bytes at %d): got other bytes than the file's", i, len(bufs[i]), offs[i])
		}
	}
}

// BenchmarkRead reads 2,048 ranges of 1-16 KiB at random offsets of a
// 64 MiB file in the page cache (a chunk of a build's spill records)
// through a ring of 2,048 entries and with one pread each.
func BenchmarkRead(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	f, data := randomFile(b, rng, 64<<20)
	offs := make([]int64, 2048)
	bufs := make([][]byte, len(offs))
	var total int64
	for i := range offs {
		n := 1<<10 + rng.IntN(15<<10)
		offs[i], bufs[i] = int64(rng.IntN(len(data)-n)), make([]byte, n)
		total += int64(n)
	}
	b.Run("ring", func(b *testing.B) {
		r, err := New(uint32(len(offs)))
		if err != nil {
			b.Skip(err)
		}
		defer r.Close()
		b.SetBytes(total)
		for b.Loop() {
			if failed, ok, err := r.Read(int(f.Fd()), offs, bufs); err != nil || !ok || len(failed) > 0 {
				b.Fatalf("Read: %d failed, ok %v, err %v", len(failed), ok, err)
			}
		}
	})
	b.Run("pread", func(b *testing.B) {
		b.SetBytes(total)
		for b.Loop() {
			for i := range offs {
				if _, err := f.ReadAt(bufs[i], offs[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// randomFile is a file of size random bytes from rng, open for reading
// until tb ends, and its bytes.
func randomFile(tb testing.TB, rng *rand.Rand, size int) (*os.File, []byte) {
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	path := filepath.Join(tb.TempDir(), "spill")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	return f, data
}
