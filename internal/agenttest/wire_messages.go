package agenttest

import (
	"encoding/json"
	"net/http"
)

// Anthropic Messages: input_tokens excludes cache_read_input_tokens and
// cache_creation_input_tokens (the whole request is their sum);
// output_tokens holds the thinking tokens, which
// output_tokens_details.thinking_tokens breaks out (Claude Code records it
// in its session log).

func messagesUsage(u Usage, output int) map[string]any {
	if u.Omitted {
		return nil
	}
	m := map[string]any{
		"input_tokens":                u.Input - u.Cached - u.CacheWrite,
		"cache_creation_input_tokens": u.CacheWrite,
		"cache_creation":              map[string]any{"ephemeral_5m_input_tokens": u.CacheWrite, "ephemeral_1h_input_tokens": 0},
		"cache_read_input_tokens":     u.Cached,
		"output_tokens":               output,
		"output_tokens_details":       map[string]any{"thinking_tokens": u.Reasoning},
		"service_tier":                "standard",
	}
	if u.Unsplit {
		delete(m, "output_tokens_details")
	}
	return m
}

// messagesBlocks returns the content blocks of an answer, complete.
func messagesBlocks(r reply) []map[string]any {
	a := r.answer
	var blocks []map[string]any
	if a.Reasoning != "" {
		blocks = append(blocks, map[string]any{"type": "thinking", "thinking": a.Reasoning, "signature": "agenttest-" + r.id})
	}
	if a.Text != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": a.Text})
	}
	if a.Command != "" {
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": "toolu_" + r.id, "name": r.tool.name,
			"input": r.tool.args(a.Command)})
	}
	return blocks
}

func writeMessages(w http.ResponseWriter, r reply, stream bool) int {
	a := r.answer
	stop := "end_turn"
	if a.Command != "" {
		stop = "tool_use"
	}
	blocks := messagesBlocks(r)
	msg := map[string]any{"id": "msg_" + r.id, "type": "message", "role": "assistant", "model": r.model,
		"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": messagesUsage(a.Usage, a.Usage.Output)}
	if !stream {
		return writeJSON(w, http.StatusOK, msg)
	}
	s := startSSE(w)
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"], start["usage"] = []any{}, nil, messagesUsage(a.Usage, 1)
	s.event("message_start", map[string]any{"type": "message_start", "message": start})
	s.event("ping", map[string]any{"type": "ping"})
	for i, b := range blocks {
		streamBlock(s, i, b)
	}
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": messagesUsage(a.Usage, a.Usage.Output)})
	s.event("message_stop", map[string]any{"type": "message_stop"})
	return http.StatusOK
}

// streamBlock writes one content block's start, deltas and stop.
func streamBlock(s *sse, i int, b map[string]any) {
	var start map[string]any
	var deltas []map[string]any
	switch b["type"] {
	case "thinking":
		start = map[string]any{"type": "thinking", "thinking": "", "signature": ""}
		deltas = []map[string]any{{"type": "thinking_delta", "thinking": b["thinking"]}, {"type": "signature_delta", "signature": b["signature"]}}
	case "text":
		start = map[string]any{"type": "text", "text": ""}
		deltas = []map[string]any{{"type": "text_delta", "text": b["text"]}}
	default:
		start = map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}
		in, _ := json.Marshal(b["input"])
		deltas = []map[string]any{{"type": "input_json_delta", "partial_json": ""}, {"type": "input_json_delta", "partial_json": string(in)}}
	}
	s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start})
	for _, d := range deltas {
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
	}
	s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
}
