package rollout

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

func jsonlRecord(line int, data string) Record {
	return Record{Pos: Position{File: "rollouts.jsonl", Line: line, Index: -1}, Data: []byte(data)}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"role unknown", `{"custom_id":"t","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"},{"role":"function","content":"d"}]}`,
			`rollouts.jsonl:812: messages[3].role: want "user", "assistant" or "tool", got "function"`},
		{"tool call without name", `{"custom_id":"t","messages":[{"role":"user","content":"a"},{"role":"assistant","content":null,"tool_calls":[{"function":{"arguments":"{}"}}]}]}`,
			`rollouts.jsonl:812: messages[1].tool_calls[0].function.name: missing`},
		{"assistant without content or calls", `{"custom_id":"t","messages":[{"role":"user","content":"a"},{"role":"assistant","content":null}]}`,
			`rollouts.jsonl:812: messages[1].content: missing`},
		{"block not text", `{"custom_id":"t","messages":[{"role":"user","content":[{"type":"text","text":7}]}]}`,
			`rollouts.jsonl:812: messages[0].content[0].text: want a string, got 7`},
		{"reasoning over output", `{"custom_id":"t","messages":[{"role":"user","content":"a"}],"per_turn_api_tokens":[{"input":5,"output":2,"reasoning":3}]}`,
			`rollouts.jsonl:812: per_turn_api_tokens[0].reasoning: 3 reasoning tokens exceed the output's 2`},
		{"bad api_inputs", `{"custom_id":"t","api_inputs":"total","messages":[{"role":"user","content":"a"}]}`,
			`rollouts.jsonl:812: api_inputs: want "request" or "turn", got "total"`},
		{"tokens a string", `{"custom_id":"t","messages":[{"role":"user","content":"a","tokens":"12"}]}`,
			`rollouts.jsonl:812: messages[0].tokens: want a whole number, got "12"`},
		{"tokens too big", `{"custom_id":"t","messages":[{"role":"user","content":"a","tokens":1e19}]}`,
			`rollouts.jsonl:812: messages[0].tokens: want a whole number, got 1e19`},
		{"api output fractional", `{"custom_id":"t","messages":[{"role":"user","content":"a"}],"per_turn_api_tokens":[{"input":1,"output":96.5}]}`,
			`rollouts.jsonl:812: per_turn_api_tokens[0].output: want a whole number, got 96.5`},
		{"system not first", `{"custom_id":"t","messages":[{"role":"user","content":"a"},{"role":"system","content":"b"}]}`,
			`rollouts.jsonl:812: messages[1].role: want "user", "assistant" or "tool", got "system"`},
		{"missing id", `{"messages":[{"role":"user","content":"a"}]}`, `rollouts.jsonl:812: custom_id: missing`},
		{"empty id", `{"custom_id":"","messages":[{"role":"user","content":"a"}]}`, `rollouts.jsonl:812: custom_id: empty`},
		{"no messages", `{"custom_id":"t"}`, `rollouts.jsonl:812: messages: missing or empty`},
		{"content missing", `{"custom_id":"t","messages":[{"role":"user"}]}`, `rollouts.jsonl:812: messages[0].content: missing`},
		{"content not a string", `{"custom_id":"t","messages":[{"role":"user","content":"a"},{"role":"assistant","content":["x"]}]}`,
			`rollouts.jsonl:812: messages[1].content[0]: want a content block object, got "x"`},
		{"content a number", `{"custom_id":"t","messages":[{"role":"user","content":3}]}`,
			`rollouts.jsonl:812: messages[0].content: want a string or a list of text blocks, got 3`},
		{"negative tokens", `{"custom_id":"t","messages":[{"role":"user","content":"a","tokens":-3}]}`,
			`rollouts.jsonl:812: messages[0].tokens: want a non-negative count, got -3`},
		{"fractional tokens", `{"custom_id":"t","messages":[{"role":"user","content":"a","tokens":1.5}]}`,
			`rollouts.jsonl:812: messages[0].tokens: want a whole number, got 1.5`},
		{"api output negative", `{"custom_id":"t","messages":[{"role":"user","content":"a"}],"per_turn_api_tokens":[{"input":1,"output":2},{"input":1,"output":-2}]}`,
			`rollouts.jsonl:812: per_turn_api_tokens[1].output: want a non-negative count, got -2`},
		{"bad budget", `{"custom_id":"t","budget":0,"messages":[{"role":"user","content":"a"}]}`,
			`rollouts.jsonl:812: budget: want a positive integer, got 0`},
		{"id a number", `{"custom_id":7,"messages":[]}`, `rollouts.jsonl:812: custom_id: want a string, got JSON number`},
		{"syntax", `{"custom_id":"t",`, `rollouts.jsonl:812: invalid JSON at byte 17: unexpected end of JSON input`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(jsonlRecord(812, tt.data))
			if err == nil || err.Error() != tt.want {
				t.Errorf("got error %v\nwant        %s", err, tt.want)
			}
		})
	}
}

