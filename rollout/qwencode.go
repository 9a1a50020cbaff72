package rollout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// QwenCode is a Qwen Code session log,
// ~/.qwen/projects/<cwd-slug>/chats/<session-id>.jsonl: user, assistant,
// tool_result and system records with Gemini-style message.parts (text,
// thought text, functionCall, functionResponse). Each assistant record is
// one LLM call with its usageMetadata: promptTokenCount is the whole
// request (cachedContentTokenCount inside it), thoughtsTokenCount the
// reasoning. candidatesTokenCount includes the thoughts when Qwen Code
// converts an OpenAI-compatible answer (totalTokenCount = prompt +
// candidates) and excludes them from Gemini's API (total = prompt +
// candidates + thoughts); the output is read accordingly.
var QwenCode = &Format{Name: "qwen-code", Doc: "Qwen Code session log (~/.qwen/projects/<cwd>/chats/<session>.jsonl)", layout: session, ownIDs: true,
	match: isQwenCode,
	calls: func(data []byte) bool { return containsAny(data, `"type":"assistant"`, `"type": "assistant"`) }}

// QwenUsage is Qwen Code's usage log (~/.qwen/usage_record.jsonl, one
// session's totals a line): no trajectory.
var QwenUsage = &Format{Name: "qwen-code-usage", Doc: "Qwen Code usage record (~/.qwen/usage_record.jsonl)", Side: true, layout: lines,
	match: func(k map[string]json.RawMessage) bool { return has(k, "sessionId", "models", "project") }}

func init() { QwenCode.decode = decodeQwenCode }

// isQwenCode: a record with the session id and a uuid whose message has
// parts, or Qwen Code's own provenance or system payload.
func isQwenCode(k map[string]json.RawMessage) bool {
	if typeOf(k) == "" || !has(k, "sessionId", "uuid") {
		return false
	}
	if has(k, "provenance") || has(k, "systemPayload") {
		return true
	}
	var m map[string]json.RawMessage
	json.Unmarshal(k["message"], &m)
	return has(m, "parts")
}

// wireQwenLine is what a record holds that the reader uses.
type wireQwenLine struct {
	Type    string
	Message *struct {
		Parts []wireQwenPart `json:"parts"`
	}
	Usage json.RawMessage
}

