package dataset

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"bagen-data/probes"
	"bagen-data/rollout"
)

func TestParseRatio(t *testing.T) {
	tests := []struct{ in, want string }{
		{"40/50/10", ""},
		{"40/50", `split "40/50": want three percentages SFT/RL/EVAL such as 40/50/10`},
		{"40/50/11", `split "40/50/11": percentages sum to 101, want 100`},
		{"40/x/10", `split "40/x/10": "x" is not an integer percentage 0 to 100`},
		// Parts that sum to 100 only in wrapped int arithmetic.
		{"9223372036854775807/9223372036854775807/102", `split "9223372036854775807/9223372036854775807/102": "9223372036854775807" is not an integer percentage 0 to 100`},
	}
	for _, tt := range tests {
		r, err := ParseRatio(tt.in)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("ParseRatio(%q) error %q, want %q", tt.in, got, tt.want)
		}
		if err == nil && r != (Ratio{40, 50, 10}) {
			t.Errorf("ParseRatio(%q) = %+v", tt.in, r)
		}
	}
}

func TestAssignCutsAndIgnoresInputOrder(t *testing.T) {
	ids := make([]string, 25)
	for i := range ids {
		ids[i] = fmt.Sprintf("traj_%d", i)
	}
	got := Assign(ids, nil, Ratio{40, 50, 10}, 42)
	count := [3]int{}
	for _, s := range got {
		count[s]++
	}
	// ⌊25·0.4⌋ = 10, ⌊25·0.9⌋ = 22: 10, 12 and 3.
	if count != [3]int{10, 12, 3} {
		t.Errorf("split sizes %v, want [10 12 3]", count)
	}
	rev := slices.Clone(ids)
	slices.Reverse(rev)
	gotRev := Assign(rev, nil, Ratio{40, 50, 10}, 42)
	for i, id := range rev {
		if gotRev[i] != got[len(ids)-1-i] {
			t.Fatalf("%s: split %d with reversed input, %d in order", id, gotRev[i], got[len(ids)-1-i])
		}
	}
	other := Assign(ids, nil, Ratio{40, 50, 10}, 7)
	if slices.Equal(got, other) {
		t.Errorf("seeds 42 and 7 give the same split")
	}
}

func TestBalanced(t *testing.T) {
	var entries []Entry
	for i := range 10 {
		entries = append(entries, Entry{Traj: int32(i)})
	}
	possible := func(e Entry) bool { return e.Traj < 3 } // 3 possible, 7 impossible
	tests := []struct {
		name                        string
		b                           Balance
		pos, imp, dups, downsampled int
	}{
		{"paper defaults", Balance{Oversample: 2, Ratio: new(1.0)}, 6, 6, 3, 1},
		{"no duplication", Balance{Oversample: 1, Ratio: new(1.0)}, 3, 3, 0, 4},
		{"half as many impossible", Balance{Oversample: 2, Ratio: new(0.5)}, 6, 3, 3, 4},
		{"no cap", Balance{Oversample: 3, Ratio: new(0.0)}, 9, 7, 6, 0},
		{"neither", Balance{Oversample: 1, Ratio: new(0.0)}, 3, 7, 0, 0},
		{"zero value: the paper defaults", Balance{}, 6, 6, 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(entries)
			out, st := Balanced(in, possible, tt.b, 42, "sft")
			if diff := cmp.Diff(entries, in); diff != "" {
				t.Errorf("Balanced modified its input")
			}
			pos, imp := 0, 0
			for _, e := range out {
				if possible(e) {
					pos++
				} else {
					imp++
				}
			}
			if pos != tt.pos || imp != tt.imp || st.Duplicates != tt.dups || st.Downsampled != tt.downsampled {
				t.Errorf("got %d possible, %d impossible, %+v; want %d, %d, %d duplicates, %d downsampled",
					pos, imp, st, tt.pos, tt.imp, tt.dups, tt.downsampled)
			}
			again, _ := Balanced(slices.Clone(entries), possible, tt.b, 42, "sft")
			if !slices.Equal(out, again) {
				t.Errorf("same seed, different order")
			}
		})
	}
}

