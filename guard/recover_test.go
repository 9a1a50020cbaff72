package guard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/rollout"
)

// TestLedgerSharedFile: two guards' ledgers on one directory tell when
// the other wrote, and an append after a writer that crashed mid-line
// drops the cut line instead of continuing it.
func TestLedgerSharedFile(t *testing.T) {
	dir := t.TempDir()
	a, err := openLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := openLedger(dir)
	if a.changed("s-1") || b.changed("s-1") {
		t.Fatal("changed before any file exists")
	}
	one := rollout.GuardCall{Event: "call", Session: "s-1", Call: 1, Turn: 1}
	if err := a.append("s-1", one); err != nil {
		t.Fatal(err)
	}
	if a.changed("s-1") || !b.changed("s-1") {
		t.Fatalf("after a's append: a changed %v (want false), b changed %v (want true)", a.changed("s-1"), b.changed("s-1"))
	}
	if _, err := b.read("s-1"); err != nil || b.changed("s-1") {
		t.Fatalf("after b's read: err %v, changed %v", err, b.changed("s-1"))
	}
	path := filepath.Join(dir, "s-1.jsonl")
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"event":"call","session":"s-1","ca`) // a crash mid-line
	f.Close()
	two := rollout.GuardCall{Event: "call", Session: "s-1", Call: 2, Turn: 2}
	if err := b.append("s-1", two); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	want := string(mustJSON(one)) + "\n" + string(mustJSON(two)) + "\n"
	if string(data) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", data, want)
	}
	if !b.changed("s-1") {
		t.Error("b wrote after a foreign write: want changed until it reads")
	}
}

// TestReadLedgerState: the state of a session file is its events folded
// as the definitions say: the turns after the last restart of the
// numbering, the highest call, the estimates' cost, the first stop and
// whether a guard answer followed it; a cut last line is skipped, a bad
// line elsewhere is an error naming it.
func TestReadLedgerState(t *testing.T) {
	u := func(in, out int64) *rollout.GuardUsage { return &rollout.GuardUsage{Input: in, Output: out} }
	stop := rollout.GuardStop{Event: "stop", Session: "s", AfterTurn: 2, Reason: "budget", Spent: 900}
	lines := []any{
		rollout.GuardSession{Version: 1, Event: "session", Session: "s"},
		rollout.GuardCall{Event: "call", Call: 1, Turn: 1, Usage: u(10, 1)}, // a side call's turn
		rollout.GuardCall{Event: "call", Call: 2, Turn: 1, Tools: true, Usage: u(100, 5)},
		rollout.GuardEstimate{Event: "estimate", AfterTurn: 1, EstimatorInput: 300, EstimatorOutput: 7},
		rollout.GuardCall{Event: "call", Call: 4, Turn: 0, Status: 502},
		rollout.GuardCall{Event: "call", Call: 3, Turn: 2, Tools: true, Usage: nil},
		stop,
		rollout.GuardCall{Event: "call", Call: 5, Answered: "message"},
	}
	var data []byte
	for _, l := range lines {
		data = append(append(data, mustJSON(l)...), '\n')
	}
	got, err := readLedgerState("s.jsonl", append(data, `{"event":"ca`...))
	if err != nil {
		t.Fatal(err)
	}
	want := ledgerState{written: true, calls: 5, turns: 2, usage: []*rollout.GuardUsage{u(100, 5), nil}, tools: true,
		estimated: 1, estimatorTokens: 307, stop: &stop, stopActed: true}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(ledgerState{})); d != "" {
		t.Errorf("state (-want +got):\n%s", d)
	}
	if got.spent() != 900 {
		t.Errorf("spent %d, want the stop's 900", got.spent())
	}
	_, err = readLedgerState("s.jsonl", append([]byte("{\"event\":\"call\",\"call\":\"x\"}\n"), data...))
	if err == nil || !strings.HasPrefix(err.Error(), "ledger: s.jsonl:1: ") {
		t.Errorf("error %v: want it to name s.jsonl:1", err)
	}
}

// FuzzLedgerState: any file reads back without a panic, a bad line
// named by its number.
func FuzzLedgerState(f *testing.F) {
	f.Add([]byte(`{"bagen_guard":1,"event":"session","session":"s"}` + "\n" + `{"event":"call","call":1,"turn":1,"usage":{"input":5,"output":1}}` + "\n"))
	f.Add([]byte(`{"event":"stop","after_turn":3,"spent":10}` + "\n" + `{"event":"call","answered_by_guard":"message"}`))
	f.Add([]byte("\n\n{\"event\":\"estimate\",\"after_turn\":-1}\nnot json\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := readLedgerState("f.jsonl", data)
		if err != nil && !strings.HasPrefix(err.Error(), "ledger: f.jsonl:") {
			t.Fatalf("error %v: want it to name the file and line", err)
		}
		if err == nil {
			st.spent()
		}
	})
}
