package guard

import (
	"bytes"
	"encoding/json"
	"fmt"

	"bagen-data/internal/jsonlex"
	"bagen-data/rollout"
)

// Responses is OpenAI's Responses API (POST /v1/responses), as Codex
// speaks it.
type Responses struct{}

// Name is "responses".
func (Responses) Name() string { return "responses" }

type responsesItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Input     json.RawMessage `json:"input"`
	Output    json.RawMessage `json:"output"`
	Action    json.RawMessage `json:"action"`
}

type responsesRequest struct {
	Model        string                     `json:"model"`
	Input        json.RawMessage            `json:"input"`
	Instructions string                     `json:"instructions"`
	Stream       bool                       `json:"stream"`
	Previous     string                     `json:"previous_response_id"`
	Store        *bool                      `json:"store"`
	Metadata     map[string]json.RawMessage `json:"metadata"`
	Tools        []json.RawMessage          `json:"tools"`
}

// Request reads instructions and input items; function calls are
// rendered into assistant text, their outputs are tool messages and
// reasoning items are left out (the history does not replay them).
func (c Responses) Request(body []byte) (*Request, error) {
	r, _, err := c.read(body, nil)
	return r, err
}

func (Responses) read(body []byte, prev *readMemo) (*Request, *readMemo, error) {
	return readEither(body, prev, readResponses, decodeResponses)
}

// decodeResponses is Request read with encoding/json.
func decodeResponses(body []byte) (*Request, error) {
	var w responsesRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("responses request: %w", err)
	}
	if len(w.Input) == 0 {
		return nil, fmt.Errorf("responses request: input: missing")
	}
	r := &Request{Model: w.Model, Stream: w.Stream, Previous: w.Previous, Chainable: w.Store == nil || *w.Store, SessionID: metadataSession(w.Metadata), Tools: len(w.Tools) > 0}
	if w.Instructions != "" {
		r.Items = append(r.Items, rollout.Message{Role: "system", Content: w.Instructions})
	}
	var s string
	if json.Unmarshal(w.Input, &s) == nil {
		r.Items = append(r.Items, rollout.Message{Role: "user", Content: s})
		return r, nil
	}
	var items []responsesItem
	if err := json.Unmarshal(w.Input, &items); err != nil {
		return nil, fmt.Errorf("responses request: input: %w", err)
	}
	prevAssistant := false
	for _, it := range items {
		item, ok := responsesNorm(it)
		if !ok {
			continue
		}
		if item.Role == "assistant" {
			if !prevAssistant {
				r.Echoed = r.Echoed[:0]
			}
			r.Echoed = appendID(appendID(r.Echoed, it.ID), it.CallID)
		}
		prevAssistant = item.Role == "assistant"
		r.Items = append(r.Items, item)
	}
	return r, nil
}

// readResponses reads a Responses request with the house's JSON lexer, as
// Request reads it with encoding/json; it reports false where
// encoding/json could read the body otherwise (see readAnthropic), and
// Request then reads it the slow way (FuzzRequestReaders).
func readResponses(lx *lexReader) (*Request, bool) {
	r := &Request{Chainable: true}
	var instructions string
	var items []rollout.Message
	input := false
	ok := lx.object(func(key string) bool {
		switch key {
		case "instructions":
			instructions = lx.str()
		case "previous_response_id":
			r.Previous = lx.str()
		case "store":
			r.Chainable = lx.boolean()
		case "input":
			input = true
			items = lx.responsesInput(r)
		default:
			return lx.requestField(r, key)
		}
		return true
	}, "model", "stream", "instructions", "previous_response_id", "store", "metadata", "tools", "input")
	if !lx.end(ok) || !input {
		return nil, false
	}
	if instructions != "" {
		r.Items = append(r.Items, rollout.Message{Role: "system", Content: instructions})
	}
	r.Items = append(r.Items, items...)
	return r, true
}

// responsesInput reads the input, a string or a list of items, as Request
// does; it sets r.Echoed.
func (lx *lexReader) responsesInput(r *Request) []rollout.Message {
	if lx.d.Kind() == jsonlex.String {
		return []rollout.Message{{Role: "user", Content: lx.str()}}
	}
	var h histState
	lx.history(&h, func() bool {
		var it responsesItem
		if !lx.responsesItem(&it) {
			return false
		}
		item, keep, ok := lexResponsesNorm(it)
		if !ok || !keep {
			return ok
		}
		if item.Role == "assistant" {
			if !h.inRun {
				h.echoed = h.echoed[:0]
			}
			h.echoed = appendID(appendID(h.echoed, it.ID), it.CallID)
		}
		h.inRun = item.Role == "assistant"
		h.items = append(h.items, item)
		return true
	})
	r.Echoed = h.echoed
	return h.items
}

