package guard

import (
	"os"
	"slices"
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

// chatSeeds are Chat Completions requests for the same checks.
var chatSeeds = []string{
	`{"model":"m","stream":true,"stream_options":{"include_usage":true},"metadata":{"session_id":"s"},"tools":[{"type":"function"}],"messages":[{"role":"developer","content":"d"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}}]},{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"sh","arguments":"{\"c\":\"ls\"}"}}]},{"role":"tool","content":"out"}]}`,
	`{"model":"m","messages":[{"role":"assistant","content":"x","tool_calls":null},{"role":"user"}]}`,
	`{"model":"m","Stream":true,"messages":[{"role":"user","content":"hi"}]}`,
	`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"index":1.5,"function":{"name":"a","arguments":"{}"}}]}]}`,
	`{"model":"m","stream_options":null,"messages":[{"role":"user","content":"hi"}]}`,
	`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"function":null}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":{"a":1}}]}`,
}

// responsesSeeds are Responses requests for the same checks.
var responsesSeeds = []string{
	`{"model":"m","instructions":"i","store":false,"previous_response_id":"r1","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"d"}]},{"type":"reasoning","id":"rs_1"},{"type":"message","id":"msg_1","role":"assistant","content":null},{"type":"function_call","id":"fc_1","call_id":"c1","name":"sh","arguments":"{\"c\":1}"},{"type":"function_call_output","call_id":"c1","output":"ok"},{"type":"custom_tool_call","call_id":"c2","name":"apply_patch","input":"x"},{"type":"custom_tool_call_output","call_id":"c2","output":[{"type":"input_text","text":"done"}]},{"type":"local_shell_call","call_id":"c3","action":{"command":["ls"]}}]}`,
	`{"model":"m","stream":true,"input":"just this"}`,
	`{"model":"m","store":null,"input":"x"}`,
	`{"model":"m","input":null}`,
	`{"model":"m","input":[{"type":"message","Role":"user","content":"x"}]}`,
	`{"model":"m"}`,
}

// requestReaders pairs each codec's lexer reader with its encoding/json
// reader.
var requestReaders = []struct {
	name  string
	fast  func(*lexReader) (*Request, bool)
	slow  func([]byte) (*Request, error)
	seeds []string
	// left is where in seeds the bodies the lexer must leave begin.
	left int
	real string
}{
	{"anthropic", readAnthropic, decodeAnthropic, anthropicSeeds, 3, "claude"},
	{"chat", readChat, decodeChat, chatSeeds, 2, "qwen"},
	{"responses", readResponses, decodeResponses, responsesSeeds, 2, "codex"},
}

// checkReaders: where a lexer reads a body, encoding/json reads the same
// request from it.
func checkReaders(t *testing.T, body []byte) {
	for _, rr := range requestReaders {
		fast, _, ok := lexRead(body, nil, rr.fast)
		if !ok {
			continue
		}
		slow, err := rr.slow(body)
		if err != nil {
			t.Fatalf("%s: %.200s: the lexer read it, encoding/json failed: %v", rr.name, body, err)
		}
		if diff := cmp.Diff(slow, fast); diff != "" {
			t.Fatalf("%s: %.200s: lexer against encoding/json (-json +lexer):\n%s", rr.name, body, diff)
		}
	}
}

func TestRequestReaders(t *testing.T) {
	for _, rr := range requestReaders {
		real, err := os.ReadFile("testdata/requests/" + rr.real + ".json")
		if err != nil {
			t.Fatal(err)
		}
		bodies := [][]byte{real}
		if rr.name == "anthropic" {
			bodies = append(bodies, paddedClaudeRequest(t, 256<<10))
		}
		for _, s := range rr.seeds[:rr.left] {
			bodies = append(bodies, []byte(s))
		}
		for _, body := range bodies {
			if _, _, ok := lexRead(body, nil, rr.fast); !ok {
				t.Errorf("%s: the lexer left %.100s (%d bytes) to encoding/json", rr.name, body, len(body))
			}
			checkReaders(t, body)
		}
		for _, s := range rr.seeds[rr.left:] {
			checkReaders(t, []byte(s))
			if _, _, ok := lexRead([]byte(s), nil, rr.fast); ok {
				t.Errorf("%s: %s: the lexer read it, want it left to encoding/json", rr.name, s)
			}
		}
	}
}

// FuzzRequestReaders: a lexer and encoding/json never read a body two
// ways.
func FuzzRequestReaders(f *testing.F) {
	for _, s := range slices.Concat(anthropicSeeds, chatSeeds, responsesSeeds) {
		f.Add([]byte(s))
	}
	f.Fuzz(checkReaders)
}
