package guard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"bagen-data/internal/jsonlex"
	"bagen-data/rollout"
)

// Anthropic is Anthropic's Messages API (POST /v1/messages), as Claude
// Code speaks it.
type Anthropic struct{}

// Name is "anthropic".
func (Anthropic) Name() string { return "anthropic" }

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

type anthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type anthropicRequest struct {
	Model    string                     `json:"model"`
	System   json.RawMessage            `json:"system"`
	Messages []anthropicMessage         `json:"messages"`
	Stream   bool                       `json:"stream"`
	Metadata map[string]json.RawMessage `json:"metadata"`
	Tools    []json.RawMessage          `json:"tools"`
}

// blocks reads a content that is a string or a list of blocks.
func anthropicBlocks(raw json.RawMessage) []anthropicBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}
	}
	var bs []anthropicBlock
	json.Unmarshal(raw, &bs)
	return bs
}

// anthropicAssistant is an assistant message's text blocks, then its
// tool calls; thinking is left out (the history does not replay it as
// text).
func anthropicAssistant(bs []anthropicBlock) string {
	var parts []string
	for _, b := range bs {
		switch b.Type {
		case "text":
			if b.Text != "" {
				parts = append(parts, b.Text)
			}
		case "tool_use", "server_tool_use":
			parts = append(parts, rollout.RenderToolCall(b.Name, b.Input))
		}
	}
	return strings.Join(parts, "\n")
}

// Request reads the system prompt and messages; cache_control markup and
// thinking blocks are dropped, tool results are tool messages.
func (a Anthropic) Request(body []byte) (*Request, error) {
	r, _, err := a.read(body, nil)
	return r, err
}

func (Anthropic) read(body []byte, prev *readMemo) (*Request, *readMemo, error) {
	return readEither(body, prev, readAnthropic, decodeAnthropic)
}

// decodeAnthropic is Request read with encoding/json.
func decodeAnthropic(body []byte) (*Request, error) {
	var w anthropicRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("messages request: %w", err)
	}
	if len(w.Messages) == 0 {
		return nil, fmt.Errorf("messages request: messages: missing or empty")
	}
	r := &Request{Model: w.Model, Stream: w.Stream, SessionID: metadataSession(w.Metadata), Tools: len(w.Tools) > 0}
	if sys := partsText(w.System); sys != "" {
		r.Items = append(r.Items, rollout.Message{Role: "system", Content: sys})
	}
	for _, m := range w.Messages {
		bs := anthropicBlocks(m.Content)
		if m.Role == "assistant" {
			r.Items = append(r.Items, rollout.Message{Role: "assistant", Content: anthropicAssistant(bs)})
			r.Echoed = r.Echoed[:0]
			for _, b := range bs {
				r.Echoed = appendID(r.Echoed, b.ID)
			}
			continue
		}
		for _, b := range bs {
			switch b.Type {
			case "text":
				r.Items = append(r.Items, rollout.Message{Role: "user", Content: b.Text})
			case "tool_result":
				r.Items = append(r.Items, rollout.Message{Role: "tool", Content: partsText(b.Content)})
			}
		}
	}
	return r, nil
}

// Outgoing adds note as a text block at the end of the last user message.
func (Anthropic) Outgoing(body []byte, req *Request, note string) ([]byte, error) {
	if note == "" {
		return body, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, err
	}
	var msgs []map[string]json.RawMessage
	if err := json.Unmarshal(top["messages"], &msgs); err != nil {
		return nil, err
	}
	last := msgs[len(msgs)-1]
	noteBlock := mustJSON(map[string]string{"type": "text", "text": note})
	var role string
	json.Unmarshal(last["role"], &role)
	if role != "user" {
		msgs = append(msgs, map[string]json.RawMessage{"role": json.RawMessage(`"user"`), "content": mustJSON([]json.RawMessage{noteBlock})})
	} else {
		var blocks []json.RawMessage
		var s string
		if json.Unmarshal(last["content"], &s) == nil {
			blocks = []json.RawMessage{mustJSON(map[string]string{"type": "text", "text": s})}
		} else if err := json.Unmarshal(last["content"], &blocks); err != nil {
			return nil, err
		}
		last["content"] = mustJSON(append(blocks, noteBlock))
	}
	top["messages"] = mustJSON(msgs)
	return json.Marshal(top)
}

