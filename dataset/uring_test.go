package dataset

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"bagen-data/internal/testenv"

	"bagen-data/probes"
)

// A ring reads what pread reads: a thousand records at random offsets
// and of random sizes (empty ones too) from a 1 MiB file, through a ring
// of 8 entries, so in many batches; a read past the end comes back short
// and is left to the caller.
func TestRingReadsWhatPreadReads(t *testing.T) {
	r, err := newRing(8)
	if err != nil {
		testenv.Need(t, "io_uring", err)
	}
	defer r.close()
	data := make([]byte, 1<<20)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	path := filepath.Join(t.TempDir(), "spill")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
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
	failed, ok, err := r.read(int(f.Fd()), offs, bufs)
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

// Without io_uring the build reads its spill with pread and writes the same
// bytes; a record that cannot be read fails the build with pread's error
// either way.
func TestBuildWithoutRings(t *testing.T) {
	dir := t.TempDir()
	in := writeInput(t, dir, "in.jsonl", canonical(40, 0))
	cfg := testConfig()
	cfg.Workers = 2
	build := func(out string) map[string][]byte {
		t.Helper()
		if _, err := Build(context.Background(), []probes.Source{in}, filepath.Join(dir, out), cfg); err != nil {
			t.Fatal(err)
		}
		return fileBytes(t, filepath.Join(dir, out))
	}
	with := build("rings")
	preadOnly.Store(true)
	without := build("pread")
	preadOnly.Store(false)
	for _, f := range []string{SFTFile, RLFile, EvalFile, ManifestFile} {
		if !bytes.Equal(with[f], without[f]) {
			t.Errorf("%s: differs between reading the spill through rings and with pread", f)
		}
	}

	sp, err := newSpill(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.close()
	if _, _, err := sp.add([]byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	if err := sp.finish(); err != nil {
		t.Fatal(err)
	}
	for _, rings := range []bool{true, false} {
		preadOnly.Store(!rings)
		bufs := [][]byte{make([]byte, 4), make([]byte, 8)}
		err := sp.readAll([]int64{6, 6}, bufs)
		preadOnly.Store(false)
		if err != io.EOF || string(bufs[0]) != "6789" {
			t.Fatalf("rings %v: readAll past the end = %v, first record %q; want io.EOF, %q", rings, err, bufs[0], "6789")
		}
	}
}
