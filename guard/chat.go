package guard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"bagen-data/internal/jsonlex"
	"bagen-data/internal/openai"
	"bagen-data/rollout"
)

// Chat is OpenAI's Chat Completions API (POST /v1/chat/completions), as
// Qwen Code, mini-swe-agent, SWE-agent, OpenHands and Inspect speak it.
type Chat struct{}

// Name is "chat".
func (Chat) Name() string { return "chat" }

// chatRequest and chatResponse are the wire types the codec reads.
type (
	chatRequest  = openai.ChatRequest
	chatResponse = openai.ChatCompletion
)

// Request reads the messages; tool calls are rendered into the assistant
// text as the trajectories show them.
func (c Chat) Request(body []byte) (*Request, error) {
	r, _, err := c.read(body, nil)
	return r, err
}

func (Chat) read(body []byte, prev *readMemo) (*Request, *readMemo, error) {
	return readEither(body, prev, readChat, decodeChat)
}

// decodeChat is Request read with encoding/json.
func decodeChat(body []byte) (*Request, error) {
	var w chatRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("chat completions request: %w", err)
	}
	if len(w.Messages) == 0 {
		return nil, fmt.Errorf("chat completions request: messages: missing or empty")
	}
	r := &Request{Model: w.Model, Stream: w.Stream, SessionID: metadataSession(w.Metadata), Tools: len(w.Tools) > 0}
	r.AgentUsage = w.StreamOptions != nil && w.StreamOptions.IncludeUsage
	for _, m := range w.Messages {
		if m.Role == "assistant" {
			r.Items = append(r.Items, rollout.Message{Role: "assistant", Content: chatAssistant(partsText(m.Content), m.ToolCalls)})
			r.Echoed = r.Echoed[:0]
			for _, c := range m.ToolCalls {
				r.Echoed = appendID(r.Echoed, c.ID)
			}
			continue
		}
		role := m.Role
		if role == "developer" {
			role = "system"
		}
		r.Items = append(r.Items, rollout.Message{Role: role, Content: partsText(m.Content)})
	}
	return r, nil
}

// chatAssistant is an assistant message's text: its content, then its
// tool calls.
func chatAssistant(content string, calls []openai.ToolCall) string {
	parts := []string{}
	if content != "" {
		parts = append(parts, content)
	}
	for _, c := range calls {
		parts = append(parts, rollout.RenderToolCall(c.Function.Name, json.RawMessage(strconv.Quote(c.Function.Arguments))))
	}
	return strings.Join(parts, "\n")
}

// partsText is a content that is a string, or the text of its parts.
func partsText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return string(raw)
	}
	var out []string
	for _, p := range parts {
		switch {
		case p.Text != "":
			out = append(out, p.Text)
		case len(p.Content) > 0:
			out = append(out, partsText(p.Content))
		}
	}
	return strings.Join(out, "\n")
}

// Outgoing asks for usage on a stream the agent did not ask it for, and
// adds note as a last user message.
func (Chat) Outgoing(body []byte, req *Request, note string) ([]byte, error) {
	if !(req.Stream && !req.AgentUsage) && note == "" {
		return body, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, err
	}
	if req.Stream && !req.AgentUsage {
		if _, ok := top["stream_options"]; !ok && note == "" {
			// Splice, leaving the agent's bytes as they were.
			i := bytes.IndexByte(body, '{')
			return append(append(append([]byte{}, body[:i+1]...), `"stream_options":{"include_usage":true},`...), body[i+1:]...), nil
		}
		var so map[string]json.RawMessage
		json.Unmarshal(top["stream_options"], &so)
		if so == nil {
			so = map[string]json.RawMessage{}
		}
		so["include_usage"] = json.RawMessage("true")
		top["stream_options"] = mustJSON(so)
	}
	if note != "" {
		var msgs []json.RawMessage
		if err := json.Unmarshal(top["messages"], &msgs); err != nil {
			return nil, err
		}
		msgs = append(msgs, mustJSON(map[string]string{"role": "user", "content": note}))
		top["messages"] = mustJSON(msgs)
	}
	return json.Marshal(top)
}

