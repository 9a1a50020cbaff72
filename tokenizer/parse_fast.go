package tokenizer

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"bagen-data/internal/jsonlex"
)

// readModelFast reads the model of an ordinary tokenizer.json — valid UTF-8
// and JSON, exact lower-case keys, each once, integer ids — without
// encoding/json's reflection over the vocabulary and merges (about 150k
// entries each): loading Qwen's file took 270 ms, most of it there. It
// reports false, and readModel decides, on anything else, including any
// file readModel would reject; on the files it reads, the model is
// readModel's (TestReadModelFastMatches, FuzzReadModelFast).
func readModelFast(data []byte, source string) (*model, bool) {
	valid := make(chan bool, 1)
	go func() { valid <- utf8.Valid(data) && json.Valid(data) }()
	m, ok := readFast(data, source)
	return m, <-valid && ok
}

func readFast(data []byte, source string) (*model, bool) {
	top, ok := fields(data, "added_tokens", "normalizer", "pre_tokenizer", "model")
	if !ok {
		return nil, false
	}
	mod, ok := fields(top["model"], "type", "vocab", "merges", "dropout", "continuing_subword_prefix", "end_of_word_suffix", "ignore_merges")
	if !ok {
		return nil, false
	}
	// The small parts go through encoding/json, into readModel's types.
	var f fileJSON
	small := []byte("{")
	for k, v := range mod {
		if k != "vocab" && k != "merges" {
			small = append(append(append(small, strconv.Quote(k)+":"...), v...), ',')
		}
	}
	small = append(bytes.TrimSuffix(small, []byte(",")), '}')
	if json.Unmarshal(small, &f.Model) != nil {
		return nil, false
	}
	if v, ok := top["added_tokens"]; ok && json.Unmarshal(v, &f.AddedTokens) != nil {
		return nil, false
	}
	f.Normalizer, f.PreTokenizer = top["normalizer"], top["pre_tokenizer"]
	// The vocabulary and the merges are read at once.
	var merges [][2]string
	mergesOK := make(chan bool, 1)
	go func() {
		var ok bool
		merges, ok = mergesFast(source, mod["merges"])
		mergesOK <- ok
	}()
	f.Model.Vocab, ok = vocabFast(mod["vocab"])
	if !<-mergesOK || !ok {
		return nil, false
	}
	m := &model{source: source, vocabField: "model.vocab", mergesField: "model.merges", ignoreMerges: f.Model.IgnoreMerges, vocab: f.Model.Vocab}
	var err error
	if checkModel(source, &f.Model) != nil || checkPreTokenizer(source, f.PreTokenizer) != nil || checkIDs(source, f.Model.Vocab) != nil {
		return nil, false
	}
	if m.nfc, err = parseNormalizer(source, "normalizer", f.Normalizer); err != nil {
		return nil, false
	}
	m.merges = merges
	if m.added, err = addedTokens(source, f.AddedTokens); err != nil {
		return nil, false
	}
	return m, true
}

// fields returns the values of an object's keys among names (strings with
// their quotes). It fails on a key given twice, or one equal to a name but
// for case (encoding/json would match it).
func fields(obj []byte, names ...string) (map[string][]byte, bool) {
	out := map[string][]byte{}
	ok := true
	var d jsonlex.Decoder
	d.Reset(obj)
	d.Begin('{')
	for i := 0; d.Next(i, '}'); i++ {
		k := string(d.Key())
		value := d.Raw()
		for _, n := range names {
			if strings.EqualFold(k, n) {
				if _, seen := out[n]; seen || k != n {
					ok = false
				}
				out[n] = value
			}
		}
	}
	d.Finish()
	return out, ok && d.Err() == nil
}

// vocabFast reads model.vocab, an object of token → integer id.
func vocabFast(raw []byte) (map[string]int32, bool) {
	if raw == nil || string(raw) == "null" {
		return nil, true
	}
	v := make(map[string]int32, 1<<17)
	var d jsonlex.Decoder
	d.Reset(raw)
	d.Begin('{')
	for i := 0; d.Next(i, '}'); i++ {
		k := d.Key()
		if d.Kind() != jsonlex.Number {
			return nil, false
		}
		id := d.Int()
		if id < math.MinInt32 || id > math.MaxInt32 {
			return nil, false
		}
		v[string(k)] = int32(id)
	}
	return v, d.Err() == nil
}

// mergesFast reads model.merges: ["a", "b"] pairs or "a b" strings, all of
// one kind.
func mergesFast(source string, raw []byte) ([][2]string, bool) {
	if raw == nil || string(raw) == "null" {
		return nil, true
	}
	var d jsonlex.Decoder
	d.Reset(raw)
	if !d.Begin('[') {
		return nil, false
	}
	d.Kind()
	if d.Offset() < len(raw) && raw[d.Offset()] == '"' {
		strs := make([]string, 0, capHint(raw, `",`))
		for i := 0; d.Next(i, ']'); i++ {
			if d.Kind() != jsonlex.String {
				return nil, false
			}
			strs = append(strs, string(d.Str()))
		}
		if d.Err() != nil {
			return nil, false
		}
		out, err := splitMerges(source, "model.merges", strs)
		return out, err == nil
	}
	pairs := make([][2]string, 0, capHint(raw, "],"))
	for i := 0; d.Next(i, ']'); i++ {
		p, ok := pairFast(&d)
		if !ok {
			return nil, false
		}
		pairs = append(pairs, p)
	}
	return pairs, d.Err() == nil
}

// pairFast reads a merge given as an array of two strings.
func pairFast(d *jsonlex.Decoder) (p [2]string, ok bool) {
	if !d.Begin('[') {
		return p, false
	}
	n := 0
	for ; d.Next(n, ']'); n++ {
		if n >= 2 || d.Kind() != jsonlex.String {
			return p, false
		}
		p[n] = string(d.Str())
	}
	return p, n == 2 && d.Err() == nil
}

// capHint is the capacity for the elements of the JSON array raw, from how
// often sep (what follows all but the last element) occurs in it: a hint,
// since a string may hold sep too. Growing a slice of Qwen's 151k merges
// as they were read copied it a dozen times, into fresh memory each time,
// for about 100 ms of a command's start.
func capHint(raw []byte, sep string) int {
	return bytes.Count(raw, []byte(sep)) + 1
}
