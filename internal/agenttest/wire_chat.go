package agenttest

import (
	"net/http"
	"time"
)

// OpenAI Chat Completions: prompt_tokens is the whole request with
// prompt_tokens_details.cached_tokens inside it; completion_tokens holds
// completion_tokens_details.reasoning_tokens.

func chatUsage(u Usage) map[string]any {
	if u.Omitted {
		return nil
	}
	m := map[string]any{
		"prompt_tokens":             u.Input,
		"completion_tokens":         u.Output,
		"total_tokens":              u.Input + u.Output,
		"prompt_tokens_details":     map[string]any{"cached_tokens": u.Cached},
		"completion_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
	}
	if u.Unsplit {
		delete(m, "completion_tokens_details")
	}
	return m
}

func chatToolCall(r reply) map[string]any {
	return map[string]any{"id": "call_" + r.id, "type": "function",
		"function": map[string]any{"name": r.tool.name, "arguments": argsJSON(r.tool, r.answer.Command)}}
}

func writeChat(w http.ResponseWriter, r reply, stream bool) int {
	a := r.answer
	finish := "stop"
	if a.Command != "" {
		finish = "tool_calls"
	}
	id := "chatcmpl-" + r.id
	created := time.Now().Unix()
	if !stream {
		msg := map[string]any{"role": "assistant", "content": nullable(a.Text)}
		if a.Reasoning != "" {
			msg["reasoning_content"] = a.Reasoning
		}
		if a.Command != "" {
			msg["tool_calls"] = []any{chatToolCall(r)}
		}
		return writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": r.model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
			"usage":   chatUsage(a.Usage),
		})
	}
	s := startSSE(w)
	chunk := func(delta map[string]any, finish any) {
		s.event("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": r.model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}})
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	if a.Reasoning != "" {
		chunk(map[string]any{"reasoning_content": a.Reasoning}, nil)
	}
	if a.Text != "" {
		chunk(map[string]any{"content": a.Text}, nil)
	}
	if a.Command != "" {
		call := chatToolCall(r)
		fn := call["function"].(map[string]any)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": call["id"], "type": "function",
			"function": map[string]any{"name": fn["name"], "arguments": ""}}}}, nil)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0,
			"function": map[string]any{"arguments": fn["arguments"]}}}}, nil)
	}
	chunk(map[string]any{}, finish)
	if r.usage && !a.Usage.Omitted {
		s.event("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": r.model,
			"choices": []any{}, "usage": chatUsage(a.Usage)})
	}
	s.event("", []byte("[DONE]"))
	return http.StatusOK
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
