package rollout

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// write puts files (name -> content) under a fresh directory.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const miniHead = `{"trajectory_format": "mini-swe-agent-1.1", "info": {"exit_status": "Submitted"}, "messages": [`

func TestBadInputs(t *testing.T) {
	tests := []struct {
		name, file, data string
		o                *Options
		want             string
	}{
		{"mini: unknown role", "a.traj.json", miniHead + `{"role":"user","content":"t"},{"role":"critic","content":"x"}]}`, nil,
			`a.traj.json:1: messages[1].role: want system (first), user, assistant, tool or exit, or a Responses item, got role "critic" type ""`},
		{"mini: no call", "a.traj.json", miniHead + `{"role":"system","content":"s"},{"role":"user","content":"t"}]}`, nil,
			`a.traj.json:1: messages: no assistant message (no LLM call)`},
		{"mini: usage fractional", "a.traj.json", miniHead + `{"role":"user","content":"t"},{"role":"assistant","content":"a","extra":{"response":{"usage":{"prompt_tokens":96.5,"completion_tokens":3}}}}]}`, nil,
			`a.traj.json:1: messages[1].extra.response.usage.prompt_tokens: want a whole number, got 96.5`},
		{"mini: cached over input", "a.traj.json", miniHead + `{"role":"user","content":"t"},{"role":"assistant","content":"a","extra":{"response":{"usage":{"prompt_tokens":10,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":11}}}}}]}`, nil,
			`a.traj.json:1: messages[1].extra.response.usage.cached: 11 cached tokens exceed the input's 10`},
		{"mini: responses output not an array", "a.traj.json", miniHead + `{"role":"user","content":"t"},{"object":"response","output":{}}]}`, nil,
			`a.traj.json:1: messages[1].output: want an array of output items, got {}`},
		{"mini: function call without name", "a.traj.json", miniHead + `{"role":"user","content":"t"},{"object":"response","output":[{"type":"function_call","arguments":"{}"}]}]}`, nil,
			`a.traj.json:1: messages[1].output[0].name: missing`},
		{"mini: messages not an array", "a.traj.json", `{"trajectory_format": "mini-swe-agent-1", "info": {}, "messages": {}}`, nil,
			`a.traj.json:1: messages: want an array, got JSON object`},
		{"mini: reward not a number", "a.json", `{"trajectory_format": "mini-swe-agent-1.1", "reward": "yes", "info": {}, "messages": [{"role":"user","content":"t"},{"role":"assistant","content":"a"}]}`, nil,
			`a.json:1: reward: want a number, got "yes"`},
		{"atif: no source", "trajectory.json", `{"schema_version":"ATIF-v1.5","steps":[{"step_id":1,"message":"m"}]}`, nil,
			`trajectory.json:1: steps[0].source: missing`},
		{"atif: bad source", "trajectory.json", `{"schema_version":"ATIF-v1.5","steps":[{"step_id":1,"source":"tool","message":"m"}]}`, nil,
			`trajectory.json:1: steps[0].source: want "system", "user" or "agent", got "tool"`},
		{"atif: no agent step", "trajectory.json", `{"schema_version":"ATIF-v1.5","steps":[{"step_id":1,"source":"user","message":"m"}]}`, nil,
			`trajectory.json:1: steps: no agent step (no LLM call)`},
		{"atif: fractional prompt tokens", "trajectory.json", `{"schema_version":"ATIF-v1.5","steps":[{"source":"agent","message":"m","metrics":{"prompt_tokens":96.5}}]}`, nil,
			`trajectory.json:1: steps[0].metrics.prompt_tokens: want a whole number, got 96.5`},
		{"atif: tool call without name", "trajectory.json", `{"schema_version":"ATIF-v1.5","steps":[{"source":"agent","message":"m","tool_calls":[{"arguments":{}}]}]}`, nil,
			`trajectory.json:1: steps[0].tool_calls[0].function_name: missing`},
		{"atif: observation not text", "trajectory.json", `{"schema_version":"ATIF-v1.5","steps":[{"source":"agent","message":"m","observation":{"results":[{"content":5}]}}]}`, nil,
			`trajectory.json:1: steps[0].observation.results[0].content: want a string or a list of text blocks, got 5`},
		{"openhands: event not an object", "t.json", `[{"source":"user","action":"message","args":{"content":"x"}}, 5]`, nil,
			`t.json: [1]: want an event object, got 5`},
		{"openhands: no call", "t.json", `[{"source":"user","action":"message","args":{"content":"x"}}]`, nil,
			`t.json: no agent action with an LLM response`},
		{"openhands: user message without args", "t.json", `[{"source":"user","action":"message"}]`, nil,
			`t.json: [0].args: missing`},
		{"openhands: response without choices", "t.json", `[{"source":"user","action":"message","args":{"content":"x"}},{"source":"agent","action":"run","tool_call_metadata":{"model_response":{"id":"r","choices":[]}}}]`, nil,
			`t.json: [1].tool_call_metadata.model_response.choices: missing or empty`},
		{"openhands output: second line without id", "output.jsonl", `{"instance_id":"a","history":[{"source":"agent","action":"message","message":"m"}]}` + "\n" + `{"history":[]}`, nil,
			`output.jsonl:2: instance_id: missing or empty`},
		{"openhands output: token usage fractional", "output.jsonl", `{"instance_id":"a","history":[{"source":"agent","action":"run","tool_call_metadata":{"model_response":{"id":"r","choices":[{"message":{"content":"c"}}]}}}],"metrics":{"token_usages":[{"prompt_tokens":1.5,"response_id":"r"}]}}`, nil,
			`output.jsonl:1: metrics.token_usages[response_id=r].prompt_tokens: want a whole number, got 1.5`},
		{"inspect: sample without id", "i.json", `{"eval":{},"samples":[{"messages":[]}]}`, nil,
			`i.json[0]: id: missing`},
		{"inspect: unknown role", "i.json", `{"eval":{},"samples":[{"id":1,"messages":[{"role":"critic","content":"x"}]}]}`, nil,
			`i.json[0]: messages[0].role: want system, user, assistant or tool, got "critic"`},
		{"inspect: bad score", "i.json", `{"eval":{},"samples":[{"id":1,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}],"scores":{"m":{"value":"maybe"}}}]}`, nil,
			`i.json[0]: scores.m.value: want C, I, P, N, a number or a boolean, got "maybe"`},
		{"inspect: fractional usage", "i.json", `{"eval":{},"samples":[{"id":1,"messages":[{"role":"user","content":"q"}],"events":[{"event":"model","output":{"choices":[{"message":{"id":"a"}}],"usage":{"input_tokens":1.5}}}]}]}`, nil,
			`i.json[0]: events[0].output.usage.input_tokens: want a whole number, got 1.5`},
		{"inspect: not a zip", "x.eval", "PK\x03\x04garbage", nil,
			`x.eval: want an Inspect .eval zip: zip: not a valid zip file`},
		{"swe-agent: empty trajectory", "a.traj", `{"trajectory":[],"info":{}}`, nil,
			`a.traj:1: trajectory: missing or empty`},
		{"swe-agent: step without response", "a.traj", `{"trajectory":[{"observation":"o"}],"history":[],"info":{}}`, nil,
			`a.traj:1: trajectory[0].response: missing`},
		{"swe-agent: tool calls not an array", "a.traj", `{"trajectory":[{"response":"r"}],"history":[{"role":"assistant","content":"r","tool_calls":{}}],"info":{}}`, nil,
			`a.traj:1: history[0].tool_calls: want an array of tool calls, got {}`},
		{"invalid UTF-8 in a pretty document", "a.traj.json", miniHead + "\n{\"role\":\"user\",\"content\":\"ok\"},\n{\"role\":\"user\",\"content\":\"caf\xe9\"}]}", nil,
			`a.traj.json:3: messages[1].content: invalid UTF-8 at byte 157 of the record (pass --replace-invalid-utf8 to replace it with U+FFFD)`},
		{"invalid UTF-8 in JSONL", "r.jsonl", "{\"custom_id\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}\n{\"custom_id\":\"b\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\",\"content\":\"\xff\xfe\"}]}\n", nil,
			`r.jsonl:2: messages[1].content: invalid UTF-8 at byte 90 of the record (pass --replace-invalid-utf8 to replace it with U+FFFD)`},
		{"message over the limit", "r.jsonl", `{"custom_id":"a","messages":[{"role":"user","content":"0123456789"}]}`, &Options{MaxMessageBytes: 8},
			`r.jsonl:1: messages[0].content: over the size limit: 10 bytes, more than the message limit 8`},
		{"line over the record limit", "r.jsonl", `{"custom_id":"a","messages":[{"role":"user","content":"` + strings.Repeat("x", 300) + `"}]}`, &Options{MaxMessageBytes: 8},
			`r.jsonl:1: over the size limit: line longer than 256 bytes (32 × the message limit)`},
		{"document over the record limit", "a.traj.json", miniHead + "\n" + strings.Repeat(" ", 300) + "]}", &Options{MaxMessageBytes: 8},
			`a.traj.json: over the size limit: document longer than 256 bytes (32 × the message limit)`},
		{"report as input", "report.json", `{"resolved_ids": []}`, nil,
			`report.json:1: not a trajectory log: SWE-bench harness report (resolved_ids): pass it with --results`},
		{"forced dialogue on JSONL", "r.jsonl", `{"custom_id":"a"}`, &Options{Format: Dialogue},
			`r.jsonl:1: format dialogue: want a JSON array, got '{'`},
		{"forced rollout on a document", "a.traj.json", miniHead + "\n" + `{"role":"user","content":"t"}]}`, &Options{Format: Rollout},
			`a.traj.json:1: custom_id: missing`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := write(t, map[string]string{tt.file: tt.data})
			_, err := readAll(t, tt.o, filepath.Join(dir, tt.file))
			if err == nil {
				t.Fatalf("no error, want %s", tt.want)
			}
			if got := strings.TrimPrefix(err.Error(), dir+"/"); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Errorf("%v is not a *ParseError", err)
			}
		})
	}
}