func TestDecodeRollout(t *testing.T) {
	data := `{"custom_id":"traj_0","budget":3000,"messages":[{"role":"system","content":"sys","tokens":5},{"role":"user","content":"u0","tokens":7},{"role":"assistant","content":"a0"}],` +
		`"metadata":{"success":false,"rollout_success":true},"per_turn_api_tokens":[{"input":12,"output":30}]}`
	got, err := Decode(jsonlRecord(1, data))
	if err != nil {
		t.Fatal(err)
	}
	want := Trajectory{
		ID: "traj_0", Budget: 3000, Success: false, Outcome: OutcomeScore, Pos: Position{File: "rollouts.jsonl", Line: 1, Index: -1},
		Messages: []Message{{"system", "sys", 5}, {"user", "u0", 7}, {"assistant", "a0", Unrecorded}},
		API:      []APITokens{{Input: 12, Output: 30}}, Extra: Extra{BySuccessRule: &SuccessByRule{false, false}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Decode (-want +got):\n%s", diff)
	}
}

func TestMetadataSuccess(t *testing.T) {
	tests := []struct {
		meta string
		want bool
	}{
		{`{"success":true}`, true},
		{`{"success":false,"rollout_success":true}`, false}, // first present wins
		{`{"success":null,"rollout_success":true}`, true},   // null is absent
		{`{"rollout_resolved":1}`, true},
		{`{"rollout_resolved":0.0}`, false},
		{`{"success":"false"}`, true}, // a non-empty string is truthy, as in Python
		{`{"success":""}`, false},
		{`{"success":[]}`, false},
		{`{"env/success":1.0}`, true},
		{`{"env/success":0.5}`, false},
		{`{"env/success":true}`, true}, // True == 1.0 in Python
		{`{"env/successes":1}`, false},
		{`{}`, false},
	}
	for _, tt := range tests {
		data := `{"custom_id":"t","messages":[{"role":"user","content":"a"}],"metadata":` + tt.meta + `}`
		got, err := Decode(jsonlRecord(1, data))
		if err != nil {
			t.Fatal(err)
		}
		if got.Success != tt.want {
			t.Errorf("metadata %s: success = %v, want %v", tt.meta, got.Success, tt.want)
		}
	}
}

func TestDecodeDialogue(t *testing.T) {
	data := `{"env_id":3,"tag":"x","turns":[
		{"turn_idx":0,"user_prompt":"","prompt":"P0","raw_response":"R0","api_input_tokens":100,"api_output_tokens":20},
		{"turn_idx":1,"observation":"O1","raw_response":"","parsed_response":"parsed1","api_output_tokens":25},
		{"turn_idx":2,"messages":[{"role":"user","content":"early"},{"role":"assistant","content":"x"},{"role":"user","content":"M2"}],"response":"R2","success":true},
		{"turn_idx":3,"user_prompt":"U3"}
	]}`
	got, err := Decode(Record{Pos: Position{File: "eval.json", Index: 5}, Data: []byte(data), Format: Dialogue})
	if err != nil {
		t.Fatal(err)
	}
	want := Trajectory{
		ID: "traj_5", Success: true, Outcome: OutcomeScore, Pos: Position{File: "eval.json", Index: 5},
		Messages: []Message{
			{"user", "P0", Unrecorded}, {"assistant", "R0", Unrecorded},
			{"user", "O1", Unrecorded}, {"assistant", "parsed1", Unrecorded},
			{"user", "M2", Unrecorded}, {"assistant", "R2", Unrecorded},
		},
		API: []APITokens{{Input: 100, Output: 20}, {Input: Unrecorded, Output: 25}, {Input: Unrecorded, Output: Unrecorded}},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Trajectory{}, "Extra.Dialogue", "Extra.BySuccessRule")); diff != "" {
		t.Errorf("dialogue (-want +got):\n%s", diff)
	}
	// The element's own success beats the turns'.
	data = `{"success":false,"turns":[{"user_prompt":"u","raw_response":"r","success":true}]}`
	got, _ = Decode(Record{Pos: Position{File: "eval.json", Index: 0}, Data: []byte(data), Format: Dialogue})
	if got.Success {
		t.Errorf("element success false with a successful turn: got success")
	}
	_, err = Decode(Record{Pos: Position{File: "eval.json", Index: 2}, Data: []byte(`{"turns":[{"user_prompt":"u"}]}`), Format: Dialogue})
	if want := "eval.json[2]: turns: no turn has both a user and an assistant text"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func compressed(t *testing.T, kind string, data []byte) []byte {
	var buf bytes.Buffer
	var w io.WriteCloser
	switch kind {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "zstd":
		zw, err := zstd.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		w = zw
	default:
		return data
	}
	w.Write(data)
	w.Close()
	return buf.Bytes()
}

func TestScanFormatsAndCompression(t *testing.T) {
	jsonl := "{\"custom_id\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}\n\n{\"custom_id\":\"b\",\"messages\":[{\"role\":\"user\",\"content\":\"y\"}]}"
	array := ` [{"turns":[{"user_prompt":"u","raw_response":"r"}]}, {"turns":[{"user_prompt":"v","raw_response":"s"}]}]`
	for _, kind := range []string{"plain", "gzip", "zstd"} {
		for name, data := range map[string]string{"jsonl": jsonl, "array": array} {
			raw := compressed(t, kind, []byte(data))
			var got []string
			err := ScanReader(context.Background(), "in", bytes.NewReader(raw), func(r Record) error {
				tr, err := Decode(r)
				got = append(got, r.Pos.String()+"="+tr.ID)
				return err
			})
			if err != nil {
				t.Fatalf("%s %s: %v", kind, name, err)
			}
			want := map[string][]string{"jsonl": {"in:1=a", "in:3=b"}, "array": {"in[0]=traj_0", "in[1]=traj_1"}}[name]
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", kind, name, diff)
			}
		}
	}
}

