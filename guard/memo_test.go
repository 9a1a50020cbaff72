package guard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/rollout"
)

// historyKeys is the key of each codec's history array.
var historyKeys = map[string]string{"anthropic": "messages", "chat": "messages", "responses": "input"}

// nextTurns are elements each codec's agent adds to its history: a tool
// call, its result, and the assistant's text.
var nextTurns = map[string][3]string{
	"anthropic": {`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_next","name":"Bash","input":{"command":"ls"}}]}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_next","content":"a\nb"}]}`,
		`{"role":"assistant","content":[{"type":"text","text":"done"}]}`},
	"chat": {`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_next","type":"function","function":{"name":"sh","arguments":"{\"c\":\"ls\"}"}}]}`,
		`{"role":"tool","tool_call_id":"call_next","content":"a\nb"}`,
		`{"role":"assistant","content":"done"}`},
	"responses": {`{"type":"function_call","call_id":"c_next","name":"shell","arguments":"{\"command\":[\"ls\"]}"}`,
		`{"type":"function_call_output","call_id":"c_next","output":"a\nb"}`,
		`{"type":"message","id":"msg_next","role":"assistant","content":[{"type":"output_text","text":"done"}]}`},
}

// appendHistory is body with elems added to the end of its history
// array (at end, its closing bracket).
func appendHistory(body []byte, end int, elems ...string) []byte {
	return fmt.Appendf(nil, "%s,%s%s", body[:end], strings.Join(elems, ","), body[end:])
}

// historyOf returns body's history array: its elements and the offset
// of its closing bracket, found with encoding/json.
func historyOf(t *testing.T, body []byte, key string) ([]json.RawMessage, int) {
	t.Helper()
	var top map[string]json.RawMessage
	var elems []json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(top[key], &elems); err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(body, top[key])
	if at < 0 || bytes.Count(body, top[key]) != 1 {
		t.Fatalf("%s: the array is not found once in the body", key)
	}
	return elems, at + len(top[key]) - 1
}

// TestReadAgainstMemo: each codec's real request, then the same with a
// turn added, then that with an element changed, each read against the
// memo of the one before: the Request equals a reading from scratch and
// encoding/json's, and the elements taken from the memo are those that
// stand byte for byte at the same place.
func TestReadAgainstMemo(t *testing.T) {
	for _, rr := range requestReaders {
		t.Run(rr.name, func(t *testing.T) {
			first, err := os.ReadFile("testdata/requests/" + rr.real + ".json")
			if err != nil {
				t.Fatal(err)
			}
			key := historyKeys[rr.name]
			turn := nextTurns[rr.name]
			elems, end := historyOf(t, first, key)
			grown := appendHistory(first, end, turn[0], turn[1])
			all, _ := historyOf(t, grown, key)
			// The second element changed at its first key: a marker
			// added, as a client moves its cache marker.
			at := bytes.Index(grown, all[1])
			changed := fmt.Appendf(nil, "%s{\"_\":\"x\",%s", grown[:at], grown[at+1:])
			_, end = historyOf(t, changed, key)
			// The assistant's text, then a call of the same turn: the
			// ids echoed and the turn's grouping come from the memo.
			text := appendHistory(changed, end, turn[2])
			_, end = historyOf(t, text, key)
			call := appendHistory(text, end, turn[0])
			// A key added after the history: the rest is read again.
			closing := bytes.LastIndexByte(call, '}')
			extra := fmt.Appendf(nil, "%s,\"x_extra\":1%s", call[:closing], call[closing:])
			steps := []struct {
				body      []byte
				resumed   int
				tailKnown bool
			}{{first, 0, false}, {grown, len(elems), true}, {changed, 1, true}, {changed, len(all), true},
				{text, len(all), true}, {call, len(all) + 1, true}, {extra, len(all) + 2, false}}
			var memo *readMemo
			for i, st := range steps {
				got, m, ok := lexRead(st.body, memo, rr.fast)
				if !ok {
					t.Fatalf("step %d: the lexer left the body to encoding/json", i)
				}
				fresh, _, _ := lexRead(st.body, nil, rr.fast)
				slow, err := rr.slow(st.body)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(fresh, got); diff != "" {
					t.Errorf("step %d: against the memo vs from scratch (-scratch +memo):\n%s", i, diff)
				}
				if diff := cmp.Diff(slow, got); diff != "" {
					t.Errorf("step %d: against the memo vs encoding/json (-json +memo):\n%s", i, diff)
				}
				if m.resumed != st.resumed || m.tailKnown != st.tailKnown {
					t.Errorf("step %d: %d elements taken from the memo, want %d; the rest taken %v, want %v",
						i, m.resumed, st.resumed, m.tailKnown, st.tailKnown)
				}
				memo = m
			}
		})
	}
}

