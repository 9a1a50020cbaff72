package rollout

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readSession reads one session file written from lines.
func readSession(t *testing.T, name string, lines ...string) Trajectory {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := mustReadAll(t, nil, p)
	if len(ts) != 1 {
		t.Fatalf("%d trajectories, want 1", len(ts))
	}
	return ts[0]
}

// TestClaudeCodeEdges: the lines of one call merge into one turn with its
// usage counted once; a later copy of a call already read, and a message
// Claude Code wrote itself, are not calls; sidechain calls are turns in
// file order; cache writes are part of the input.
func TestClaudeCodeEdges(t *testing.T) {
	u := func(in, read, create, out int) string {
		return `"usage":{"input_tokens":` + itoa(in) + `,"cache_read_input_tokens":` + itoa(read) + `,"cache_creation_input_tokens":` + itoa(create) + `,"output_tokens":` + itoa(out) + `}`
	}
	tr := readSession(t, "s.jsonl",
		`{"type":"summary","summary":"Earlier","leafUuid":"x"}`,
		`{"type":"user","sessionId":"s1","cwd":"/repo","message":{"role":"user","content":"Fix it."}}`,
		`{"type":"assistant","sessionId":"s1","message":{"id":"m1","model":"c","content":[{"type":"thinking","thinking":"hmm","signature":"z"}],`+u(10, 100, 20, 40)+`}}`,
		`{"type":"assistant","sessionId":"s1","message":{"id":"m1","model":"c","content":[{"type":"text","text":"Looking."}],`+u(10, 100, 20, 40)+`}}`,
		`{"type":"assistant","sessionId":"s1","message":{"id":"m1","model":"c","content":[{"type":"tool_use","id":"t1","name":"Task","input":{"prompt":"find"}}],`+u(10, 100, 20, 40)+`}}`,
		`{"type":"user","sessionId":"s1","isSidechain":true,"message":{"role":"user","content":"find"}}`,
		`{"type":"assistant","sessionId":"s1","isSidechain":true,"message":{"id":"m2","model":"h","content":[{"type":"text","text":"Found."}],`+u(5, 0, 0, 3)+`}}`,
		`{"type":"user","sessionId":"s1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"Found."}]}]}}`,
		`{"type":"assistant","sessionId":"s1","message":{"id":"m1","model":"c","content":[{"type":"text","text":"copy"}],`+u(10, 100, 20, 40)+`}}`,
		`{"type":"assistant","sessionId":"s1","message":{"id":"e1","model":"<synthetic>","content":[{"type":"text","text":"API Error"}],`+u(0, 0, 0, 0)+`}}`,
		`{"type":"assistant","sessionId":"s1","message":{"id":"m3","model":"c","content":[{"type":"text","text":"Done."}],"usage":{"input_tokens":1,"cache_read_input_tokens":150,"output_tokens":2,"output_tokens_details":{"thinking_tokens":0}}}}`,
	)
	want := Trajectory{ID: "s1", Extra: Extra{Instance: "/repo"}, Inputs: InputsRequest, Outcome: OutcomeNone, Pos: tr.Pos,
		Messages: []Message{
			user("Fix it."),
			assistant("Looking.\n\n<tool_call>\n{\"name\": \"Task\", \"arguments\": {\"prompt\":\"find\"}}\n</tool_call>"),
			user("find"),
			assistant("Found."),
			user("Found."),
			assistant("Done."),
		},
		API: []APITokens{
			{Input: 130, Output: 40, Cached: 100},
			{Input: 5, Output: 3},
			{Input: 151, Output: 2, Cached: 150, Reasoning: Tokens(0)},
		}}
	if diff := cmp.Diff(want, tr); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestCodexEdges: a token_count that repeats the previous total is the
// same call reported again; one without info is not a call; a call with
// only reasoning is a turn with empty text; custom tool calls and object
// outputs are read.
func TestCodexEdges(t *testing.T) {
	tc := func(total, in, cached, out, reasoning int) string {
		return `{"timestamp":"t","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"total_tokens":` + itoa(total) +
			`},"last_token_usage":{"input_tokens":` + itoa(in) + `,"cached_input_tokens":` + itoa(cached) + `,"output_tokens":` + itoa(out) + `,"reasoning_output_tokens":` + itoa(reasoning) + `}}}}`
	}
	tr := readSession(t, "rollout-x.jsonl",
		`{"timestamp":"t","type":"session_meta","payload":{"id":"c1","cwd":"/repo","instructions":"Be brief."}}`,
		`{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Patch it."}]}}`,
		`{"timestamp":"t","type":"response_item","payload":{"type":"custom_tool_call","call_id":"a","name":"apply_patch","input":"*** Begin Patch"}}`,
		`{"timestamp":"t","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"a","output":{"content":"Done!","success":true}}}`,
		tc(110, 100, 80, 10, 4),
		tc(110, 100, 80, 10, 4),
		`{"timestamp":"t","type":"event_msg","payload":{"type":"token_count","info":null}}`,
		`{"timestamp":"t","type":"response_item","payload":{"type":"reasoning","summary":[]}}`,
		tc(240, 120, 100, 10, 10),
		`{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Patched."}]}}`,
		tc(370, 125, 120, 5, 0),
	)
	want := Trajectory{ID: "c1", Extra: Extra{Instance: "/repo"}, Inputs: InputsRequest, Outcome: OutcomeNone, Pos: tr.Pos,
		Messages: []Message{
			system("Be brief."),
			user("Patch it."),
			assistant("<tool_call>\n{\"name\": \"apply_patch\", \"arguments\": \"*** Begin Patch\"}\n</tool_call>"),
			user("Done!"),
			assistant(""),
			user(""),
			assistant("Patched."),
		},
		API: []APITokens{
			{Input: 100, Output: 10, Cached: 80, Reasoning: Tokens(4)},
			{Input: 120, Output: 10, Cached: 100, Reasoning: Tokens(10)},
			{Input: 125, Output: 5, Cached: 120, Reasoning: Tokens(0)},
		}}
	if diff := cmp.Diff(want, tr); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestQwenCodeEdges: Gemini's own usage counts the thoughts apart from the
// candidates (total = prompt + candidates + thoughts) and they are added
// to the output; thought text is hidden; a function response without an
// output string is shown as JSON.
func TestQwenCodeEdges(t *testing.T) {
	tr := readSession(t, "q.jsonl",
		`{"uuid":"1","sessionId":"q1","type":"user","cwd":"/repo","message":{"role":"user","parts":[{"text":"Go."}]}}`,
		`{"uuid":"2","sessionId":"q1","type":"assistant","message":{"role":"model","parts":[{"text":"plan","thought":true},{"functionCall":{"name":"read_file","args":{"path":"a"}}}]},`+
			`"usageMetadata":{"promptTokenCount":50,"candidatesTokenCount":7,"thoughtsTokenCount":3,"cachedContentTokenCount":20,"totalTokenCount":60}}`,
		`{"uuid":"3","sessionId":"q1","type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"name":"read_file","response":{"content":"x"}}}]}}`,
		`{"uuid":"4","sessionId":"q1","type":"system","subtype":"ui_telemetry","systemPayload":{}}`,
		`{"uuid":"5","sessionId":"q1","type":"assistant","message":{"role":"model","parts":[{"text":"Ok."}]},`+
			`"usageMetadata":{"promptTokenCount":70,"candidatesTokenCount":6,"thoughtsTokenCount":2,"totalTokenCount":76}}`,
	)
	want := Trajectory{ID: "q1", Extra: Extra{Instance: "/repo"}, Inputs: InputsRequest, Outcome: OutcomeNone, Pos: tr.Pos,
		Messages: []Message{
			user("Go."),
			assistant("<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\":\"a\"}}\n</tool_call>"),
			user(`{"content":"x"}`),
			assistant("Ok."),
		},
		API: []APITokens{
			{Input: 50, Output: 10, Cached: 20, Reasoning: Tokens(3)}, // Gemini: 7 candidates + 3 thoughts
			{Input: 70, Output: 6, Reasoning: Tokens(2)},              // OpenAI-compatible: thoughts inside
		}}
	if diff := cmp.Diff(want, tr); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// topKeys finds keys written with escapes, gives values as written, does
// not read past the object, and rejects a line whose skipped values are
// not JSON, at the byte where they stop being.
func TestTopKeys(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       []string
		err        string
	}{
		{"values", ` {"b": [1, {"x":"}"}], "a":"s\n" } `, []string{`"s\n"`, `[1, {"x":"}"}]`}, ""},
		{"escaped key", `{"\u0061":1}`, []string{`1`, ``}, ""},
		{"absent", `{"c":null}`, []string{``, ``}, ""},
		{"after the object", `{"a":1} x`, []string{`1`, ``}, ""},
		{"bad skipped value", `{"c":{"d":tru},"a":1}`, nil, "s.jsonl:4: invalid JSON at byte 10: invalid literal, want true"},
		{"cut", `{"a":1,"b":[`, nil, "s.jsonl:4: invalid JSON at byte 12: unexpected end of input"},
		{"not an object", `[1]`, nil, "s.jsonl:4: want a JSON object, got [1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := Record{Pos: Position{File: "s.jsonl", Line: 4, Index: -1}, Data: []byte(tc.line)}
			got, err := topKeys(rec, "a", "b")
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("topKeys(%s): error %v, want %s", tc.line, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("topKeys(%s): %v", tc.line, err)
			}
			for i, w := range tc.want {
				if string(got[i]) != w {
					t.Errorf("topKeys(%s)[%d] = %s, want %s", tc.line, i, got[i], w)
				}
			}
		})
	}
}
