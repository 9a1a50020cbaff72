package rollout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Codex is a Codex CLI session log,
// ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl: session_meta,
// response_item (messages, function calls and their outputs, reasoning),
// event_msg and turn_context lines. One LLM call is one token_count event
// with a non-null info; the response items before it since the previous
// one are what the call produced, and its info.last_token_usage is the
// call's usage (input_tokens includes cached_input_tokens, output_tokens
// includes reasoning_output_tokens). A token_count whose
// total_token_usage repeats the previous one is the same call reported
// again and is skipped.
var Codex = &Format{Name: "codex", Doc: "Codex session log (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl)", layout: session, ownIDs: true,
	match: func(k map[string]json.RawMessage) bool {
		switch typeOf(k) {
		case "session_meta", "response_item", "event_msg", "turn_context", "compacted":
			return has(k, "payload")
		}
		return false
	},
	calls: func(data []byte) bool { return containsAny(data, `"token_count"`) }}

// CodexHistory is Codex's ~/.codex/history.jsonl (one prompt a line): no
// trajectory.
var CodexHistory = &Format{Name: "codex-history", Doc: "Codex prompt history (~/.codex/history.jsonl)", Side: true, layout: lines,
	match: func(k map[string]json.RawMessage) bool { return has(k, "session_id", "ts", "text") }}

func init() { Codex.decode = decodeCodex }

