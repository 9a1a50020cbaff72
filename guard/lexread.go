package guard

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"bagen-data/internal/jsonlex"
)

// lexReader reads a request body with the house's JSON lexer for a codec
// that has a fast reader (readAnthropic); ok turns false at the first
// thing the codec's encoding/json reader might read otherwise, and the
// codec then reads the body with encoding/json. prev, when set, is the
// memo of an earlier body to read the history against; memo, when set,
// records this body's (memo.go).
type lexReader struct {
	d    jsonlex.Decoder
	ok   bool
	body []byte
	prev *readMemo
	memo *readMemo
	// shared is how many bytes body begins with as prev's does.
	shared int
	// tailKnown: the body after the history array is prev's (history).
	tailKnown bool
}

// lexRead reads body with read, against prev when not nil, and returns
// the memo it leaves; false for a body that is not valid UTF-8
// (encoding/json reads its invalid bytes as U+FFFD) or that read leaves
// to encoding/json.
func lexRead(body []byte, prev *readMemo, read func(*lexReader) (*Request, bool)) (*Request, *readMemo, bool) {
	lx := &lexReader{ok: true, body: body, prev: prev, memo: &readMemo{body: body}}
	checked := 0
	if prev != nil {
		lx.shared = prefixLen(prev.body, body)
		checked = validPrefix(prev.body, lx.shared)
	}
	if !utf8.Valid(body[checked:]) {
		return nil, nil, false
	}
	lx.d.Reset(body)
	r, ok := read(lx)
	if !ok {
		return nil, nil, false
	}
	if lx.tailKnown {
		r = prev.withHistory(lx.memo)
	}
	lx.memo.read = r
	return r, lx.memo, true
}

// readEither reads body with the lexer reader fast, against prev, and
// where fast leaves it with slow (encoding/json), which leaves no memo.
func readEither(body []byte, prev *readMemo, fast func(*lexReader) (*Request, bool), slow func([]byte) (*Request, error)) (*Request, *readMemo, error) {
	if r, m, ok := lexRead(body, prev, fast); ok {
		return r, m, nil
	}
	r, err := slow(body)
	return r, nil, err
}

// validPrefix is how many of the first n bytes of b, valid UTF-8 read
// before, hold whole runes: those need no second check in a body that
// begins with the same n bytes.
func validPrefix(b []byte, n int) int {
	c := max(n-utf8.UTFMax, 0)
	for c > 0 && !utf8.RuneStart(b[c]) {
		c--
	}
	return c
}

// end reports whether the whole body was read: ok, the top-level object's
// reading, and nothing but whitespace after it.
func (lx *lexReader) end(ok bool) bool {
	lx.d.Finish()
	return ok && lx.ok && lx.d.Err() == nil
}

// requestField reads a top-level field every codec's request has the
// same way: model, stream, metadata (the session), tools (whether any).
func (lx *lexReader) requestField(r *Request, key string) bool {
	switch key {
	case "model":
		r.Model = lx.str()
	case "stream":
		r.Stream = lx.boolean()
	case "metadata":
		r.SessionID = lx.metadata()
	case "tools":
		r.Tools = lx.count() > 0
	default:
		return false
	}
	return true
}

// object reads an object, calling field for each key that is exactly one
// of names, at most once each, and skipping other keys; a key that is not
// one of names but matches one case-insensitively (encoding/json would
// read it into the field), a key with an escape, or one of names twice
// clears ok. field returns false for a value it cannot read.
func (lx *lexReader) object(field func(key string) bool, names ...string) bool {
	if !lx.ok || lx.d.Kind() != jsonlex.Object || !lx.d.Begin('{') {
		return lx.fail()
	}
	var seen uint64
	for i := 0; lx.d.Next(i, '}'); i++ {
		raw, escaped := lx.d.RawKey()
		if escaped {
			return lx.fail()
		}
		k := -1
		for j, n := range names {
			if string(raw) == n {
				k = j
			} else if strings.EqualFold(string(raw), n) {
				return lx.fail()
			}
		}
		if k < 0 {
			lx.d.Skip()
			continue
		}
		if seen&(1<<k) != 0 || !field(names[k]) || !lx.ok {
			return lx.fail()
		}
		seen |= 1 << k
	}
	return lx.ok && lx.d.Err() == nil
}

// array reads an array, calling elem for each element, and returns their
// number; a value that is not an array clears ok.
func (lx *lexReader) array(elem func() bool) int {
	if !lx.ok || lx.d.Kind() != jsonlex.Array || !lx.d.Begin('[') {
		lx.fail()
		return 0
	}
	n := 0
	for ; lx.d.Next(n, ']'); n++ {
		if !elem() {
			lx.fail()
			return n
		}
	}
	return n
}

// count reads an array of any values and returns their number.
func (lx *lexReader) count() int {
	return lx.array(func() bool { lx.d.Skip(); return lx.d.Err() == nil })
}

// str reads a string; another kind of value clears ok.
func (lx *lexReader) str() string {
	if lx.d.Kind() != jsonlex.String {
		lx.fail()
		return ""
	}
	return string(lx.d.Str())
}

// boolean reads true or false; another kind of value clears ok.
func (lx *lexReader) boolean() bool {
	if lx.d.Kind() != jsonlex.Bool {
		lx.fail()
		return false
	}
	return lx.d.Bool()
}

// metadata reads the metadata object's session (metadataSession).
func (lx *lexReader) metadata() string {
	md := map[string][]byte{}
	if lx.d.Kind() != jsonlex.Object || !lx.d.Begin('{') {
		lx.fail()
		return ""
	}
	for i := 0; lx.d.Next(i, '}'); i++ {
		raw, escaped := lx.d.RawKey()
		if escaped {
			lx.fail()
			return ""
		}
		md[string(raw)] = lx.d.Raw()
	}
	return metadataSession(map[string]json.RawMessage{"session_id": md["session_id"], "user_id": md["user_id"]})
}

// smallInt reads an integer of at most 18 digits, whose value no reader
// here keeps; anything else clears ok.
func (lx *lexReader) smallInt() bool {
	raw := lx.d.Raw()
	digits := strings.TrimPrefix(string(raw), "-")
	if len(digits) == 0 || len(digits) > 18 || strings.Trim(digits, "0123456789") != "" {
		return lx.fail()
	}
	return true
}

func (lx *lexReader) fail() bool {
	lx.ok = false
	return false
}

// lexParts is partsText read with the lexer: a string, or a list of
// parts whose texts (or nested contents) it joins; "" for none or null.
// It reports false where partsText's reading might differ.
func lexParts(raw []byte) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	lx := &lexReader{ok: true}
	lx.d.Reset(raw)
	if lx.d.Kind() == jsonlex.String {
		return lx.str(), lx.ok
	}
	var out []string
	lx.array(func() bool {
		var text string
		var content []byte
		ok := lx.object(func(key string) bool {
			switch key {
			case "type":
				lx.str()
			case "text":
				text = lx.str()
			case "content":
				content = lx.d.Raw()
			}
			return true
		}, "type", "text", "content")
		switch {
		case !ok:
		case text != "":
			out = append(out, text)
		case len(content) > 0:
			nested, nok := lexParts(content)
			out = append(out, nested)
			ok = nok
		}
		return ok
	})
	return strings.Join(out, "\n"), lx.ok && lx.d.Err() == nil
}