// guardUsage is u as the ledger counts it; nil when the response has
// none.
func guardUsage(u *openai.Usage) *rollout.GuardUsage {
	if u == nil {
		return nil
	}
	g := &rollout.GuardUsage{Input: u.PromptTokens, Output: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		g.Cached = u.PromptTokensDetails.CachedTokens
	}
	if u.CompletionTokensDetails != nil {
		g.Reasoning = u.CompletionTokensDetails.ReasoningTokens
	}
	return g
}

// Reply reads the first choice.
func (Chat) Reply(body []byte) Reply {
	var w chatResponse
	if json.Unmarshal(body, &w) != nil {
		return Reply{}
	}
	r := Reply{Usage: guardUsage(w.Usage), IDs: appendID(nil, w.ID)}
	if len(w.Choices) > 0 && w.Choices[0].Message != nil {
		m := w.Choices[0].Message
		r.Items = []rollout.Message{{Role: "assistant", Content: chatAssistant(partsText(m.Content), m.ToolCalls)}}
		for _, c := range m.ToolCalls {
			r.IDs = appendID(r.IDs, c.ID)
		}
		r.Complete = w.Choices[0].FinishReason != nil
	}
	return r
}

// chatStream accumulates the first choice's deltas.
type chatStream struct {
	req      *Request
	id       string
	text     strings.Builder
	calls    []openai.ToolCall
	usage    *openai.Usage
	finished bool
	done     bool
}

// Stream reads chunks; the usage chunk the guard asked for is dropped
// when the agent did not ask for it.
func (Chat) Stream(req *Request) Stream { return &chatStream{req: req} }

func (s *chatStream) Event(e Event) bool {
	if bytes.Equal(bytes.TrimSpace(e.Data), []byte("[DONE]")) {
		s.done = true
		return true
	}
	var w chatResponse
	if json.Unmarshal(e.Data, &w) != nil {
		return true
	}
	s.id = w.ID
	if w.Usage != nil {
		s.usage = w.Usage
		if len(w.Choices) == 0 && !s.req.AgentUsage {
			return false
		}
	}
	for _, c := range w.Choices {
		if c.Index != 0 || c.Delta == nil {
			continue
		}
		var piece string
		if json.Unmarshal(c.Delta.Content, &piece) == nil {
			s.text.WriteString(piece)
		}
		for _, tc := range c.Delta.ToolCalls {
			i := len(s.calls)
			if tc.Index != nil {
				i = *tc.Index
			}
			if i < 0 || i >= maxBlocks {
				continue
			}
			for len(s.calls) <= i {
				s.calls = append(s.calls, openai.ToolCall{})
			}
			if tc.ID != "" {
				s.calls[i].ID = tc.ID
			}
			if tc.Function.Name != "" {
				s.calls[i].Function.Name += tc.Function.Name
			}
			s.calls[i].Function.Arguments += tc.Function.Arguments
		}
		if c.FinishReason != nil {
			s.finished = true
		}
	}
	return true
}

func (s *chatStream) Done() bool { return s.done }

func (s *chatStream) Reply() Reply {
	r := Reply{Usage: guardUsage(s.usage), IDs: appendID(nil, s.id), Complete: s.done || (s.finished && s.usage != nil)}
	r.Items = []rollout.Message{{Role: "assistant", Content: chatAssistant(s.text.String(), s.calls)}}
	for _, c := range s.calls {
		r.IDs = appendID(r.IDs, c.ID)
	}
	return r
}

// Answer is a chat.completion (or its chunks) with text as the content.
func (Chat) Answer(req *Request, text string) (string, []byte) {
	id := "chatcmpl-bagen-guard"
	if !req.Stream {
		return "application/json", mustJSON(map[string]any{
			"id": id, "object": "chat.completion", "created": 0, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop", "logprobs": nil}},
			"usage":   map[string]any{"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
		})
	}
	chunk := func(delta map[string]any, finish any) []byte {
		return sseData(mustJSON(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 0, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}},
		}))
	}
	var b bytes.Buffer
	b.Write(chunk(map[string]any{"role": "assistant", "content": text}, nil))
	b.Write(chunk(map[string]any{}, "stop"))
	if req.AgentUsage {
		b.Write(sseData(mustJSON(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 0, "model": req.Model, "choices": []any{},
			"usage": map[string]any{"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
		})))
	}
	b.Write(sseData([]byte("[DONE]")))
	return "text/event-stream", b.Bytes()
}

