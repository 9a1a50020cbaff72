// Package openai holds the wire types of OpenAI's Chat Completions API
// (POST /v1/chat/completions and GET /v1/models) as bagen-data speaks it:
// the estimator client (eval/prediction), grpo serve, the guard's chat
// codec and the test agents' model server (internal/agenttest) all read
// and write these types, so that one file says what goes over the wire,
// the way ollama keeps api/types.go.
//
// The types carry only the fields bagen-data reads or writes; a reader
// ignores the rest. A message's content stays raw JSON (Message.Content)
// because clients send either a string or an array of content parts.
package openai

import (
	"bytes"
	"encoding/json"

	"bagen-data/internal/httpd"
)

// ChatRequest is a Chat Completions request body: the fields a proxy
// reads to follow a conversation. Sampling parameters are left to each
// reader (grpo serve checks them field by field, the estimator client
// merges vendor ones), so that a value of an unexpected type in one of
// them does not fail reading the rest.
type ChatRequest struct {
	Model         string                     `json:"model"`
	Messages      []Message                  `json:"messages"`
	Stream        bool                       `json:"stream"`
	StreamOptions *StreamOptions             `json:"stream_options,omitempty"`
	Metadata      map[string]json.RawMessage `json:"metadata,omitempty"`
	Tools         []json.RawMessage          `json:"tools,omitempty"`
}

// StreamOptions is a streamed request's stream_options.
type StreamOptions struct {
	// IncludeUsage asks for a last chunk with the usage and no choices.
	IncludeUsage bool `json:"include_usage"`
}

// Message is a request's message, a response's message or a stream
// chunk's delta.
type Message struct {
	Role string `json:"role,omitempty"`
	// Content is a string, an array of ContentPart, null, or absent (a
	// delta that carries none); Text writes a string.
	Content json.RawMessage `json:"content,omitempty"`
	// ReasoningContent (vLLM, SGLang, DeepSeek) and Reasoning (Ollama,
	// OpenRouter) carry a reasoning model's thinking apart from Content.
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	Reasoning        string     `json:"reasoning,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
}

// ContentPart is one element of a content array.
type ContentPart struct {
	Type string  `json:"type"`
	Text *string `json:"text,omitempty"`
}

// ToolCall is an assistant's call of a function tool; in a stream chunk
// the pieces of one call share its Index.
type ToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and its arguments as a JSON text.
type FunctionCall struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// ChatCompletion is a response body ("object": "chat.completion") or one
// stream chunk ("chat.completion.chunk").
type ChatCompletion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	Usage   *Usage   `json:"usage,omitempty"`
}

// Objects of ChatCompletion.
const (
	ObjectCompletion = "chat.completion"
	ObjectChunk      = "chat.completion.chunk"
)

// Choice is one answer: Message in a response, Delta in a stream chunk.
// FinishReason is null until the answer ends; Logprobs is written null.
type Choice struct {
	Index        int             `json:"index"`
	Message      *Message        `json:"message,omitempty"`
	Delta        *Message        `json:"delta,omitempty"`
	FinishReason *string         `json:"finish_reason"`
	Logprobs     json.RawMessage `json:"logprobs"`
}

// Usage counts a request's tokens: PromptTokens holds the cached ones,
// CompletionTokens the reasoning ones.
type Usage struct {
	PromptTokens            int64                    `json:"prompt_tokens"`
	CompletionTokens        int64                    `json:"completion_tokens"`
	TotalTokens             int64                    `json:"total_tokens"`
	PromptTokensDetails     *PromptTokensDetails     `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails *CompletionTokensDetails `json:"completion_tokens_details,omitempty"`
}

// PromptTokensDetails splits the prompt tokens.
type PromptTokensDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
}

// CompletionTokensDetails splits the completion tokens; ReasoningTokens
// is nil when the server does not say.
type CompletionTokensDetails struct {
	ReasoningTokens *int64 `json:"reasoning_tokens,omitempty"`
}

// ErrorResponse is an error body: {"error": {…}}.
type ErrorResponse struct {
	Error Error `json:"error"`
}

// Error is an API error. Param (the request field at fault) and Code (a
// machine-readable reason) are written null when "" (Append).
type Error struct {
	Message string `json:"message"`
	Type    string `json:"type"` // invalid_request_error, not_found_error, server_error, …
	Param   string `json:"param"`
	Code    string `json:"code"`
}

// Append appends e's body, {"error":{"message","type","param","code"}},
// with strings written as httpd.AppendString writes them.
func (e Error) Append(b []byte) []byte {
	b = append(b, `{"error":{"message":`...)
	b = httpd.AppendString(b, e.Message)
	b = append(b, `,"type":`...)
	b = httpd.AppendString(b, e.Type)
	b = append(b, `,"param":`...)
	b = appendOptional(b, e.Param)
	b = append(b, `,"code":`...)
	b = appendOptional(b, e.Code)
	return append(b, "}}"...)
}

func appendOptional(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return httpd.AppendString(b, s)
}

// ModelList is the answer of GET /v1/models.
type ModelList struct {
	Object string  `json:"object"` // "list"
	Data   []Model `json:"data"`
}

// Model is one served model. Accounting is bagen-data's extension: the
// token accounting a grpo serve head learned on ("message" or "replay"),
// omitted when unknown.
type Model struct {
	ID         string `json:"id"`
	Object     string `json:"object"` // "model"
	Created    int64  `json:"created"`
	OwnedBy    string `json:"owned_by"`
	Accounting string `json:"accounting,omitempty"`
}

// Text is s as a message's content: a JSON string with <, > and &
// written as they are.
func Text(s string) json.RawMessage {
	return Marshal(s)
}

// Marshal encodes v as encoding/json does, without escaping <, > and &
// and without a trailing newline. It panics if v does not marshal: the
// package's types always do.
func Marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("openai: encoding " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
