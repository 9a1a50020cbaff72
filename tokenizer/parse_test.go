package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// miniIDs are the non-byte tokens of miniJSON.
var miniIDs = map[string]int{"Ġt": 256, "he": 257, "Ġthe": 258, "aa": 259, "aaaa": 260, "abc": 261}

// miniJSON is a small tokenizer.json shaped like Qwen's: the 256 byte-level
// tokens (id = byte), a few merges and one added token, as a mutable tree.
func miniJSON() map[string]any {
	vocab := map[string]any{}
	for b, r := range byteRunes {
		vocab[string(r)] = b
	}
	for tok, id := range miniIDs {
		vocab[tok] = id
	}
	return map[string]any{
		"version":    "1.0",
		"truncation": nil,
		"added_tokens": []any{
			map[string]any{"id": 300, "content": "<|im_end|>", "single_word": false, "lstrip": false,
				"rstrip": false, "normalized": false, "special": true},
		},
		"normalizer": map[string]any{"type": "NFC"},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": Qwen2Pattern}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
		}},
		"post_processor": map[string]any{"type": "ByteLevel"},
		"decoder":        map[string]any{"type": "ByteLevel"},
		"model": map[string]any{
			"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": "",
			"end_of_word_suffix": "", "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
			"vocab":  vocab,
			"merges": []any{[]any{"Ġ", "t"}, []any{"h", "e"}, []any{"Ġt", "he"}, []any{"a", "a"}, []any{"aa", "aa"}},
		},
	}
}

// at returns the object at a dotted path of tree, e.g. "model" or
// "pre_tokenizer.pretokenizers.1".
func at(tree map[string]any, path string) map[string]any {
	cur := any(tree)
	for _, k := range strings.Split(path, ".") {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[k]
		case []any:
			var i int
			fmt.Sscan(k, &i)
			cur = c[i]
		}
	}
	return cur.(map[string]any)
}

func parseTree(t *testing.T, tree map[string]any) (*Tokenizer, error) {
	t.Helper()
	data, err := json.Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	return Parse(bytes.NewReader(data))
}

