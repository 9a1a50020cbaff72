package tokenizer

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

// miniGGUF is Ollama's model_info for miniJSON's tokenizer, decoded from
// JSON as the api client decodes it.
func miniGGUF(t *testing.T) map[string]any {
	t.Helper()
	tokens := make([]string, 301)
	types := make([]int, 301)
	for b, r := range byteRunes {
		tokens[b], types[b] = string(r), 1
	}
	for tok, id := range miniIDs {
		tokens[id], types[id] = tok, 1
	}
	for id := 262; id < 300; id++ {
		tokens[id], types[id] = "[PAD]", 5 // unused
	}
	tokens[300], types[300] = "<think>", ggufUserDefined
	info := map[string]any{
		"general.architecture":      "qwen2",
		"tokenizer.ggml.model":      "gpt2",
		"tokenizer.ggml.pre":        "qwen2",
		"tokenizer.ggml.tokens":     tokens,
		"tokenizer.ggml.token_type": types,
		"tokenizer.ggml.merges":     []string{"Ġ t", "h e", "Ġt he", "a a", "aa aa"},
	}
	data, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFromGGUF(t *testing.T) {
	tk, err := fromGGUF("ollama:mini", miniGGUF(t))
	if err != nil {
		t.Fatal(err)
	}
	in, want := " the<think>aaaaa", []int{258, 300, 260, 'a'}
	if got := tk.Encode(in); !slices.Equal(got, want) {
		t.Errorf("Encode(%q) = %v, want %v", in, got, want)
	}
}

func TestFromGGUFErrors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(info map[string]any)
		want   string
		is     error
	}{
		{"model", func(m map[string]any) { m["tokenizer.ggml.model"] = "llama" },
			`ollama:mini: tokenizer.ggml.model: unsupported: got llama, want "gpt2" (byte-level BPE)`, ErrUnsupported},
		{"pre", func(m map[string]any) { m["tokenizer.ggml.pre"] = "llama-bpe" },
			`ollama:mini: tokenizer.ggml.pre: unsupported: got llama-bpe, want "qwen2"`, ErrUnsupported},
		{"no tokens", func(m map[string]any) { delete(m, "tokenizer.ggml.tokens") },
			`ollama:mini: tokenizer.ggml.tokens: malformed: missing (is the model_info verbose?)`, ErrMalformed},
		{"tokens type", func(m map[string]any) { m["tokenizer.ggml.tokens"] = "x" },
			`ollama:mini: tokenizer.ggml.tokens: malformed: got string, want an array of strings`, ErrMalformed},
		{"token element", func(m map[string]any) { m["tokenizer.ggml.tokens"].([]any)[5] = 5.0 },
			`ollama:mini: tokenizer.ggml.tokens[5]: malformed: got float64, want a string`, ErrMalformed},
		{"no types", func(m map[string]any) { m["tokenizer.ggml.token_type"] = nil },
			`ollama:mini: tokenizer.ggml.token_type: malformed: missing (is the model_info verbose?)`, ErrMalformed},
		{"types length", func(m map[string]any) { m["tokenizer.ggml.token_type"] = []any{1.0} },
			`ollama:mini: tokenizer.ggml.token_type: malformed: want an array of 301 integers`, ErrMalformed},
		{"type fraction", func(m map[string]any) { m["tokenizer.ggml.token_type"].([]any)[2] = 1.5 },
			`ollama:mini: tokenizer.ggml.token_type[2]: malformed: got 1.5, want an integer`, ErrMalformed},
		{"merge", func(m map[string]any) { m["tokenizer.ggml.merges"] = []any{"a  a"} },
			`ollama:mini: tokenizer.ggml.merges[0]: malformed: got "a  a", want two tokens separated by one space`, ErrMalformed},
		{"merge unknown", func(m map[string]any) { m["tokenizer.ggml.merges"] = []any{"a <think>"} },
			`ollama:mini: tokenizer.ggml.merges[0]: malformed: "<think>" is not in the vocabulary`, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := miniGGUF(t)
			tt.mutate(info)
			_, err := fromGGUF("ollama:mini", info)
			if err == nil || err.Error() != tt.want || !errors.Is(err, tt.is) {
				t.Errorf("fromGGUF error = %v\nwant %s", err, tt.want)
			}
		})
	}
}
