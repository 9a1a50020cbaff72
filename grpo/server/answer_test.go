package server

import (
	"context"
	"regexp"
	"testing"

	"bagen-data/grpo"
	"bagen-data/probes"
)

// fixedEstimator answers every query with one estimate, so that the
// bytes the server writes around it can be pinned without Ollama.
type fixedEstimator struct{ est grpo.Estimate }

func (f fixedEstimator) Answer(context.Context, grpo.Query) (grpo.Estimate, error) { return f.est, nil }
func (f fixedEstimator) Accounting() probes.AccountingKind                         { return "" }

// stamps are the parts of an answer that change with each request: the
// completion id and its creation time.
var stamps = regexp.MustCompile(`"id":"chatcmpl-[0-9a-z]+-[0-9]+","object":"(chat\.completion(?:\.chunk)?)","created":[0-9]+`)

// TestAnswerBytes pins the whole body of an answer, streamed and not,
// with the id and creation time masked.
func TestAnswerBytes(t *testing.T) {
	est := fixedEstimator{grpo.Estimate{Answer: "<answer>[140, 160] & <more></answer>", PromptTokens: 812, CompletionTokens: 11}}
	s := start(t, Config{Estimator: est})
	chat := s.url + "/v1/chat/completions"
	msgs := probeMessages()
	const head = `"id":"ID","object":"$1","created":T`
	tests := []struct{ name, extra, want string }{
		{"one answer", "", `{"id":"ID","object":"chat.completion","created":T,"model":"head","choices":[{"index":0,"message":{"role":"assistant","content":"<answer>[140, 160] & <more></answer>"},"finish_reason":"stop","logprobs":null}],"usage":{"prompt_tokens":812,"completion_tokens":11,"total_tokens":823}}`},
		{"stream", `,"stream":true`, "data: {" + `"id":"ID","object":"chat.completion.chunk","created":T,"model":"head","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"logprobs":null}]}` + "\n\n" +
			"data: {" + `"id":"ID","object":"chat.completion.chunk","created":T,"model":"head","choices":[{"index":0,"delta":{"content":"<answer>[140, 160] & <more></answer>"},"finish_reason":null,"logprobs":null}]}` + "\n\n" +
			"data: {" + `"id":"ID","object":"chat.completion.chunk","created":T,"model":"head","choices":[{"index":0,"delta":{},"finish_reason":"stop","logprobs":null}]}` + "\n\n" +
			"data: [DONE]\n\n"},
		{"stream with usage", `,"stream":true,"stream_options":{"include_usage":true}`, "data: {" + `"id":"ID","object":"chat.completion.chunk","created":T,"model":"head","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"logprobs":null}]}` + "\n\n" +
			"data: {" + `"id":"ID","object":"chat.completion.chunk","created":T,"model":"head","choices":[{"index":0,"delta":{"content":"<answer>[140, 160] & <more></answer>"},"finish_reason":null,"logprobs":null}]}` + "\n\n" +
			"data: {" + `"id":"ID","object":"chat.completion.chunk","created":T,"model":"head","choices":[{"index":0,"delta":{},"finish_reason":"stop","logprobs":null}]}` + "\n\n" +
			"data: {" + `"id":"ID","object":"chat.completion.chunk","created":T,"model":"head","choices":[],"usage":{"prompt_tokens":812,"completion_tokens":11,"total_tokens":823}}` + "\n\n" +
			"data: [DONE]\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, body := do(t, "POST", chat, chatBody("head", msgs, tt.extra))
			if got := stamps.ReplaceAllString(body, head); code != 200 || got != tt.want {
				t.Errorf("got %d\n%s\nwant 200\n%s", code, got, tt.want)
			}
		})
	}
}