func TestSpillRoundTrip(t *testing.T) {
	traj := rollout.Trajectory{Messages: []rollout.Message{
		{Role: "system", Content: "sys"},
		{Role: "user", Content: "u0 (reward: -0.1)"}, {Role: "assistant", Content: "a0"},
		{Role: "user", Content: "ü1"}, {Role: "assistant", Content: ""},
		{Role: "user", Content: "trailing"},
	}}
	acc, err := probes.Account(traj, words{})
	if err != nil {
		t.Fatal(err)
	}
	gotT, gotA, err := decodeTurns(encodeTurns(traj, acc))
	if err != nil {
		t.Fatal(err)
	}
	wantMsgs := []rollout.Message{{Role: "user", Content: "u0 (reward: -0.1)"}, {Role: "assistant", Content: "a0"}, {Role: "user", Content: "ü1"}, {Role: "assistant", Content: ""}}
	if diff := cmp.Diff(wantMsgs, gotT.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(acc.Turns, gotA.Turns); diff != "" {
		t.Errorf("turns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][2]int{{0, 1}, {2, 3}}, gotA.Pairs); diff != "" {
		t.Errorf("pairs (-want +got):\n%s", diff)
	}
}

func FuzzDecodeTurns(f *testing.F) {
	f.Add(encodeTurns(rollout.Trajectory{Messages: []rollout.Message{{Role: "user", Content: "u"}, {Role: "assistant", Content: "a"}}},
		probes.Accounting{Pairs: [][2]int{{0, 1}}, Turns: []probes.TurnTokens{{In: 1, Out: 2}}}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		tr, a, err := decodeTurns(b)
		if err == nil && len(tr.Messages) != 2*len(a.Turns) {
			t.Fatalf("%d messages for %d turns", len(tr.Messages), len(a.Turns))
		}
		// A prefix of one turn: no panic, at most that turn.
		tr, a, err = decodeTurnsN(b, 1)
		if err == nil && (len(a.Turns) > 1 || len(tr.Messages) != 2*len(a.Turns)) {
			t.Fatalf("decodeTurnsN(b, 1): %d messages for %d turns", len(tr.Messages), len(a.Turns))
		}
	})
}

type words struct{}

func (words) Count(s string) int { return len(s) }

func TestWriteFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.parquet")
	rows := []RLRow{{DataSource: "d", Prompt: []rollout.Message{{Role: "user", Content: "q"}}, ExtraInfo: ExtraInfo{CustomID: "a_probe_after_turn_1", RemainingTokens: 12}}}
	if err := WriteFile(context.Background(), path, rows); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRL(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rows, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("%d files in the directory, want only x.parquet", len(entries))
	}
}

func TestAssignKeepsGroupsTogether(t *testing.T) {
	// 30 trajectories over 12 task instances: trajectory i starts from
	// instance i%12.
	ids := make([]string, 30)
	groups := make([]uint64, 30)
	for i := range ids {
		ids[i] = fmt.Sprintf("traj_%02d", i)
		groups[i] = uint64(i % 12)
	}
	got := Assign(ids, groups, Ratio{40, 50, 10}, 42)
	splitOf := map[uint64]int{}
	count := [3]int{}
	for i, s := range got {
		if prev, ok := splitOf[groups[i]]; ok && prev != s {
			t.Errorf("instance %d is in splits %d and %d", groups[i], prev, s)
		}
		splitOf[groups[i]] = s
		count[s]++
	}
	// Groups hold 3 or 2 trajectories, so the cuts at 12 and 27 land on a
	// group boundary at or after them.
	if count[0] < 12 || count[0] > 14 || count[0]+count[1] < 27 || count[2] == 0 {
		t.Errorf("split sizes %v, want about [12 15 3]", count)
	}
	// Input order does not matter.
	perm := []int{29, 3, 17, 0, 8, 21, 12, 5, 26, 1, 14, 9, 23, 6, 18, 2, 27, 11, 15, 4, 20, 7, 25, 13, 10, 28, 16, 22, 19, 24}
	pIDs, pGroups := make([]string, 30), make([]uint64, 30)
	for k, i := range perm {
		pIDs[k], pGroups[k] = ids[i], groups[i]
	}
	for k, s := range Assign(pIDs, pGroups, Ratio{40, 50, 10}, 42) {
		if s != got[perm[k]] {
			t.Fatalf("%s: split %d after reordering, %d before", pIDs[k], s, got[perm[k]])
		}
	}
}