func TestScanErrors(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"empty", "  \n", "in: empty input"},
		{"not json", "hello", `in:1: want a JSON object per line, a JSON document or a JSON array, got 'h'`},
		{"BOM then not json", "\xef\xbb\xbfhello", `in:1: want a JSON object per line, a JSON document or a JSON array, got 'h'`},
		{"parquet", "PAR1\x15\x04", `in:1: this is a parquet file, not a log: give build's outputs to validate, eval or reward; build reads agent logs (JSON lines, JSON documents or arrays)`},
		{"broken array", `[{"turns":[]}, {`, "in[1]: unexpected EOF"},
	}
	for _, tt := range tests {
		err := ScanReader(context.Background(), "in", strings.NewReader(tt.data), func(Record) error { return nil })
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: got %v, want %s", tt.name, err, tt.want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"custom_id":"t","messages":[{"role":"user","content":"a","tokens":3},{"role":"assistant","content":"b"}],"metadata":{"success":true},"per_turn_api_tokens":[{"input":1,"output":2}]}`), false)
	f.Add([]byte(`{"turns":[{"user_prompt":"u","raw_response":"r","api_input_tokens":4}],"success":1}`), true)
	f.Add([]byte(`{"custom_id":"t","messages":[{"role":"tool"}]}`), false)
	f.Fuzz(func(t *testing.T, data []byte, dialogue bool) {
		tr, err := Decode(Record{Pos: Position{File: "f", Line: 1, Index: -1}, Data: data, Format: map[bool]*Format{true: Dialogue, false: Rollout}[dialogue]})
		if err != nil {
			return
		}
		if len(tr.Messages) == 0 || tr.ID == "" {
			t.Fatalf("decoded %+v with no messages or no id", tr)
		}
		for i, m := range tr.Messages {
			if m.Tokens < Unrecorded {
				t.Fatalf("messages[%d].Tokens = %d", i, m.Tokens)
			}
		}
		for i, a := range tr.API {
			if a.Input < Unrecorded || a.Output < Unrecorded || a.Reasoning != nil && *a.Reasoning < 0 || a.Cached < 0 {
				t.Fatalf("API[%d] = %+v", i, a)
			}
		}
	})
}