// lexResponsesNorm is responsesNorm with a message's content read by the
// lexer (lexParts); ok is false where that reading might differ.
func lexResponsesNorm(it responsesItem) (item rollout.Message, keep, ok bool) {
	if it.Type != "" && it.Type != "message" {
		item, keep = responsesNorm(it)
		return item, keep, true
	}
	text, ok := lexParts(it.Content)
	role := it.Role
	if role == "developer" {
		role = "system"
	}
	return rollout.Message{Role: role, Content: text}, role != "", ok
}

// responsesItem reads one input item's fields.
func (lx *lexReader) responsesItem(it *responsesItem) bool {
	return lx.object(func(key string) bool {
		switch key {
		case "type":
			it.Type = lx.str()
		case "id":
			it.ID = lx.str()
		case "role":
			it.Role = lx.str()
		case "call_id":
			it.CallID = lx.str()
		case "name":
			it.Name = lx.str()
		case "content":
			it.Content = lx.d.Raw()
		case "arguments":
			it.Arguments = lx.d.Raw()
		case "input":
			it.Input = lx.d.Raw()
		case "output":
			it.Output = lx.d.Raw()
		case "action":
			it.Action = lx.d.Raw()
		}
		return true
	}, "type", "id", "role", "content", "call_id", "name", "arguments", "input", "output", "action")
}

// responsesNorm is one input or output item as a message; ok is false for
// items the history does not show (reasoning).
func responsesNorm(it responsesItem) (rollout.Message, bool) {
	switch it.Type {
	case "", "message":
		role := it.Role
		if role == "developer" {
			role = "system"
		}
		return rollout.Message{Role: role, Content: partsText(it.Content)}, role != ""
	case "function_call":
		return rollout.Message{Role: "assistant", Content: rollout.RenderToolCall(it.Name, it.Arguments)}, true
	case "custom_tool_call":
		return rollout.Message{Role: "assistant", Content: rollout.RenderToolCall(it.Name, mustJSON(map[string]string{"input": jsonText(it.Input)}))}, true
	case "local_shell_call":
		return rollout.Message{Role: "assistant", Content: rollout.RenderToolCall("local_shell", it.Action)}, true
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		out := jsonText(it.Output)
		var parts json.RawMessage
		if json.Unmarshal(it.Output, &parts) == nil && len(parts) > 0 && parts[0] == '[' {
			out = partsText(parts)
		}
		return rollout.Message{Role: "tool", Content: out}, true
	}
	return rollout.Message{}, false
}

// Outgoing adds note as a last user input item.
func (Responses) Outgoing(body []byte, req *Request, note string) ([]byte, error) {
	if note == "" {
		return body, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, err
	}
	var items []json.RawMessage
	var s string
	if json.Unmarshal(top["input"], &s) == nil {
		items = []json.RawMessage{mustJSON(map[string]any{"role": "user", "content": s})}
	} else if err := json.Unmarshal(top["input"], &items); err != nil {
		return nil, err
	}
	items = append(items, mustJSON(map[string]any{"type": "message", "role": "user",
		"content": []any{map[string]string{"type": "input_text", "text": note}}}))
	top["input"] = mustJSON(items)
	return json.Marshal(top)
}