type wireCodexPayload struct {
	Type string `json:"type"`
	// session_meta
	ID               string          `json:"id"`
	Cwd              string          `json:"cwd"`
	Instructions     json.RawMessage `json:"instructions"`
	BaseInstructions *struct {
		Text json.RawMessage `json:"text"`
	} `json:"base_instructions"`
	// response_item
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      *string         `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Input     json.RawMessage `json:"input"`
	Action    json.RawMessage `json:"action"`
	Output    json.RawMessage `json:"output"`
	// event_msg token_count
	Info json.RawMessage `json:"info"`
}

type wireCodexInfo struct {
	Total json.RawMessage `json:"total_token_usage"`
	Last  json.RawMessage `json:"last_token_usage"`
}

type wireCodexUsage struct {
	Input     json.RawMessage `json:"input_tokens"`
	Cached    json.RawMessage `json:"cached_input_tokens"`
	Output    json.RawMessage `json:"output_tokens"`
	Reasoning json.RawMessage `json:"reasoning_output_tokens"`
}

// codexSession is the state of one Codex file being read.
type codexSession struct {
	turns     sessionTurns
	lastTotal []byte // total_token_usage of the previous token_count
	prompt    string
}

func decodeCodex(rec Record) (Trajectory, error) {
	s := codexSession{}
	s.turns.b.t = Trajectory{ID: BaseID(rec.Pos.File), Pos: rec.Pos, Inputs: InputsRequest}
	err := eachLine(rec, func(line Record) error {
		v, err := topKeys(line, "type", "payload")
		if err != nil {
			return err
		}
		typ, payload := stringValue(v[0]), v[1]
		p, err := codexPayload(line, typ, payload)
		if err != nil {
			return err
		}
		return s.line(line, typ, p)
	})
	t := &s.turns.b.t
	if err != nil {
		return *t, err
	}
	if t.Extra.Instance == "" {
		t.Extra.Instance = s.prompt
	}
	return s.turns.finish(rec, "token_count event")
}

// codexPayload decodes what the reader needs of a line's payload: all of
// a response item; of session metadata its id, cwd and instructions; of an
// event its type, and a token count's info.
func codexPayload(line Record, typ string, raw json.RawMessage) (wireCodexPayload, error) {
	var p wireCodexPayload
	if raw == nil {
		return p, nil
	}
	switch typ {
	case "response_item":
		if err := json.Unmarshal(raw, &p); err != nil {
			return p, line.Errorf(subField("payload", err2field(err)), "%w", JSONCause(err))
		}
	case "session_meta", "event_msg":
		keys := []string{"type", "id", "cwd", "instructions", "base_instructions", "info"}
		v, err := topKeys(Record{Pos: line.Pos, Data: raw, Options: line.Options}, keys...)
		if err != nil {
			return p, line.Errorf("payload", "%w", errors.Unwrap(err))
		}
		p.Type, p.ID, p.Cwd, p.Instructions, p.Info = stringValue(v[0]), stringValue(v[1]), stringValue(v[2]), v[3], v[5]
		if v[4] != nil {
			if err := json.Unmarshal(v[4], &p.BaseInstructions); err != nil {
				return p, line.Errorf(subField("payload.base_instructions", err2field(err)), "%w", JSONCause(err))
			}
		}
	}
	return p, nil
}

func (s *codexSession) line(line Record, typ string, p wireCodexPayload) error {
	switch typ {
	case "session_meta":
		return s.meta(line, p)
	case "response_item":
		return s.item(line, p)
	case "event_msg":
		if p.Type == "token_count" {
			return s.tokenCount(line, p.Info)
		}
	}
	return nil
}

// meta reads the session id, the working directory and the base
// instructions (the system prompt).
func (s *codexSession) meta(line Record, p wireCodexPayload) error {
	t := &s.turns.b.t
	if p.ID != "" {
		t.ID = p.ID
	}
	if p.Cwd != "" {
		t.Extra.Instance = p.Cwd
	}
	field, raw := "payload.instructions", p.Instructions
	if p.BaseInstructions != nil {
		field, raw = "payload.base_instructions.text", p.BaseInstructions.Text
	}
	sys, _, err := text(line, field, raw)
	if err == nil && sys != "" && len(t.Messages) == 0 && len(s.turns.b.seen) == 0 {
		t.Messages = append(t.Messages, Message{Role: "system", Content: sys, Tokens: Unrecorded})
	}
	return err
}

// item reads one response item: the agent's messages and tool calls are
// the open call's output; other messages and tool outputs are what the
// agent sees; reasoning is hidden output, counted in the usage.
func (s *codexSession) item(line Record, p wireCodexPayload) error {
	switch p.Type {
	case "message":
		txt, _, err := text(line, "payload.content", p.Content)
		if err != nil {
			return err
		}
		if p.Role == "assistant" {
			s.turns.output(txt, "")
			return nil
		}
		if p.Role == "user" && s.prompt == "" && !bytes.HasPrefix([]byte(txt), []byte("<")) {
			s.prompt = txt
		}
		s.turns.see(txt)
	case "function_call", "custom_tool_call":
		if p.Name == nil {
			return line.Errorf("payload.name", "missing")
		}
		args := p.Arguments
		if p.Type == "custom_tool_call" {
			args = p.Input
		}
		s.turns.output("", renderCall(*p.Name, args))
	case "local_shell_call":
		s.turns.output("", renderCall("local_shell", p.Action))
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		txt, err := codexOutput(line, p.Output)
		if err != nil {
			return err
		}
		s.turns.see(txt)
	}
	return nil
}

// codexOutput is a tool output: a string, a list of content items, or an
// object with its content.
func codexOutput(line Record, raw json.RawMessage) (string, error) {
	v, ok := present(raw)
	if !ok {
		return "", nil
	}
	if v[0] == '{' {
		var o struct {
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(v, &o); err != nil {
			return "", line.Errorf("payload.output", "%w", JSONCause(err))
		}
		txt, _, err := text(line, "payload.output.content", o.Content)
		return txt, err
	}
	txt, _, err := text(line, "payload.output", v)
	return txt, err
}

// tokenCount closes the open call with its usage (a call with no visible
// output, only reasoning, is a call too).
func (s *codexSession) tokenCount(line Record, raw json.RawMessage) error {
	v, ok := present(raw)
	if !ok {
		return nil // rate limits only
	}
	var info wireCodexInfo
	if err := json.Unmarshal(v, &info); err != nil {
		return line.Errorf("payload.info", "want an object, got %s", clipJSON(v))
	}
	if total, ok := present(info.Total); ok {
		if s.lastTotal != nil && bytes.Equal(total, s.lastTotal) {
			return nil
		}
		s.lastTotal = total
	}
	api, err := codexUsage(line, "payload.info.last_token_usage", info.Last)
	if err != nil {
		return err
	}
	if !s.turns.open {
		s.turns.start(api)
	}
	s.turns.api = api
	s.turns.close()
	return nil
}

func codexUsage(line Record, field string, raw json.RawMessage) (APITokens, error) {
	a := APITokens{Input: Unrecorded, Output: Unrecorded}
	v, ok := present(raw)
	if !ok {
		return a, nil
	}
	var u wireCodexUsage
	if err := json.Unmarshal(v, &u); err != nil {
		return a, line.Errorf(field, "want a usage object, got %s", clipJSON(v))
	}
	var err error
	if a.Input, err = whole(line, field+".input_tokens", u.Input); err != nil {
		return a, err
	}
	if a.Output, err = whole(line, field+".output_tokens", u.Output); err != nil {
		return a, err
	}
	if a.Cached, err = wholeOr0(line, field+".cached_input_tokens", u.Cached); err != nil {
		return a, err
	}
	if a.Reasoning, err = optionalWhole(line, field+".reasoning_output_tokens", u.Reasoning); err != nil {
		return a, err
	}
	return a, checkBreakdown(line, fmt.Sprintf("%s.", field), a)
}
