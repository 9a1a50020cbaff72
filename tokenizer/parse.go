package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxID bounds token ids, so that a corrupt file cannot make Parse allocate
// gigabytes for the id → token table.
const maxID = 1 << 24

// fileJSON is the part of a Hugging Face tokenizer.json this package reads.
// post_processor and decoder are ignored: Encode does what encode(text,
// add_special_tokens=False) does, and Decode inverts the ByteLevel mapping
// that the required pre-tokenizer implies.
type fileJSON struct {
	AddedTokens  []addedJSON     `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        modelJSON       `json:"model"`
}

type addedJSON struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	Lstrip     bool   `json:"lstrip"`
	Rstrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
}

type modelJSON struct {
	Type                    string           `json:"type"`
	Vocab                   map[string]int32 `json:"vocab"`
	Merges                  json.RawMessage  `json:"merges"`
	Dropout                 *float64         `json:"dropout"`
	ContinuingSubwordPrefix *string          `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string          `json:"end_of_word_suffix"`
	IgnoreMerges            bool             `json:"ignore_merges"`
}

// stepJSON is a normalizer or pre-tokenizer object of any type.
type stepJSON struct {
	Type           string            `json:"type"`
	Normalizers    []json.RawMessage `json:"normalizers"`
	Pretokenizers  []json.RawMessage `json:"pretokenizers"`
	Pattern        map[string]string `json:"pattern"`
	Behavior       string            `json:"behavior"`
	Invert         bool              `json:"invert"`
	AddPrefixSpace bool              `json:"add_prefix_space"`
	UseRegex       *bool             `json:"use_regex"`
}

// Parse reads a Hugging Face tokenizer.json. It accepts a BPE model with
// Qwen2's pre-tokenizer (Split with Qwen2Pattern, then ByteLevel without its
// own regex) and no normalizer or NFC; anything else is an error wrapping
// ErrUnsupported that names the field.
func Parse(r io.Reader) (*Tokenizer, error) {
	return parse(r, "")
}

// Load reads the tokenizer.json at path.
func Load(path string) (*Tokenizer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readFile(f)
	if err != nil {
		return nil, jsonError(path, "", err)
	}
	return parseData(data, path)
}

// readFile reads f whole into one buffer of its size. io.ReadAll grows its
// buffer as it reads, and in a new process every larger buffer is fresh
// memory that it clears page by page: for Qwen's 11 MB file that was about
// 200 ms of CPU in page faults, during which the collector, unable to stop
// the goroutine, spun as long again (about half of a command's start).
func readFile(f *os.File) ([]byte, error) {
	size := 0
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = int(st.Size())
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	_, err := buf.ReadFrom(f)
	return buf.Bytes(), err
}

func parse(r io.Reader, source string) (*Tokenizer, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, jsonError(source, "", err)
	}
	return parseData(data, source)
}

// parseData parses the contents of a tokenizer.json; source names it in
// errors.
func parseData(data []byte, source string) (*Tokenizer, error) {
	m, ok := readModelFast(data, source)
	if !ok {
		var err error
		if m, err = readModel(data, source); err != nil {
			return nil, err
		}
	}
	return build(m)
}

// readModel reads the model of a tokenizer.json with encoding/json: the
// meaning of every file, and every error, is this function's.
// readModelFast gives the same model faster on the files it can read.
func readModel(data []byte, source string) (*model, error) {
	var f fileJSON
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&f); err != nil {
		return nil, jsonError(source, "", err)
	}
	m := &model{source: source, vocabField: "model.vocab", mergesField: "model.merges", ignoreMerges: f.Model.IgnoreMerges}
	var err error
	if err = checkModel(source, &f.Model); err != nil {
		return nil, err
	}
	if m.nfc, err = parseNormalizer(source, "normalizer", f.Normalizer); err != nil {
		return nil, err
	}
	if err = checkPreTokenizer(source, f.PreTokenizer); err != nil {
		return nil, err
	}
	if err = checkIDs(source, f.Model.Vocab); err != nil {
		return nil, err
	}
	m.vocab = f.Model.Vocab
	if m.merges, err = parseMerges(source, f.Model.Merges); err != nil {
		return nil, err
	}
	if m.added, err = addedTokens(source, f.AddedTokens); err != nil {
		return nil, err
	}
	return m, nil
}

