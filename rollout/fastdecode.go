package rollout

import (
	"encoding/json"
	"sync"
	"unicode/utf8"

	"bagen-data/internal/jsonlex"
)

// decodeWire fills w from a canonical rollout record as
// json.Unmarshal(data, w) would, returning Unmarshal's error. Records are
// read in one pass by decodeWireFast; whatever it declines goes to
// json.Unmarshal, which then decides and words every error.
func decodeWire(data []byte, w *wireRollout) error {
	if ok, _ := decodeWireFast(data, w); ok {
		return nil
	}
	*w = wireRollout{}
	return json.Unmarshal(data, w)
}

// decodeWireFast is json.Unmarshal(data, w) for the records it is sure
// about, in a single pass of internal/jsonlex that checks the syntax as it
// goes: json.Unmarshal checks a whole record's syntax first and then
// decodes it again through reflection, most of a build's decoding time. It
// returns false, leaving w to be reset, on anything it does not reproduce
// exactly by construction: invalid JSON (the error is json's to word), a
// value of an unexpected type, a field name that is escaped, not in lower
// case or given twice (encoding/json matches names case-insensitively and
// merges repeated objects and arrays into what is there), a string field
// or a metadata key that is not valid UTF-8 (json replaces invalid bytes),
// an array element that is not an object, nesting deeper than the lexer
// follows, and data after the record's object. On true, w is what
// json.Unmarshal gives, except that its raw values share data's bytes
// rather than copying them, and a message content that is a string
// literal is decoded as well (text, hasText) unless it holds invalid
// UTF-8. valid then reports whether all of data is valid UTF-8: a record
// the fast path accepts has non-ASCII bytes only inside its strings, and
// the lexer checks each string with some as it reads it.
func decodeWireFast(data []byte, w *wireRollout) (ok, valid bool) {
	s := wireScanners.Get().(*wireScanner)
	defer s.release()
	s.reset(data)
	if !s.record(w) {
		return false, false
	}
	s.d.Finish()
	return s.d.Err() == nil, s.d.InvalidUTF8() == 0
}

// record reads the record's object into w.
func (s *wireScanner) record(w *wireRollout) bool {
	return s.fields(wireKeys, func(name string) (ok bool) {
		switch name {
		case "custom_id":
			w.CustomID, ok = s.stringPtr()
		case "messages":
			w.Messages, ok = objects(s, s.message)
		case "metadata":
			w.Metadata, ok = s.metadata()
		case "per_turn_api_tokens":
			w.API, ok = objects(s, s.api)
		case "api_inputs":
			w.APIInputs, ok = s.stringPtr()
		case "budget":
			w.Budget, ok = s.raw()
		}
		return ok
	})
}

var (
	wireKeys        = []string{"custom_id", "messages", "metadata", "per_turn_api_tokens", "api_inputs", "budget"}
	wireMessageKeys = []string{"role", "content", "tokens", "tool_calls"}
	wireAPIKeys     = []string{"input", "output", "reasoning", "cached", "retried"}
	wireRetriedKeys = []string{"calls", "output"}
)

// wireScanner reads a record's values with a jsonlex.Decoder that checks
// strings' UTF-8. Every method that returns ok false has found something
// decodeWireFast declines; the scanner is then to be released.
type wireScanner struct {
	d    jsonlex.Decoder
	data []byte
}

// wireScanners keep decoders, and the arenas they unescape into, from one
// record to the next.
var wireScanners = sync.Pool{New: func() any { return &wireScanner{d: jsonlex.Decoder{CheckUTF8: true}} }}

func (s *wireScanner) reset(data []byte) {
	s.data = data
	s.d.Reset(data)
}

// release returns s to wireScanners, without a large record's arena.
func (s *wireScanner) release() {
	s.data = nil
	s.d.Reset(nil)
	s.d.Trim(4 << 20)
	wireScanners.Put(s)
}

// object reads an object whose names have no escapes, calling field with
// each name when the decoder is at its value; field reads the value.
func (s *wireScanner) object(field func(key []byte) bool) bool {
	if !s.d.Begin('{') {
		return false
	}
	for i := 0; s.d.Next(i, '}'); i++ {
		key, esc := s.d.RawKey()
		if esc || s.d.Err() != nil || !field(key) {
			return false
		}
	}
	return s.d.Err() == nil
}

// array reads an array, calling elem when the decoder is at each element.
// null reads as a nil slice in encoding/json; the caller handles it.
func (s *wireScanner) array(elem func() bool) bool {
	if !s.d.Begin('[') {
		return false
	}
	for i := 0; s.d.Next(i, ']'); i++ {
		if !elem() {
			return false
		}
	}
	return s.d.Err() == nil
}