type wireQwenPart struct {
	Text         json.RawMessage `json:"text"`
	Thought      bool            `json:"thought"`
	FunctionCall *struct {
		Name *string         `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

type wireQwenUsage struct {
	Prompt     json.RawMessage `json:"promptTokenCount"`
	Candidates json.RawMessage `json:"candidatesTokenCount"`
	Thoughts   json.RawMessage `json:"thoughtsTokenCount"`
	Cached     json.RawMessage `json:"cachedContentTokenCount"`
	Total      json.RawMessage `json:"totalTokenCount"`
}

func decodeQwenCode(rec Record) (Trajectory, error) {
	var turns sessionTurns
	turns.b.t = Trajectory{ID: BaseID(rec.Pos.File), Pos: rec.Pos, Inputs: InputsRequest}
	t := &turns.b.t
	prompt := ""
	err := eachLine(rec, func(line Record) error {
		v, err := topKeys(line, "type", "sessionId", "cwd", "message", "usageMetadata")
		if err != nil {
			return err
		}
		if id := stringValue(v[1]); id != "" {
			t.ID = id
		}
		if cwd := stringValue(v[2]); cwd != "" && t.Extra.Instance == "" {
			t.Extra.Instance = cwd
		}
		w := wireQwenLine{Type: stringValue(v[0]), Usage: v[4]}
		if w.Type == "user" || w.Type == "tool_result" || w.Type == "assistant" {
			if err := json.Unmarshal(v[3], &w.Message); v[3] != nil && err != nil {
				return line.Errorf(subField("message", err2field(err)), "%w", JSONCause(err))
			}
		}
		switch w.Type {
		case "user", "tool_result":
			txt, err := qwenSeen(line, w)
			if prompt == "" && w.Type == "user" {
				prompt = txt
			}
			turns.see(txt)
			return err
		case "assistant":
			return qwenCall(line, &turns, w)
		}
		return nil
	})
	if err != nil {
		return *t, err
	}
	if t.Extra.Instance == "" {
		t.Extra.Instance = prompt
	}
	return turns.finish(rec, "assistant record")
}

// qwenSeen is what a user or tool_result record shows the model: its text
// parts and its function responses (their output, else the response JSON).
func qwenSeen(line Record, w wireQwenLine) (string, error) {
	if w.Message == nil {
		return "", line.Errorf("message", "missing")
	}
	var parts []string
	for i, p := range w.Message.Parts {
		f := fmt.Sprintf("message.parts[%d]", i)
		switch {
		case p.FunctionResponse != nil:
			txt, err := qwenResponse(line, f+".functionResponse.response", p.FunctionResponse.Response)
			if err != nil {
				return "", err
			}
			parts = append(parts, txt)
		case p.Text != nil:
			txt, _, err := text(line, f+".text", p.Text)
			if err != nil {
				return "", err
			}
			parts = append(parts, txt)
		}
	}
	s := strings.Join(parts, "\n\n")
	return s, checkSize(line, "message.parts", s)
}

func qwenResponse(line Record, field string, raw json.RawMessage) (string, error) {
	v, ok := present(raw)
	if !ok {
		return "", nil
	}
	var r struct {
		Output json.RawMessage `json:"output"`
	}
	if json.Unmarshal(v, &r) == nil {
		if out, ok := present(r.Output); ok && out[0] == '"' {
			txt, _, err := text(line, field+".output", out)
			return txt, err
		}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return "", line.Errorf(field, "%w", JSONCause(err))
	}
	return buf.String(), checkSize(line, field, buf.String())
}

// qwenCall adds one assistant record as one call: text parts and function
// calls are visible; thought parts are hidden reasoning.
func qwenCall(line Record, turns *sessionTurns, w wireQwenLine) error {
	if w.Message == nil {
		return line.Errorf("message", "missing")
	}
	api, err := qwenUsage(line, "usageMetadata", w.Usage)
	if err != nil {
		return err
	}
	turns.start(api)
	for i, p := range w.Message.Parts {
		f := fmt.Sprintf("message.parts[%d]", i)
		switch {
		case p.FunctionCall != nil:
			if p.FunctionCall.Name == nil {
				return line.Errorf(f+".functionCall.name", "missing")
			}
			turns.output("", renderCall(*p.FunctionCall.Name, p.FunctionCall.Args))
		case p.Text != nil && !p.Thought:
			txt, _, err := text(line, f+".text", p.Text)
			if err != nil {
				return err
			}
			turns.output(txt, "")
		}
	}
	turns.close()
	return nil
}

func qwenUsage(line Record, field string, raw json.RawMessage) (APITokens, error) {
	a := APITokens{Input: Unrecorded, Output: Unrecorded}
	v, ok := present(raw)
	if !ok {
		return a, nil
	}
	var u wireQwenUsage
	if err := json.Unmarshal(v, &u); err != nil {
		return a, line.Errorf(field, "want a usage object, got %s", clipJSON(v))
	}
	var err error
	if a.Input, err = whole(line, field+".promptTokenCount", u.Prompt); err != nil {
		return a, err
	}
	if a.Output, err = whole(line, field+".candidatesTokenCount", u.Candidates); err != nil {
		return a, err
	}
	if a.Cached, err = wholeOr0(line, field+".cachedContentTokenCount", u.Cached); err != nil {
		return a, err
	}
	if a.Reasoning, err = optionalWhole(line, field+".thoughtsTokenCount", u.Thoughts); err != nil {
		return a, err
	}
	total, err := whole(line, field+".totalTokenCount", u.Total)
	if err != nil {
		return a, err
	}
	// Gemini's API counts the thoughts apart from the candidates.
	if r := a.Reasoning; a.Input != Unrecorded && a.Output != Unrecorded && r != nil && *r > 0 && total != Unrecorded &&
		a.Input <= total && a.Output <= total && *r <= total && total == a.Input+a.Output+*r {
		a.Output += *r
	}
	return a, checkBreakdown(line, field+".", a)
}