// jsonError turns a decoding error into one that names the field.
func jsonError(source, field string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		f := te.Field
		if field != "" {
			f = strings.TrimSuffix(field+"."+f, ".")
		}
		return &FieldError{File: source, Field: f, Err: fmt.Errorf("%w: got JSON %s, want %s", ErrMalformed, te.Value, te.Type)}
	}
	if field == "" {
		field = "(file)"
	}
	return &FieldError{File: source, Field: field, Err: fmt.Errorf("%w: %w", ErrMalformed, err)}
}

func unsupported(source, field, format string, args ...any) error {
	return &FieldError{File: source, Field: field, Err: fmt.Errorf("%w: "+format, append([]any{ErrUnsupported}, args...)...)}
}

// checkModel rejects BPE options that change tokenization in ways this
// package does not implement.
func checkModel(source string, m *modelJSON) error {
	switch {
	case m.Type != "BPE":
		return unsupported(source, "model.type", "got %q, want \"BPE\"", m.Type)
	case m.Dropout != nil && *m.Dropout != 0:
		return unsupported(source, "model.dropout", "got %v, want null (dropout makes tokenization random)", *m.Dropout)
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "":
		return unsupported(source, "model.continuing_subword_prefix", "got %q, want \"\"", *m.ContinuingSubwordPrefix)
	case m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return unsupported(source, "model.end_of_word_suffix", "got %q, want \"\"", *m.EndOfWordSuffix)
	case m.Vocab == nil:
		return &FieldError{File: source, Field: "model.vocab", Err: fmt.Errorf("%w: missing", ErrMalformed)}
	}
	return nil
}

// parseNormalizer reports whether the normalizer is NFC; null, NFC and a
// Sequence of those are accepted.
func parseNormalizer(source, field string, raw json.RawMessage) (nfc bool, err error) {
	if isNull(raw) {
		return false, nil
	}
	var st stepJSON
	if err := json.Unmarshal(raw, &st); err != nil {
		return false, jsonError(source, field, err)
	}
	switch st.Type {
	case "NFC":
		return true, nil
	case "Sequence":
		for i, sub := range st.Normalizers {
			n, err := parseNormalizer(source, fmt.Sprintf("%s.normalizers[%d]", field, i), sub)
			if err != nil {
				return false, err
			}
			nfc = nfc || n
		}
		return nfc, nil
	}
	return false, unsupported(source, field+".type", "got %q, want \"NFC\" or none", st.Type)
}