type responsesUsage struct {
	Input    int64 `json:"input_tokens"`
	Output   int64 `json:"output_tokens"`
	IDetails *struct {
		Cached int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	ODetails *struct {
		Reasoning *int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

func (u *responsesUsage) guard() *rollout.GuardUsage {
	if u == nil {
		return nil
	}
	g := &rollout.GuardUsage{Input: u.Input, Output: u.Output}
	if u.IDetails != nil {
		g.Cached = u.IDetails.Cached
	}
	if u.ODetails != nil {
		g.Reasoning = u.ODetails.Reasoning
	}
	return g
}

type responsesResponse struct {
	ID     string          `json:"id"`
	Status string          `json:"status"`
	Output []responsesItem `json:"output"`
	Usage  *responsesUsage `json:"usage"`
}

func (w responsesResponse) reply() Reply {
	r := Reply{Usage: w.Usage.guard(), IDs: appendID(nil, w.ID)}
	for _, it := range w.Output {
		if item, ok := responsesNorm(it); ok {
			r.Items = append(r.Items, item)
		}
		r.IDs = appendID(appendID(r.IDs, it.ID), it.CallID)
	}
	r.Complete = w.Status != "" && w.Status != "in_progress"
	return r
}

// Reply reads a response object.
func (Responses) Reply(body []byte) Reply {
	var w responsesResponse
	if json.Unmarshal(body, &w) != nil {
		return Reply{}
	}
	return w.reply()
}

// responsesStream keeps the response the final event carries, and the
// items done so far for a stream cut before it.
type responsesStream struct {
	id    string
	done  []responsesItem
	final *responsesResponse
}

// Stream reads response.* events.
func (Responses) Stream(*Request) Stream { return &responsesStream{} }

func (s *responsesStream) Event(e Event) bool {
	var w struct {
		Type     string             `json:"type"`
		Response *responsesResponse `json:"response"`
		Item     *responsesItem     `json:"item"`
	}
	if json.Unmarshal(e.Data, &w) != nil {
		return true
	}
	switch w.Type {
	case "response.created", "response.in_progress":
		if w.Response != nil {
			s.id = w.Response.ID
		}
	case "response.output_item.done":
		if w.Item != nil {
			s.done = append(s.done, *w.Item)
		}
	case "response.completed", "response.incomplete", "response.failed":
		s.final = w.Response
	}
	return true
}

func (s *responsesStream) Done() bool { return s.final != nil }

func (s *responsesStream) Reply() Reply {
	if s.final != nil {
		if len(s.final.Output) == 0 {
			s.final.Output = s.done
		}
		r := s.final.reply()
		r.Complete = true
		return r
	}
	return responsesResponse{ID: s.id, Output: s.done}.reply()
}

// Answer is a completed response whose one output is a message saying
// text (or the events of one).
func (Responses) Answer(req *Request, text string) (string, []byte) {
	msg := map[string]any{"type": "message", "id": "msg_bagen_guard", "status": "completed", "role": "assistant",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
	resp := func(status string, output []any) map[string]any {
		return map[string]any{"id": "resp_bagen_guard", "object": "response", "created_at": 0, "status": status,
			"model": req.Model, "output": output, "error": nil, "incomplete_details": nil,
			"usage": map[string]any{"input_tokens": 0, "output_tokens": 0, "total_tokens": 0,
				"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}}
	}
	if !req.Stream {
		return "application/json", mustJSON(resp("completed", []any{msg}))
	}
	var b bytes.Buffer
	seq := 0
	ev := func(typ string, fields map[string]any) {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		b.Write(sseNamed(typ, mustJSON(fields)))
	}
	part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
	added := map[string]any{"type": "message", "id": "msg_bagen_guard", "status": "in_progress", "role": "assistant", "content": []any{}}
	ev("response.created", map[string]any{"response": resp("in_progress", []any{})})
	ev("response.in_progress", map[string]any{"response": resp("in_progress", []any{})})
	ev("response.output_item.added", map[string]any{"output_index": 0, "item": added})
	ev("response.content_part.added", map[string]any{"item_id": "msg_bagen_guard", "output_index": 0, "content_index": 0, "part": part})
	ev("response.output_text.delta", map[string]any{"item_id": "msg_bagen_guard", "output_index": 0, "content_index": 0, "delta": text})
	ev("response.output_text.done", map[string]any{"item_id": "msg_bagen_guard", "output_index": 0, "content_index": 0, "text": text})
	ev("response.content_part.done", map[string]any{"item_id": "msg_bagen_guard", "output_index": 0, "content_index": 0,
		"part": map[string]any{"type": "output_text", "text": text, "annotations": []any{}}})
	ev("response.output_item.done", map[string]any{"output_index": 0, "item": msg})
	ev("response.completed", map[string]any{"response": resp("completed", []any{msg})})
	return "text/event-stream", b.Bytes()
}

// ContextError is OpenAI's context_length_exceeded error.
func (Responses) ContextError(text string) []byte { return openAIContextError(text) }