// fields reads an object of a struct whose JSON names are names (at most
// 64), calling read with the name when the decoder is at its value. It
// declines a name given twice, and skips the value of a name not in names
// unless encoding/json would match it to one of them.
func (s *wireScanner) fields(names []string, read func(name string) bool) bool {
	var seen uint64
	return s.object(func(key []byte) bool {
		for i, n := range names {
			if string(key) == n {
				if seen&(1<<i) != 0 {
					return false
				}
				seen |= 1 << i
				return read(n)
			}
		}
		return s.unknown(key, names)
	})
}

// objects reads null (a nil slice, as encoding/json gives) or an array of
// objects, each read by elem into a new element.
func objects[T any](s *wireScanner, elem func(*T) bool) ([]T, bool) {
	if s.d.Null() {
		return nil, true
	}
	out := []T{}
	ok := s.array(func() bool {
		out = append(out, *new(T))
		return elem(&out[len(out)-1])
	})
	return out, ok
}

// unknown skips the value of a field the struct does not have, declining
// a name that encoding/json would match to one of fields regardless of
// case (its folding also maps some non-ASCII letters to ASCII ones).
func (s *wireScanner) unknown(key []byte, fields []string) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	for _, f := range fields {
		if equalFoldASCII(key, f) {
			return false
		}
	}
	s.d.Skip()
	return s.d.Err() == nil
}

func equalFoldASCII(a []byte, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// raw reads any value as json.RawMessage holds it: its bytes, null
// included, without the whitespace around it.
func (s *wireScanner) raw() (json.RawMessage, bool) {
	v := s.d.Raw()
	return v, s.d.Err() == nil
}

// str reads a string as json.Unmarshal into a string gives it, or
// declines one with invalid UTF-8, which json replaces.
func (s *wireScanner) str() (string, bool) {
	bad := s.d.InvalidUTF8()
	raw, esc := s.d.RawStr()
	if s.d.Err() != nil || s.d.InvalidUTF8() != bad {
		return "", false
	}
	if esc {
		return string(s.d.Unescape(raw)), true
	}
	switch string(raw) { // the roles, without copying them each time
	case "user":
		return "user", true
	case "assistant":
		return "assistant", true
	case "tool":
		return "tool", true
	case "system":
		return "system", true
	}
	return string(raw), true
}

// stringPtr reads a *string field: null is nil.
func (s *wireScanner) stringPtr() (*string, bool) {
	if s.d.Null() {
		return nil, true
	}
	v, ok := s.str()
	if !ok {
		return nil, false
	}
	return &v, true
}

// content reads a message's content: any value as written, and a string
// decoded too unless it holds invalid UTF-8 (hasText false; text then
// reads it the way json.Unmarshal does).
func (s *wireScanner) content(m *wireMessage) bool {
	if s.d.Kind() != jsonlex.String {
		var ok bool
		m.Content, ok = s.raw()
		return ok
	}
	start := s.d.Offset()
	bad := s.d.InvalidUTF8()
	raw, _ := s.d.RawStr()
	if s.d.Err() != nil {
		return false
	}
	end := s.d.Offset()
	m.Content = s.data[start:end:end]
	if s.d.InvalidUTF8() == bad {
		m.text, m.hasText = string(s.d.Unescape(raw)), true
	}
	return true
}

// message reads one of the messages.
func (s *wireScanner) message(m *wireMessage) bool {
	return s.fields(wireMessageKeys, func(name string) (ok bool) {
		switch name {
		case "role":
			m.Role, ok = s.stringPtr()
		case "content":
			ok = s.content(m)
		case "tokens":
			m.Tokens, ok = s.raw()
		case "tool_calls":
			m.ToolCalls, ok = s.raw()
		}
		return ok
	})
}

// api reads one turn's token counts.
func (s *wireScanner) api(a *wireAPI) bool {
	return s.fields(wireAPIKeys, func(name string) (ok bool) {
		switch name {
		case "input":
			a.Input, ok = s.raw()
		case "output":
			a.Output, ok = s.raw()
		case "reasoning":
			a.Reasoning, ok = s.raw()
		case "cached":
			a.Cached, ok = s.raw()
		case "retried":
			ok = s.retried(a)
		}
		return ok
	})
}

func (s *wireScanner) retried(a *wireAPI) bool {
	if s.d.Null() {
		a.Retried = nil
		return true
	}
	a.Retried = new(struct {
		Calls  json.RawMessage `json:"calls"`
		Output json.RawMessage `json:"output"`
	})
	r := a.Retried
	return s.fields(wireRetriedKeys, func(name string) (ok bool) {
		switch name {
		case "calls":
			r.Calls, ok = s.raw()
		case "output":
			r.Output, ok = s.raw()
		}
		return ok
	})
}

// metadata reads the metadata object: a map of raw values, the last of a
// repeated key winning as in encoding/json.
func (s *wireScanner) metadata() (map[string]json.RawMessage, bool) {
	if s.d.Null() {
		return nil, true
	}
	md := map[string]json.RawMessage{}
	ok := s.object(func(key []byte) bool {
		if !utf8.Valid(key) {
			return false
		}
		v, ok := s.raw()
		md[string(key)] = v
		return ok
	})
	return md, ok
}