// checkPreTokenizer accepts exactly Qwen2's pre-tokenizer: a Sequence of a
// Split on Qwen2Pattern (Isolated, not inverted) and a ByteLevel with
// add_prefix_space and use_regex false.
func checkPreTokenizer(source string, raw json.RawMessage) error {
	const want = "a Sequence of Split (Qwen2 regex) and ByteLevel"
	var seq stepJSON
	if isNull(raw) {
		return unsupported(source, "pre_tokenizer", "got null, want %s", want)
	}
	if err := json.Unmarshal(raw, &seq); err != nil {
		return jsonError(source, "pre_tokenizer", err)
	}
	if seq.Type != "Sequence" {
		return unsupported(source, "pre_tokenizer.type", "got %q, want %s", seq.Type, want)
	}
	if len(seq.Pretokenizers) != 2 {
		return unsupported(source, "pre_tokenizer.pretokenizers", "got %d steps, want %s", len(seq.Pretokenizers), want)
	}
	var split, bl stepJSON
	if err := json.Unmarshal(seq.Pretokenizers[0], &split); err != nil {
		return jsonError(source, "pre_tokenizer.pretokenizers[0]", err)
	}
	if err := json.Unmarshal(seq.Pretokenizers[1], &bl); err != nil {
		return jsonError(source, "pre_tokenizer.pretokenizers[1]", err)
	}
	const p0, p1 = "pre_tokenizer.pretokenizers[0]", "pre_tokenizer.pretokenizers[1]"
	switch {
	case split.Type != "Split":
		return unsupported(source, p0+".type", "got %q, want \"Split\"", split.Type)
	case split.Pattern["Regex"] != Qwen2Pattern:
		return unsupported(source, p0+".pattern", "got %v, want the Qwen2 regex %q", split.Pattern, Qwen2Pattern)
	case split.Behavior != "Isolated":
		return unsupported(source, p0+".behavior", "got %q, want \"Isolated\"", split.Behavior)
	case split.Invert:
		return unsupported(source, p0+".invert", "got true, want false")
	case bl.Type != "ByteLevel":
		return unsupported(source, p1+".type", "got %q, want \"ByteLevel\"", bl.Type)
	case bl.AddPrefixSpace:
		return unsupported(source, p1+".add_prefix_space", "got true, want false")
	case bl.UseRegex == nil || *bl.UseRegex:
		return unsupported(source, p1+".use_regex", "got true (the default), want false")
	}
	return nil
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// checkIDs checks the ids of the vocabulary.
func checkIDs(source string, v map[string]int32) error {
	for tok, id := range v {
		if id < 0 || id >= maxID {
			return &FieldError{File: source, Field: fmt.Sprintf("model.vocab[%q]", tok),
				Err: fmt.Errorf("%w: id %d out of range [0, %d)", ErrMalformed, id, maxID)}
		}
	}
	return nil
}

// parseMerges reads merges as ["a", "b"] pairs (tokenizers ≥ 0.20) or as
// "a b" strings (older files).
func parseMerges(source string, raw json.RawMessage) ([][2]string, error) {
	const field = "model.merges"
	if isNull(raw) {
		return nil, nil
	}
	var pairs [][]string
	if err := json.Unmarshal(raw, &pairs); err == nil {
		out := make([][2]string, len(pairs))
		for i, p := range pairs {
			if len(p) != 2 {
				return nil, &FieldError{File: source, Field: fmt.Sprintf("%s[%d]", field, i),
					Err: fmt.Errorf("%w: got %d strings, want 2", ErrMalformed, len(p))}
			}
			out[i] = [2]string{p[0], p[1]}
		}
		return out, nil
	}
	var strs []string
	if err := json.Unmarshal(raw, &strs); err != nil {
		return nil, &FieldError{File: source, Field: field,
			Err: fmt.Errorf("%w: want a list of [\"a\", \"b\"] pairs or of \"a b\" strings", ErrMalformed)}
	}
	return splitMerges(source, field, strs)
}

// splitMerges splits "a b" merges. Byte-level tokens never hold a space
// (the space byte is Ġ), so the split is unambiguous.
func splitMerges(source, field string, strs []string) ([][2]string, error) {
	out := make([][2]string, len(strs))
	for i, s := range strs {
		a, b, ok := strings.Cut(s, " ")
		if !ok || strings.Contains(b, " ") {
			return nil, &FieldError{File: source, Field: fmt.Sprintf("%s[%d]", field, i),
				Err: fmt.Errorf("%w: got %q, want two tokens separated by one space", ErrMalformed, s)}
		}
		out[i] = [2]string{a, b}
	}
	return out, nil
}

// addedTokens converts added_tokens. Every added token is recognized, special
// or not, as Hugging Face does unless split_special_tokens is set.
func addedTokens(source string, in []addedJSON) ([]addedToken, error) {
	out := make([]addedToken, 0, len(in))
	for i, a := range in {
		if a.ID < 0 || a.ID >= maxID {
			return nil, &FieldError{File: source, Field: fmt.Sprintf("added_tokens[%d].id", i),
				Err: fmt.Errorf("%w: id %d out of range [0, %d)", ErrMalformed, a.ID, maxID)}
		}
		out = append(out, addedToken{content: a.Content, id: int32(a.ID), singleWord: a.SingleWord,
			lstrip: a.Lstrip, rstrip: a.Rstrip, normalized: a.Normalized})
	}
	return out, nil
}
