package dataset

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/probes"
	"bagen-data/rollout"
)

// A record's first ends[k-1] bytes decode to its first k turns, as the
// whole record's first k turns.
func TestDecodeTurnsPrefix(t *testing.T) {
	traj := rollout.Trajectory{Messages: []rollout.Message{
		{Role: "user", Content: "u0 (reward: -0.1)"}, {Role: "assistant", Content: "a0"},
		{Role: "user", Content: "ü1"}, {Role: "assistant", Content: ""},
		{Role: "user", Content: "u2"}, {Role: "assistant", Content: "a2 longer"},
	}}
	acc, err := probes.Account(traj, words{})
	if err != nil {
		t.Fatal(err)
	}
	rec, ends := appendTurns(nil, traj, acc)
	if diff := cmp.Diff([]int32{24, 31, 46}, ends); diff != "" {
		t.Errorf("ends (-want +got):\n%s", diff)
	}
	if ends[len(ends)-1] != int32(len(rec)) {
		t.Fatalf("last end %d, record %d bytes", ends[len(ends)-1], len(rec))
	}
	allT, allA, err := decodeTurns(rec)
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k <= len(ends); k++ {
		gotT, gotA, err := decodeTurnsN(rec[:ends[k-1]], k)
		if err != nil {
			t.Fatalf("%d turns: %v", k, err)
		}
		if diff := cmp.Diff(allT.Messages[:2*k], gotT.Messages); diff != "" {
			t.Errorf("%d turns: messages (-want +got):\n%s", k, diff)
		}
		if diff := cmp.Diff(allA.Turns[:k], gotA.Turns); diff != "" {
			t.Errorf("%d turns: counts (-want +got):\n%s", k, diff)
		}
		if diff := cmp.Diff(allA.Pairs[:k], gotA.Pairs); diff != "" {
			t.Errorf("%d turns: pairs (-want +got):\n%s", k, diff)
		}
	}
	// A prefix cut inside a turn is corrupt, not a shorter trajectory.
	if _, _, err := decodeTurnsN(rec[:ends[1]-1], 2); err == nil {
		t.Error("a record cut inside turn 2 decoded")
	}
	// The whole record still rejects trailing bytes.
	if _, _, err := decodeTurnsN(append(rec[:len(rec):len(rec)], 0), -1); err == nil {
		t.Error("trailing bytes accepted")
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
		if _, err := Build(context.Background(), []rollout.Source{in}, filepath.Join(dir, out), cfg); err != nil {
			t.Fatal(err)
		}
		return fileBytes(t, filepath.Join(dir, out))
	}
	with := build("rings")
	cfg.preadOnly = true
	without := build("pread")
	for _, f := range []string{SFTFile, RLFile, EvalFile, ManifestFile} {
		if !bytes.Equal(with[f], without[f]) {
			t.Errorf("%s: differs between reading the spill through rings and with pread", f)
		}
	}

	for _, rings := range []bool{true, false} {
		sp, err := newSpill(dir, !rings)
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
		bufs := [][]byte{make([]byte, 4), make([]byte, 8)}
		err = sp.readAll([]int64{6, 6}, bufs)
		if err != io.EOF || string(bufs[0]) != "6789" {
			t.Fatalf("rings %v: readAll past the end = %v, first record %q; want io.EOF, %q", rings, err, bufs[0], "6789")
		}
	}
}
