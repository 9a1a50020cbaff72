package guard

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// anthropicSeeds are Messages requests the two readers must agree on,
// the real one included, and shapes where the lexer must leave the body
// to encoding/json.
var anthropicSeeds = []string{
	`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
	`{"model":"m","stream":true,"system":"s","metadata":{"user_id":"{\"session_id\":\"abc\"}"},"tools":[{}],"messages":[{"role":"user","content":[{"type":"text","text":"a\u00e9\ud83d\ude00"}]},{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"out"},{"type":"x","content":"in"},{"content":null}]}]}]}`,
	`{"model":"m","system":[{"type":"text","text":"s1"},{"type":"text","text":"s2"}],"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}]}]}`,
	`{"Model":"m","messages":[{"role":"user","content":"hi"}]}`,                       // a key encoding/json folds
	`{"model":"m","model":"n","messages":[{"role":"user","content":"hi"}]}`,           // a key twice
	`{"model":"m","stream":null,"messages":[{"role":"user","content":null}]}`,         // nulls
	`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":1}]}]}`, // a type error
	`{"model":"m","metadata":{"session_id":"s"},"messages":[{"role":"user","content":"\xff"}]}`,
	`{"model":"m","system":{"a":1},"messages":[{"role":"user","content":"hi"}]}`,
	`{"model":"m","messages":[]}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}]} x`,
}

// checkReaders: where the lexer reads a body, encoding/json reads the same
// request from it.
func checkReaders(t *testing.T, body []byte) {
	fast, ok := readAnthropic(body)
	if !ok {
		return
	}
	slow, err := decodeAnthropic(body)
	if err != nil {
		t.Fatalf("%.200s: the lexer read it, encoding/json failed: %v", body, err)
	}
	if diff := cmp.Diff(slow, fast); diff != "" {
		t.Fatalf("%.200s: lexer against encoding/json (-json +lexer):\n%s", body, diff)
	}
}

func TestAnthropicReaders(t *testing.T) {
	for _, s := range anthropicSeeds {
		checkReaders(t, []byte(s))
	}
	real, err := os.ReadFile("testdata/requests/claude.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range [][]byte{real, paddedClaudeRequest(t, 256<<10)} {
		if _, ok := readAnthropic(body); !ok {
			t.Errorf("the lexer left Claude Code's request (%d bytes) to encoding/json", len(body))
		}
		checkReaders(t, body)
	}
	for _, s := range anthropicSeeds[3:] {
		if _, ok := readAnthropic([]byte(s)); ok {
			t.Errorf("%s: the lexer read it, want it left to encoding/json", s)
		}
	}
}

// FuzzAnthropicRequestReaders: the lexer and encoding/json never read a
// body two ways.
func FuzzAnthropicRequestReaders(f *testing.F) {
	for _, s := range anthropicSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkReaders)
}
