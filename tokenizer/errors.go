package tokenizer

import "errors"

// ErrUnsupported marks a tokenizer.json or Ollama model whose configuration
// this package does not implement: a model type other than BPE, another
// pre-tokenizer or normalizer, a BPE option that changes tokenization.
var ErrUnsupported = errors.New("unsupported")

// ErrMalformed marks tokenizer data that cannot be used as it is: a merge of
// tokens missing from the vocabulary, a missing byte-level token, a field of
// the wrong JSON type.
var ErrMalformed = errors.New("malformed")

// ErrSpec marks an Open spec that names no tokenizer, such as "ollama:" with
// no model.
var ErrSpec = errors.New("bad tokenizer spec")

// ErrRemote marks a remote source that answered with an error status.
var ErrRemote = errors.New("remote error")

// FieldError reports a problem with one field of tokenizer data, such as
// "qwen-tokenizer.json: model.merges[12]: malformed: …".
type FieldError struct {
	File  string // the file, URL or spec read; empty when unknown
	Field string // JSON path of the field, e.g. "pre_tokenizer.pretokenizers[0].pattern"
	Err   error  // what is wrong; wraps a sentinel of this package
}

// Error implements error.
func (e *FieldError) Error() string {
	if e.File == "" {
		return e.Field + ": " + e.Err.Error()
	}
	return e.File + ": " + e.Field + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *FieldError) Unwrap() error { return e.Err }
