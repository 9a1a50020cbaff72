package openai

import (
	"encoding/json"
	"testing"
)

// TestCompletionBytes pins a response as the types write it: OpenAI's key
// order, a null finish reason and logprobs, <, > and & unescaped, and
// absent optional fields left out.
func TestCompletionBytes(t *testing.T) {
	stop := "stop"
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"response", ChatCompletion{ID: "c", Object: ObjectCompletion, Created: 7, Model: "m",
			Choices: []Choice{{Message: &Message{Role: "assistant", Content: Text("a<b>&c")}, FinishReason: &stop}},
			Usage:   &Usage{PromptTokens: 3, CompletionTokens: 2, TotalTokens: 5}},
			`{"id":"c","object":"chat.completion","created":7,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"a<b>&c"},"finish_reason":"stop","logprobs":null}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`},
		{"empty delta", Choice{Delta: &Message{}}, `{"index":0,"delta":{},"finish_reason":null,"logprobs":null}`},
		{"empty content", Message{Content: Text("")}, `{"content":""}`},
		{"tool call", ToolCall{ID: "call_1", Type: "function", Function: FunctionCall{Name: "bash", Arguments: "{}"}},
			`{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{}"}}`},
	}
	for _, tt := range tests {
		if got := string(Marshal(tt.v)); got != tt.want {
			t.Errorf("%s: got\n%s\nwant\n%s", tt.name, got, tt.want)
		}
	}
}

// TestReadUsage reads the usage a server sends with its details, and
// tells a missing reasoning count from a zero one.
func TestReadUsage(t *testing.T) {
	var u Usage
	if err := json.Unmarshal([]byte(`{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150,"prompt_tokens_details":{"cached_tokens":100},"completion_tokens_details":{"reasoning_tokens":0}}`), &u); err != nil {
		t.Fatal(err)
	}
	if u.PromptTokens != 120 || u.CompletionTokens != 30 || u.PromptTokensDetails.CachedTokens != 100 ||
		u.CompletionTokensDetails.ReasoningTokens == nil || *u.CompletionTokensDetails.ReasoningTokens != 0 {
		t.Errorf("got %+v", u)
	}
	var none Usage
	if err := json.Unmarshal([]byte(`{"prompt_tokens":1,"completion_tokens":2,"completion_tokens_details":{}}`), &none); err != nil {
		t.Fatal(err)
	}
	if none.CompletionTokensDetails.ReasoningTokens != nil || none.PromptTokensDetails != nil {
		t.Errorf("got %+v, want no reasoning count and no prompt details", none)
	}
}

func TestErrorAppend(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		{Error{Message: `m "q" <x>`, Type: "invalid_request_error", Param: "messages[0]"},
			`{"error":{"message":"m \"q\" <x>","type":"invalid_request_error","param":"messages[0]","code":null}}`},
		{Error{Message: "draining", Type: "server_error"}, `{"error":{"message":"draining","type":"server_error","param":null,"code":null}}`},
		{Error{Message: "x", Type: "t", Param: "model", Code: "model_not_found"}, `{"error":{"message":"x","type":"t","param":"model","code":"model_not_found"}}`},
	}
	for _, tt := range tests {
		if got := string(tt.e.Append(nil)); got != tt.want {
			t.Errorf("%+v: got %s, want %s", tt.e, got, tt.want)
		}
	}
}