// ContextError is OpenAI's context_length_exceeded error.
func (Chat) ContextError(text string) []byte { return openAIContextError(text) }

func openAIContextError(text string) []byte {
	return mustJSON(map[string]any{"error": map[string]any{
		"message": "This model's maximum context length is exceeded: " + text,
		"type":    "invalid_request_error", "param": "messages", "code": "context_length_exceeded",
	}})
}

// sseData is one "data:" event.
func sseData(data []byte) []byte {
	return append(append([]byte("data: "), data...), "\n\n"...)
}

// sseNamed is one event with a name.
func sseNamed(name string, data []byte) []byte {
	return append([]byte("event: "+name+"\n"), sseData(data)...)
}

// metadataSession is metadata.session_id, else the session in Claude
// Code's metadata.user_id ("…_session_<uuid>", or a JSON object with
// session_id).
func metadataSession(md map[string]json.RawMessage) string {
	var s string
	if json.Unmarshal(md["session_id"], &s) == nil && s != "" {
		return s
	}
	var user string
	if json.Unmarshal(md["user_id"], &user) != nil || user == "" {
		return ""
	}
	var obj struct {
		SessionID string `json:"session_id"`
	}
	if json.Unmarshal([]byte(user), &obj) == nil && obj.SessionID != "" {
		return obj.SessionID
	}
	if _, after, ok := strings.Cut(user, "_session_"); ok {
		return after
	}
	return ""
}

// readChat reads a Chat Completions request with the house's JSON lexer,
// as Request reads it with encoding/json; it reports false where
// encoding/json could read the body otherwise (see readAnthropic), and
// Request then reads it the slow way (FuzzRequestReaders).
func readChat(lx *lexReader) (*Request, bool) {
	r := &Request{}
	var h histState
	var messages int
	ok := lx.object(func(key string) bool {
		switch key {
		case "stream_options":
			return lx.object(func(string) bool { r.AgentUsage = lx.boolean(); return true }, "include_usage")
		case "messages":
			messages = lx.history(&h, func() bool { return lx.chatMessage(&h) })
		default:
			return lx.requestField(r, key)
		}
		return true
	}, "model", "stream", "stream_options", "metadata", "tools", "messages")
	if !lx.end(ok) || messages == 0 {
		return nil, false
	}
	r.Items, r.Echoed = h.items, h.echoed
	return r, true
}

// chatMessage reads one message into h's items, as Request does.
func (lx *lexReader) chatMessage(h *histState) bool {
	var role string
	var content []byte
	var calls []openai.ToolCall
	ok := lx.object(func(key string) bool {
		switch key {
		case "role":
			role = lx.str()
		case "content":
			content = lx.d.Raw()
		case "tool_calls":
			if lx.d.Kind() == jsonlex.Null {
				lx.d.Null()
				return true
			}
			lx.array(func() bool {
				c, ok := lx.chatToolCall()
				calls = append(calls, c)
				return ok
			})
		}
		return true
	}, "role", "content", "tool_calls")
	text, tok := lexParts(content)
	if !ok || !tok {
		return false
	}
	if role == "assistant" {
		h.items = append(h.items, rollout.Message{Role: "assistant", Content: chatAssistant(text, calls)})
		h.echoed = h.echoed[:0]
		for _, c := range calls {
			h.echoed = appendID(h.echoed, c.ID)
		}
		return true
	}
	if role == "developer" {
		role = "system"
	}
	h.items = append(h.items, rollout.Message{Role: role, Content: text})
	return true
}

// chatToolCall reads one tool call of an assistant message.
func (lx *lexReader) chatToolCall() (openai.ToolCall, bool) {
	var c openai.ToolCall
	ok := lx.object(func(key string) bool {
		switch key {
		case "index":
			return lx.smallInt()
		case "id":
			c.ID = lx.str()
		case "type":
			c.Type = lx.str()
		case "function":
			return lx.object(func(key string) bool {
				if key == "name" {
					c.Function.Name = lx.str()
				} else {
					c.Function.Arguments = lx.str()
				}
				return true
			}, "name", "arguments")
		}
		return true
	}, "index", "id", "type", "function")
	return c, ok
}