func TestReplaceInvalidUTF8(t *testing.T) {
	dir := write(t, map[string]string{"r.jsonl": "{\"custom_id\":\"b\",\"messages\":[{\"role\":\"user\",\"content\":\"caf\xe9 \xff\"}]}\n"})
	got := mustReadAll(t, &Options{ReplaceInvalidUTF8: true}, dir)
	if len(got) != 1 || got[0].Messages[0].Content != "caf\uFFFD \uFFFD" || got[0].Replaced != 2 {
		t.Errorf("got %+v, want content \"caf\uFFFD \uFFFD\" with 2 replaced", got)
	}
}

func TestBOMAndIntegralFloats(t *testing.T) {
	dir := write(t, map[string]string{"r.jsonl": "\xef\xbb\xbf{\"custom_id\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":\"x\",\"tokens\":96.0},{\"role\":\"assistant\",\"content\":\"y\",\"tokens\":1e2}],\"per_turn_api_tokens\":[{\"input\":5.0,\"output\":100,\"reasoning\":2E1}]}\n"})
	got := mustReadAll(t, nil, dir)
	want := []Message{{"user", "x", 96}, {"assistant", "y", 100}}
	if diff := cmp.Diff(want, got[0].Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(APITokens{Input: 5, Output: 100, Reasoning: Tokens(20)}, got[0].API[0]); diff != "" {
		t.Errorf("API (-want +got):\n%s", diff)
	}
}

func TestToolMessagesInRolloutJSONL(t *testing.T) {
	line := `{"custom_id":"t1","messages":[{"role":"system","content":"s"},{"role":"user","content":"task","tokens":4},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"search","arguments":"{\"q\": \"go\"}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"result 1","tokens":3},{"role":"user","content":"and?","tokens":2},` +
		`{"role":"assistant","content":[{"type":"text","text":"done"}]}],"per_turn_api_tokens":[{"input":10,"output":7,"reasoning":2,"cached":4},{"input":20,"output":3}],"api_inputs":"request",` +
		`"metadata":{"success":true,"outcome_source":"results","instance_id":"i1"}}`
	dir := write(t, map[string]string{"r.jsonl": line})
	got := mustReadAll(t, nil, dir)
	want := []Trajectory{{
		ID: "t1", Pos: Position{File: filepath.Join(dir, "r.jsonl"), Line: 1, Index: -1},
		Messages: []Message{system("s"), {"user", "task", 4},
			assistant("<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\":\"go\"}}\n</tool_call>"),
			{"user", "result 1\n\nand?", 5}, assistant("done")},
		API:     []APITokens{{Input: 10, Output: 7, Reasoning: Tokens(2), Cached: 4}, {Input: 20, Output: 3}},
		Inputs:  InputsRequest,
		Success: true, Outcome: OutcomeResults, Extra: Extra{Instance: "i1", BySuccessRule: &SuccessByRule{true, true}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRunsGetDistinctIDs(t *testing.T) {
	doc := miniHead + `{"role":"user","content":"t"},{"role":"assistant","content":"a"}]}`
	dir := write(t, map[string]string{
		"gpt/x__y-1/x__y-1.traj.json":    doc,
		"claude/x__y-1/x__y-1.traj.json": doc,
		"claude/preds.json":              `{"x__y-1": {"instance_id": "x__y-1", "model_patch": ""}}`,
		"gpt/report.json":                `{"resolved_ids": ["x__y-1"]}`,
	})
	var ids []string
	for _, tr := range mustReadAll(t, nil, dir) {
		ids = append(ids, tr.ID+"@"+tr.Extra.Instance)
	}
	if diff := cmp.Diff([]string{"claude/x__y-1@x__y-1", "gpt/x__y-1@x__y-1"}, ids); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
}

func TestResultsErrors(t *testing.T) {
	tests := []struct{ name, a, b, want string }{
		{"not a report", `{"total": 1}`, "", "a.json: resolved_ids: missing: want a SWE-bench harness report"},
		{"ids not strings", `{"resolved_ids": [1]}`, "", "a.json: resolved_ids: want an array of instance ids, got [1]"},
		{"conflict", `{"resolved_ids": ["i"]}`, `{"resolved_ids": [], "unresolved_ids": ["i"]}`,
			`b.json: unresolved_ids: instance "i" is resolved in one report and not in the other (a.json)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := write(t, map[string]string{"a.json": tt.a, "b.json": tt.b})
			paths := []string{filepath.Join(dir, "a.json")}
			if tt.b != "" {
				paths = append(paths, filepath.Join(dir, "b.json"))
			}
			_, err := LoadResults(paths)
			if err == nil || strings.ReplaceAll(err.Error(), dir+"/", "") != tt.want {
				t.Errorf("got %v, want %s", err, tt.want)
			}
		})
	}
}

// FuzzScan: any bytes, read with format detection, give records and
// trajectories or an error, never a panic, and never a trajectory without
// an assistant turn's worth of messages.
func FuzzScan(f *testing.F) {
	for _, p := range []string{
		"testdata/mini1/django__django-11099/django__django-11099.traj.json",
		"testdata/mini2/sympy__sympy-20590/sympy__sympy-20590.traj.json",
		"testdata/mini2/astropy__astropy-12907/astropy__astropy-12907.traj.json",
		"testdata/report.json",
		"testdata/harbor/job-1/django__django-11099__x7Kp2Qa/agent/trajectory.json",
		"testdata/openhands/trajectory.json",
		"testdata/openhands/eval/output.jsonl",
		"testdata/inspect/ctf_2025-07-05.json",
		"testdata/inspect/ctf_2026-05-01.eval",
		"testdata/sweagent/pydicom__pydicom-1458.traj",
	} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	claude, _ := filepath.Glob("testdata/sessions/claude/projects/*answer*/*.jsonl")
	qwen, _ := filepath.Glob("testdata/sessions/qwen/projects/*answer*/chats/*.jsonl")
	codex, _ := filepath.Glob("testdata/sessions/codex/sessions/*/*/*/*.jsonl")
	for _, p := range append(append(claude, qwen...), codex...) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("\xef\xbb\xbf{\"custom_id\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"tool\",\"content\":[{\"type\":\"text\",\"text\":\"y\"}]}]}\n"))
	f.Add([]byte(`[{"turns":[{"user_prompt":"u","raw_response":"r"}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		o := &Options{MaxMessageBytes: 1 << 10}
		_ = ScanFrom(context.Background(), Source{Name: "f", Options: o}, bytes.NewReader(data), func(rec Record) error {
			tr, err := Decode(rec)
			if err != nil {
				return nil
			}
			if tr.ID == "" || len(tr.Messages) == 0 {
				t.Fatalf("trajectory %+v without id or messages", tr)
			}
			for i, m := range tr.Messages {
				if int64(len(m.Content)) > 2*o.MaxMessageBytes+1<<10 {
					t.Fatalf("messages[%d] has %d bytes", i, len(m.Content))
				}
			}
			return nil
		})
	})
}

func TestATIFBadTrialResult(t *testing.T) {
	dir := write(t, map[string]string{
		"job/t1/agent/trajectory.json": `{"schema_version":"ATIF-v1.5","steps":[{"source":"user","message":"u"},{"source":"agent","message":"a"}]}`,
		"job/t1/result.json":           `{"task_name":"x","verifier_result":{"rewards":{"reward":"pass"}}}`,
	})
	_, err := readAll(t, nil, dir)
	if want := "job/t1/result.json: verifier_result.rewards.reward: want a number, got \"pass\""; err == nil || strings.TrimPrefix(err.Error(), dir+"/") != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestOpenHandsBadEvalFile(t *testing.T) {
	dir := write(t, map[string]string{
		"output.jsonl":               `{"instance_id":"a","history":[{"source":"agent","action":"message","message":"m"}]}`,
		"output.swebench_eval.jsonl": `{"instance_id":"a","test_result":{"report":{}}}`,
	})
	_, err := readAll(t, nil, dir)
	if want := "output.swebench_eval.jsonl:1: test_result.report.resolved: missing: want an evaluated instance"; err == nil || strings.TrimPrefix(err.Error(), dir+"/") != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