func TestParseMini(t *testing.T) {
	stringMerges := miniJSON()
	at(stringMerges, "model")["merges"] = []any{"Ġ t", "h e", "Ġt he", "a a", "aa aa"}
	ignore := miniJSON()
	at(ignore, "model")["ignore_merges"] = true
	tests := []struct {
		name string
		tree map[string]any
		in   string
		want []int
	}{
		{"merges chain", miniJSON(), " the", []int{258}},
		{"lowest rank leftmost", miniJSON(), "aaaaa", []int{260, 'a'}},
		{"tie goes left", miniJSON(), "aaa", []int{259, 'a'}},
		{"added token", miniJSON(), "a<|im_end|>the", []int{'a', 300, 't', 257}},
		{"string merges", stringMerges, " theaaaaa", []int{258, 260, 'a'}},
		{"no ignore_merges", miniJSON(), "abc", []int{'a', 'b', 'c'}},
		{"ignore_merges", ignore, "abc abc", []int{261, ' ', 'a', 'b', 'c'}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk, err := parseTree(t, tt.tree)
			if err != nil {
				t.Fatal(err)
			}
			if got := tk.Encode(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("Encode(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(tree map[string]any)
		want   string
		is     error
	}{
		{"model type", func(m map[string]any) { at(m, "model")["type"] = "Unigram" },
			`model.type: unsupported: got "Unigram", want "BPE"`, ErrUnsupported},
		{"dropout", func(m map[string]any) { at(m, "model")["dropout"] = 0.1 },
			`model.dropout: unsupported: got 0.1, want null (dropout makes tokenization random)`, ErrUnsupported},
		{"suffix", func(m map[string]any) { at(m, "model")["end_of_word_suffix"] = "</w>" },
			`model.end_of_word_suffix: unsupported: got "</w>", want ""`, ErrUnsupported},
		{"prefix", func(m map[string]any) { at(m, "model")["continuing_subword_prefix"] = "##" },
			`model.continuing_subword_prefix: unsupported: got "##", want ""`, ErrUnsupported},
		{"no vocab", func(m map[string]any) { delete(at(m, "model"), "vocab") },
			`model.vocab: malformed: missing`, ErrMalformed},
		{"normalizer", func(m map[string]any) { m["normalizer"] = map[string]any{"type": "NFKC"} },
			`normalizer.type: unsupported: got "NFKC", want "NFC" or none`, ErrUnsupported},
		{"normalizer in sequence", func(m map[string]any) {
			m["normalizer"] = map[string]any{"type": "Sequence", "normalizers": []any{map[string]any{"type": "NFC"}, map[string]any{"type": "Lowercase"}}}
		}, `normalizer.normalizers[1].type: unsupported: got "Lowercase", want "NFC" or none`, ErrUnsupported},
		{"no pre-tokenizer", func(m map[string]any) { m["pre_tokenizer"] = nil },
			`pre_tokenizer: unsupported: got null, want a Sequence of Split (Qwen2 regex) and ByteLevel`, ErrUnsupported},
		{"pre-tokenizer type", func(m map[string]any) { m["pre_tokenizer"] = map[string]any{"type": "Whitespace"} },
			`pre_tokenizer.type: unsupported: got "Whitespace", want a Sequence of Split (Qwen2 regex) and ByteLevel`, ErrUnsupported},
		{"pattern", func(m map[string]any) {
			at(m, "pre_tokenizer.pretokenizers.0")["pattern"] = map[string]any{"Regex": `\s+`}
		}, `pre_tokenizer.pretokenizers[0].pattern: unsupported: got map[Regex:\s+], want the Qwen2 regex ` +
			fmt.Sprintf("%q", Qwen2Pattern), ErrUnsupported},
		{"behavior", func(m map[string]any) { at(m, "pre_tokenizer.pretokenizers.0")["behavior"] = "Removed" },
			`pre_tokenizer.pretokenizers[0].behavior: unsupported: got "Removed", want "Isolated"`, ErrUnsupported},
		{"use_regex default", func(m map[string]any) { delete(at(m, "pre_tokenizer.pretokenizers.1"), "use_regex") },
			`pre_tokenizer.pretokenizers[1].use_regex: unsupported: got true (the default), want false`, ErrUnsupported},
		{"prefix space", func(m map[string]any) { at(m, "pre_tokenizer.pretokenizers.1")["add_prefix_space"] = true },
			`pre_tokenizer.pretokenizers[1].add_prefix_space: unsupported: got true, want false`, ErrUnsupported},
		{"merge unknown", func(m map[string]any) { at(m, "model")["merges"] = []any{[]any{"Ġ", "t"}, []any{"q", "zz"}} },
			`model.merges[1]: malformed: "zz" is not in the vocabulary`, ErrMalformed},
		{"merge result unknown", func(m map[string]any) { at(m, "model")["merges"] = []any{[]any{"x", "y"}} },
			`model.merges[0]: malformed: merged token "xy" is not in the vocabulary`, ErrMalformed},
		{"merge of three", func(m map[string]any) { at(m, "model")["merges"] = []any{[]any{"a", "a", "a"}} },
			`model.merges[0]: malformed: got 3 strings, want 2`, ErrMalformed},
		{"merge string", func(m map[string]any) { at(m, "model")["merges"] = []any{"a a", "aa"} },
			`model.merges[1]: malformed: got "aa", want two tokens separated by one space`, ErrMalformed},
		{"merges type", func(m map[string]any) { at(m, "model")["merges"] = 7 },
			`model.merges: malformed: want a list of ["a", "b"] pairs or of "a b" strings`, ErrMalformed},
		{"missing byte", func(m map[string]any) { delete(at(m, "model")["vocab"].(map[string]any), "Ġ") },
			`model.vocab: malformed: no token for byte 0x20 ("Ġ")`, ErrMalformed},
		{"negative id", func(m map[string]any) { at(m, "model")["vocab"].(map[string]any)["zz"] = -3 },
			`model.vocab["zz"]: malformed: id -3 out of range [0, 16777216)`, ErrMalformed},
		{"vocab type", func(m map[string]any) { at(m, "model")["vocab"] = []any{1} },
			`model.vocab: malformed: got JSON array, want map[string]int32`, ErrMalformed},
		{"merge id too large", func(m map[string]any) {
			v := at(m, "model")["vocab"].(map[string]any)
			v["qq"], v["qqq"] = 1<<20-1, 1<<20
			at(m, "model")["merges"] = []any{[]any{"Ġ", "t"}, []any{"qq", "q"}}
		}, `model.merges[1]: malformed: token id 1048575 is above 1048574, the largest this package supports in a merge`, ErrMalformed},
		{"added id", func(m map[string]any) { at(m, "added_tokens.0")["id"] = 1 << 30 },
			`added_tokens[0].id: malformed: id 1073741824 out of range [0, 16777216)`, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree := miniJSON()
			tt.mutate(tree)
			_, err := parseTree(t, tree)
			if err == nil || err.Error() != tt.want || !errors.Is(err, tt.is) {
				t.Errorf("Parse error = %v\nwant %s", err, tt.want)
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Errorf("Parse error %T, want *FieldError", err)
			}
		})
	}
}

func TestParseNotJSON(t *testing.T) {
	_, err := Parse(strings.NewReader(`{"model": `))
	if want := "(file): malformed: unexpected EOF"; err == nil || err.Error() != want || !errors.Is(err, ErrMalformed) {
		t.Errorf("Parse error = %v, want %q", err, want)
	}
}

// TestAddedTokenOptions checks single_word, lstrip, rstrip and normalized
// added tokens, which Qwen's file does not use.
func TestAddedTokenOptions(t *testing.T) {
	tests := []struct {
		name string
		tok  map[string]any
		in   string
		want []int
	}{
		{"plain", map[string]any{"content": "ab"}, "xab y", []int{'x', 300, ' ', 'y'}},
		{"leftmost longest", map[string]any{"content": "ab"}, "aab", []int{'a', 300}},
		{"single word rejects", map[string]any{"content": "ab", "single_word": true}, "xab", []int{'x', 'a', 'b'}},
		{"single word accepts", map[string]any{"content": "ab", "single_word": true}, "x ab!", []int{'x', ' ', 300, '!'}},
		{"lstrip", map[string]any{"content": "ab", "lstrip": true}, "x  ab y", []int{'x', 300, ' ', 'y'}},
		{"rstrip", map[string]any{"content": "ab", "rstrip": true}, "x ab \t y", []int{'x', ' ', 300, 'y'}},
		{"normalized", map[string]any{"content": "é", "normalized": true}, "xe\u0301y", []int{'x', 300, 'y'}},
		{"not normalized", map[string]any{"content": "é", "normalized": false}, "xe\u0301y", []int{'x', 195, 169, 'y'}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree := miniJSON()
			tt.tok["id"] = 300
			tree["added_tokens"] = []any{tt.tok}
			tk, err := parseTree(t, tree)
			if err != nil {
				t.Fatal(err)
			}
			if got := tk.Encode(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("Encode(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

// TestLoadFile reads a file whole however it is sized, and names the path
// in its errors: a missing file, a directory, a truncated file.
func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "tokenizer.json")
	data, err := json.Marshal(miniJSON())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	tk, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := tk.Encode(" the"); !slices.Equal(got, []int{258}) {
		t.Errorf("Encode(\" the\") = %v, want [258]", got)
	}
	if err := os.WriteFile(p, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, want string }{
		{filepath.Join(dir, "nope.json"), "open " + filepath.Join(dir, "nope.json") + ": no such file or directory"},
		{dir, dir + ": (file): malformed: read " + dir + ": is a directory"},
		{p, p + ": (file): malformed: unexpected EOF"},
	} {
		if _, err := Load(tt.path); err == nil || err.Error() != tt.want {
			t.Errorf("Load(%s): %v, want %s", tt.path, err, tt.want)
		}
	}
}
