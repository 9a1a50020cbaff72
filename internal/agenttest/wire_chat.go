package agenttest

import (
	"encoding/json"
	"net/http"
	"time"

	"bagen-data/internal/openai"
)

// OpenAI Chat Completions: prompt_tokens is the whole request with
// prompt_tokens_details.cached_tokens inside it; completion_tokens holds
// completion_tokens_details.reasoning_tokens.

func chatUsage(u Usage) *openai.Usage {
	if u.Omitted {
		return nil
	}
	out := &openai.Usage{PromptTokens: int64(u.Input), CompletionTokens: int64(u.Output), TotalTokens: int64(u.Input + u.Output),
		PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: int64(u.Cached)}}
	if !u.Unsplit {
		reasoning := int64(u.Reasoning)
		out.CompletionTokensDetails = &openai.CompletionTokensDetails{ReasoningTokens: &reasoning}
	}
	return out
}

func chatToolCall(r reply) openai.ToolCall {
	return openai.ToolCall{ID: "call_" + r.id, Type: "function",
		Function: openai.FunctionCall{Name: r.tool.name, Arguments: argsJSON(r.tool, r.answer.Command)}}
}

func writeChat(w http.ResponseWriter, r reply, stream bool) int {
	a := r.answer
	finish := "stop"
	if a.Command != "" {
		finish = "tool_calls"
	}
	head := openai.ChatCompletion{ID: "chatcmpl-" + r.id, Object: openai.ObjectCompletion, Created: time.Now().Unix(), Model: r.model}
	if !stream {
		msg := &openai.Message{Role: "assistant", Content: json.RawMessage("null"), ReasoningContent: a.Reasoning}
		if a.Text != "" {
			msg.Content = openai.Text(a.Text)
		}
		if a.Command != "" {
			msg.ToolCalls = []openai.ToolCall{chatToolCall(r)}
		}
		head.Choices, head.Usage = []openai.Choice{{Message: msg, FinishReason: &finish}}, chatUsage(a.Usage)
		return writeJSON(w, http.StatusOK, head)
	}
	head.Object = openai.ObjectChunk
	s := startSSE(w)
	chunk := func(delta *openai.Message, finish *string) {
		c := head
		c.Choices = []openai.Choice{{Delta: delta, FinishReason: finish}}
		s.event("", openai.Marshal(c))
	}
	chunk(&openai.Message{Role: "assistant", Content: openai.Text("")}, nil)
	if a.Reasoning != "" {
		chunk(&openai.Message{ReasoningContent: a.Reasoning}, nil)
	}
	if a.Text != "" {
		chunk(&openai.Message{Content: openai.Text(a.Text)}, nil)
	}
	if a.Command != "" {
		call, zero := chatToolCall(r), 0
		chunk(&openai.Message{ToolCalls: []openai.ToolCall{{Index: &zero, ID: call.ID, Type: call.Type,
			Function: openai.FunctionCall{Name: call.Function.Name}}}}, nil)
		chunk(&openai.Message{ToolCalls: []openai.ToolCall{{Index: &zero, Function: openai.FunctionCall{Arguments: call.Function.Arguments}}}}, nil)
	}
	chunk(&openai.Message{}, &finish)
	if r.usage && !a.Usage.Omitted {
		c := head
		c.Choices, c.Usage = []openai.Choice{}, chatUsage(a.Usage)
		s.event("", openai.Marshal(c))
	}
	s.event("", []byte("[DONE]"))
	return http.StatusOK
}