type anthropicUsage struct {
	Input         *int64 `json:"input_tokens"`
	Output        *int64 `json:"output_tokens"`
	CacheRead     *int64 `json:"cache_read_input_tokens"`
	CacheCreation *int64 `json:"cache_creation_input_tokens"`
	// Details breaks the thinking tokens out of output_tokens.
	Details *struct {
		Thinking *int64 `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
}

// merge takes the counts u reports: message_delta's are cumulative, the
// last one counts.
func (u *anthropicUsage) merge(v *anthropicUsage) {
	if v == nil {
		return
	}
	for _, p := range [][2]**int64{{&u.Input, &v.Input}, {&u.Output, &v.Output}, {&u.CacheRead, &v.CacheRead}, {&u.CacheCreation, &v.CacheCreation}} {
		if *p[1] != nil {
			*p[0] = *p[1]
		}
	}
	if v.Details != nil && v.Details.Thinking != nil {
		u.Details = v.Details
	}
}

// guard is the usage with the request's whole input: input_tokens
// excludes the cache reads and writes.
func (u *anthropicUsage) guard() *rollout.GuardUsage {
	if u == nil || (u.Input == nil && u.Output == nil) {
		return nil
	}
	n := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	g := &rollout.GuardUsage{Input: n(u.Input) + n(u.CacheRead) + n(u.CacheCreation), Output: n(u.Output), Cached: n(u.CacheRead)}
	if u.Output == nil {
		g.Output = rollout.Unrecorded
	}
	if u.Details != nil {
		g.Reasoning = u.Details.Thinking
	}
	return g
}

type anthropicResponse struct {
	ID         string           `json:"id"`
	Content    []anthropicBlock `json:"content"`
	StopReason *string          `json:"stop_reason"`
	Usage      *anthropicUsage  `json:"usage"`
}

func (w anthropicResponse) reply() Reply {
	r := Reply{Usage: w.Usage.guard(), IDs: appendID(nil, w.ID), Complete: w.StopReason != nil}
	r.Items = []rollout.Message{{Role: "assistant", Content: anthropicAssistant(w.Content)}}
	for _, b := range w.Content {
		r.IDs = appendID(r.IDs, b.ID)
	}
	return r
}

// Reply reads a message.
func (Anthropic) Reply(body []byte) Reply {
	var w anthropicResponse
	if json.Unmarshal(body, &w) != nil {
		return Reply{}
	}
	return w.reply()
}

// anthropicStream rebuilds the message from its events.
type anthropicStream struct {
	msg     anthropicResponse
	usage   anthropicUsage
	partial map[int]*strings.Builder
	stopped bool
}

// Stream reads message_start, content_block_*, message_delta and
// message_stop events.
func (Anthropic) Stream(*Request) Stream {
	return &anthropicStream{partial: map[int]*strings.Builder{}}
}

func (s *anthropicStream) Event(e Event) bool {
	var w struct {
		Type         string             `json:"type"`
		Message      *anthropicResponse `json:"message"`
		Index        int                `json:"index"`
		ContentBlock *anthropicBlock    `json:"content_block"`
		Delta        *struct {
			Type        string  `json:"type"`
			Text        string  `json:"text"`
			PartialJSON string  `json:"partial_json"`
			StopReason  *string `json:"stop_reason"`
		} `json:"delta"`
		Usage *anthropicUsage `json:"usage"`
	}
	if json.Unmarshal(e.Data, &w) != nil || w.Index < 0 || w.Index >= maxBlocks {
		return true
	}
	switch w.Type {
	case "message_start":
		if w.Message != nil {
			s.msg.ID = w.Message.ID
			s.usage.merge(w.Message.Usage)
		}
	case "content_block_start":
		if w.ContentBlock != nil {
			for len(s.msg.Content) <= w.Index {
				s.msg.Content = append(s.msg.Content, anthropicBlock{})
			}
			s.msg.Content[w.Index] = *w.ContentBlock
			s.partial[w.Index] = &strings.Builder{}
		}
	case "content_block_delta":
		if w.Delta == nil || w.Index >= len(s.msg.Content) {
			break
		}
		switch w.Delta.Type {
		case "text_delta":
			s.msg.Content[w.Index].Text += w.Delta.Text
		case "input_json_delta":
			if b := s.partial[w.Index]; b != nil {
				b.WriteString(w.Delta.PartialJSON)
			}
		}
	case "content_block_stop":
		if b := s.partial[w.Index]; b != nil && b.Len() > 0 && w.Index < len(s.msg.Content) {
			s.msg.Content[w.Index].Input = json.RawMessage(b.String())
		}
	case "message_delta":
		s.usage.merge(w.Usage)
		if w.Delta != nil && w.Delta.StopReason != nil {
			s.msg.StopReason = w.Delta.StopReason
		}
	case "message_stop":
		s.stopped = true
	}
	return true
}

func (s *anthropicStream) Done() bool { return s.stopped }

func (s *anthropicStream) Reply() Reply {
	m := s.msg
	m.Usage = &s.usage
	r := m.reply()
	r.Complete = s.stopped
	return r
}

// Answer is a message whose one block is text, ending the turn (or the
// events of one).
func (Anthropic) Answer(req *Request, text string) (string, []byte) {
	usage := map[string]any{"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !req.Stream {
		return "application/json", mustJSON(map[string]any{"id": "msg_bagen_guard", "type": "message", "role": "assistant",
			"model": req.Model, "content": []any{map[string]any{"type": "text", "text": text}},
			"stop_reason": "end_turn", "stop_sequence": nil, "usage": usage})
	}
	var b bytes.Buffer
	ev := func(typ string, fields map[string]any) {
		fields["type"] = typ
		b.Write(sseNamed(typ, mustJSON(fields)))
	}
	ev("message_start", map[string]any{"message": map[string]any{"id": "msg_bagen_guard", "type": "message", "role": "assistant",
		"model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	ev("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
	ev("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": text}})
	ev("content_block_stop", map[string]any{"index": 0})
	ev("message_delta", map[string]any{"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 0}})
	ev("message_stop", map[string]any{})
	return "text/event-stream", b.Bytes()
}

// ContextError is Anthropic's invalid_request_error for a prompt over the
// context window.
func (Anthropic) ContextError(text string) []byte {
	return mustJSON(map[string]any{"type": "error", "error": map[string]any{
		"type": "invalid_request_error", "message": "prompt is too long: " + text}})
}

// readAnthropic reads a Messages request with the house's JSON lexer,
// as Request reads it with encoding/json, several times faster on a long
// history. It reports false wherever encoding/json could read otherwise
// — a key that is not one of the fields' exact names but matches one
// case-insensitively, a known key twice, a value of another type than the
// field's, invalid UTF-8 — and Request then reads the body the slow way,
// so that both always agree (FuzzRequestReaders).
func readAnthropic(lx *lexReader) (*Request, bool) {
	r := &Request{}
	var h histState
	var system []byte
	var messages int
	ok := lx.object(func(key string) bool {
		switch key {
		case "system":
			system = lx.d.Raw()
		case "messages":
			messages = lx.history(&h, func() bool { return lx.anthropicMessage(&h) })
		default:
			return lx.requestField(r, key)
		}
		return true
	}, "model", "stream", "system", "metadata", "tools", "messages")
	if !lx.end(ok) || messages == 0 {
		return nil, false
	}
	r.Items, r.Echoed = h.items, h.echoed
	if sys, ok := lexParts(system); !ok {
		return nil, false
	} else if sys != "" {
		r.Items = append([]rollout.Message{{Role: "system", Content: sys}}, r.Items...)
	}
	return r, true
}

// anthropicMessage reads one message into h's items, as Request does.
func (lx *lexReader) anthropicMessage(h *histState) bool {
	var role string
	var blocks []anthropicBlock
	content := false
	ok := lx.object(func(key string) bool {
		switch key {
		case "role":
			role = lx.str()
		case "content":
			content = true
			blocks = lx.anthropicContent()
		default:
			return false
		}
		return true
	}, "role", "content")
	if !ok || !content || !lx.ok {
		return false
	}
	if role == "assistant" {
		h.items = append(h.items, rollout.Message{Role: "assistant", Content: anthropicAssistant(blocks)})
		h.echoed = h.echoed[:0]
		for _, b := range blocks {
			h.echoed = appendID(h.echoed, b.ID)
		}
		return true
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			h.items = append(h.items, rollout.Message{Role: "user", Content: b.Text})
		case "tool_result":
			text, ok := lexParts(b.Content)
			if !ok {
				return false
			}
			h.items = append(h.items, rollout.Message{Role: "tool", Content: text})
		}
	}
	return true
}

// anthropicContent reads a content that is a string or a list of blocks.
func (lx *lexReader) anthropicContent() []anthropicBlock {
	if lx.d.Kind() == jsonlex.String {
		return []anthropicBlock{{Type: "text", Text: lx.str()}}
	}
	var bs []anthropicBlock
	lx.array(func() bool {
		var b anthropicBlock
		ok := lx.object(func(key string) bool {
			switch key {
			case "type":
				b.Type = lx.str()
			case "text":
				b.Text = lx.str()
			case "id":
				b.ID = lx.str()
			case "name":
				b.Name = lx.str()
			case "tool_use_id":
				b.ToolUseID = lx.str()
			case "input":
				b.Input = lx.d.Raw()
			case "content":
				b.Content = lx.d.Raw()
			default:
				return false
			}
			return true
		}, "type", "text", "id", "name", "tool_use_id", "input", "content")
		bs = append(bs, b)
		return ok
	})
	return bs
}