// FuzzReadAgainstMemo: a body read against the memo of any other body
// reads as it does from scratch, or is left to encoding/json both ways.
func FuzzReadAgainstMemo(f *testing.F) {
	for _, seeds := range [][]string{anthropicSeeds, chatSeeds, responsesSeeds} {
		for i, s := range seeds {
			f.Add([]byte(s), []byte(s))
			f.Add([]byte(s), []byte(seeds[(i+1)%len(seeds)]))
		}
	}
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`),
		[]byte(`{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}`))
	// A body that differs from a valid one inside a rune, made invalid.
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"aé"}]}`),
		[]byte("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"a\xc3\x28\"}]}"))
	f.Fuzz(func(t *testing.T, prev, body []byte) {
		for _, rr := range requestReaders {
			_, memo, ok := lexRead(prev, nil, rr.fast)
			if !ok {
				continue
			}
			got, _, gotOK := lexRead(body, memo, rr.fast)
			want, _, wantOK := lexRead(body, nil, rr.fast)
			if gotOK != wantOK {
				t.Fatalf("%s: %.200s against %.200s: read %v against the memo, %v from scratch", rr.name, body, prev, gotOK, wantOK)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%s: %.200s against %.200s (-scratch +memo):\n%s", rr.name, body, prev, diff)
			}
		}
	})
}

// TestMemosDropTheLeastRecent: past the limit, the memo used least
// recently goes first; a memo put again under its key replaces the old.
func TestMemosDropTheLeastRecent(t *testing.T) {
	ms := newMemos()
	ms.limit = 10
	memo := func(n int) *readMemo { return &readMemo{body: make([]byte, n)} }
	ms.put("a", memo(4))
	ms.put("b", memo(4))
	ms.get("a")
	ms.put("c", memo(4)) // 12 > 10: b, least recently used, goes
	ms.put("a", memo(5)) // replaces a's 4 bytes: 9
	got := []bool{ms.get("a") != nil, ms.get("b") != nil, ms.get("c") != nil}
	if want := []bool{true, false, true}; !cmp.Equal(got, want) || ms.bytes != 9 {
		t.Errorf("held a, b, c = %v (%d bytes), want %v (9 bytes)", got, ms.bytes, want)
	}
	ms.put("d", memo(20)) // alone past the limit: kept, the others go
	if ms.get("d") == nil || ms.get("a") != nil || ms.bytes != 20 {
		t.Errorf("a memo past the limit: d held %v, a held %v, %d bytes", ms.get("d") != nil, ms.get("a") != nil, ms.bytes)
	}
}

// TestPrefixHashesFrom: hashes taken from an earlier list where the two
// begin alike equal hashes computed anew, and lists that differ in an
// item differ in its prefix hash and every later one.
func TestPrefixHashesFrom(t *testing.T) {
	prev := []rollout.Message{{Role: "system", Content: "s"}, {Role: "user", Content: "u"}, {Role: "assistant", Content: "a"}}
	items := []rollout.Message{{Role: "system", Content: "s"}, {Role: "user", Content: "u"}, {Role: "assistant", Content: "b"}, {Role: "tool", Content: "t"}}
	got := prefixHashesFrom(prev, prefixHashes(prev), items)
	want := prefixHashes(items)
	if !cmp.Equal(got, want) {
		t.Fatalf("from prev: %x, anew: %x", got, want)
	}
	p := prefixHashes(prev)
	for i := range p {
		if same := got[i] == p[i]; same != (i <= 2) {
			t.Errorf("hash of the first %d items: shared with prev %v, want %v", i, same, i <= 2)
		}
	}
	// A role and content split elsewhere do not collide.
	a := prefixHashes([]rollout.Message{{Role: "user", Content: "ab"}})
	b := prefixHashes([]rollout.Message{{Role: "usera", Content: "b"}})
	if a[1] == b[1] {
		t.Errorf("user/ab and usera/b hash alike: %x", a[1])
	}
}

// TestMemoBodyFreedOnce: a memo's body goes back once, when neither the
// memos nor a reading hold it any more.
func TestMemoBodyFreedOnce(t *testing.T) {
	ms := newMemos()
	freed := 0
	old := &readMemo{body: []byte("old"), free: func([]byte) { freed++ }}
	ms.put("k", old)
	held := ms.get("k")
	ms.put("k", &readMemo{body: []byte("new")}) // replaces old, still read
	if freed != 0 {
		t.Fatalf("freed %d times while a reading holds it", freed)
	}
	held.drop()
	held.drop() // a second drop past zero must not free again
	if freed != 1 {
		t.Errorf("freed %d times, want 1", freed)
	}
}
