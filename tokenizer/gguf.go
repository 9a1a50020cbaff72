package tokenizer

import (
	"fmt"
	"math"
)

// GGUF token types (llama.cpp's llama_token_type). Control and user-defined
// tokens are the added tokens of the Hugging Face file: <|im_start|> is
// control, <think> user-defined.
const (
	ggufControl     = 3
	ggufUserDefined = 4
)

// fromGGUF builds a tokenizer from GGUF tokenizer metadata as Ollama's
// /api/show returns it in model_info (JSON-decoded: arrays are []any,
// numbers float64). It needs tokenizer.ggml.model "gpt2" (byte-level BPE),
// tokenizer.ggml.pre "qwen2", and the tokens, merges and token_type arrays.
// GGUF keeps no normalizer; Qwen's tokenizer.json has NFC, which is applied.
func fromGGUF(source string, info map[string]any) (*Tokenizer, error) {
	if v, ok := info["tokenizer.ggml.model"]; ok && v != "gpt2" {
		return nil, unsupported(source, "tokenizer.ggml.model", "got %v, want \"gpt2\" (byte-level BPE)", v)
	}
	if v := info["tokenizer.ggml.pre"]; v != "qwen2" {
		return nil, unsupported(source, "tokenizer.ggml.pre", "got %v, want \"qwen2\"", v)
	}
	tokens, err := ggufStrings(source, info, "tokenizer.ggml.tokens")
	if err != nil {
		return nil, err
	}
	merges, err := ggufStrings(source, info, "tokenizer.ggml.merges")
	if err != nil {
		return nil, err
	}
	types, err := ggufInts(source, info, "tokenizer.ggml.token_type", len(tokens))
	if err != nil {
		return nil, err
	}
	m := &model{source: source, vocabField: "tokenizer.ggml.tokens", mergesField: "tokenizer.ggml.merges",
		vocab: make(map[string]int32, len(tokens)), nfc: true}
	for id, tok := range tokens {
		switch types[id] {
		case ggufControl, ggufUserDefined:
			m.added = append(m.added, addedToken{content: tok, id: int32(id)})
		default:
			m.vocab[tok] = int32(id)
		}
	}
	if m.merges, err = splitMerges(source, "tokenizer.ggml.merges", merges); err != nil {
		return nil, err
	}
	return build(m)
}

// ggufStrings returns the string array at key.
func ggufStrings(source string, info map[string]any, key string) ([]string, error) {
	v, ok := info[key]
	if !ok || v == nil {
		return nil, &FieldError{File: source, Field: key, Err: fmt.Errorf("%w: missing (is the model_info verbose?)", ErrMalformed)}
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, &FieldError{File: source, Field: key, Err: fmt.Errorf("%w: got %T, want an array of strings", ErrMalformed, v)}
	}
	out := make([]string, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, &FieldError{File: source, Field: fmt.Sprintf("%s[%d]", key, i), Err: fmt.Errorf("%w: got %T, want a string", ErrMalformed, e)}
		}
		out[i] = s
	}
	return out, nil
}

// ggufInts returns the integer array at key, which must have n elements.
func ggufInts(source string, info map[string]any, key string, n int) ([]int, error) {
	v, ok := info[key]
	if !ok || v == nil {
		return nil, &FieldError{File: source, Field: key, Err: fmt.Errorf("%w: missing (is the model_info verbose?)", ErrMalformed)}
	}
	arr, ok := v.([]any)
	if !ok || len(arr) != n {
		return nil, &FieldError{File: source, Field: key, Err: fmt.Errorf("%w: want an array of %d integers", ErrMalformed, n)}
	}
	out := make([]int, n)
	for i, e := range arr {
		f, ok := e.(float64)
		if !ok || f != math.Trunc(f) {
			return nil, &FieldError{File: source, Field: fmt.Sprintf("%s[%d]", key, i), Err: fmt.Errorf("%w: got %v, want an integer", ErrMalformed, e)}
		}
		out[i] = int(f)
	}
	return out, nil
}
