package dataset

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/probes"
)

// A record's first ends[k-1] bytes decode to its first k turns, as the
// whole record's first k turns.
func TestDecodeTurnsPrefix(t *testing.T) {
	traj := probes.Trajectory{Messages: []probes.Message{
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
