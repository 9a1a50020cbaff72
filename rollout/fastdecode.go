package rollout

import (
	"encoding/binary"
	"encoding/json"
	"unicode/utf8"
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
// about, in a single pass that checks the syntax as it goes: json.Unmarshal
// checks a whole record's syntax first and then decodes it again through
// reflection, most of a build's decoding time. It returns false, leaving w
// to be reset, on anything it does not reproduce exactly by construction:
// invalid JSON (the error is json's to word), a value of an unexpected
// type, a field name that is escaped, not in lower case or given twice
// (encoding/json matches names case-insensitively and merges repeated
// objects and arrays into what is there), a metadata key that is escaped
// or not valid UTF-8 (json replaces invalid bytes), an array element that
// is not an object, nesting deeper than maxFastDepth, and data after the
// record's object. On true, w is what json.Unmarshal gives, except that
// its raw values share data's bytes rather than copying them, and a
// message content that is a string literal is decoded as well (text,
// hasText) unless it has \u surrogates or invalid UTF-8. valid then
// reports whether all of data is valid UTF-8: a record the fast path
// accepts has non-ASCII bytes only inside its strings, and each string
// with some is checked as it is read.
func decodeWireFast(data []byte, w *wireRollout) (ok, valid bool) {
	s := fastScanner{b: data}
	s.space()
	var seen uint8
	ok = s.object(func(key []byte) bool {
		var bit uint8
		var ok bool
		switch string(key) {
		case "custom_id":
			bit = 1
			w.CustomID, ok = s.stringPtr()
		case "messages":
			bit = 2
			w.Messages, ok = s.messages()
		case "metadata":
			bit = 4
			w.Metadata, ok = s.metadata()
		case "per_turn_api_tokens":
			bit = 8
			w.API, ok = s.apiTokens()
		case "api_inputs":
			bit = 16
			w.APIInputs, ok = s.stringPtr()
		case "budget":
			bit = 32
			w.Budget, ok = s.raw()
		default:
			return s.unknown(key, wireKeys)
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return ok
	})
	if !ok {
		return false, false
	}
	s.space()
	return s.i == len(s.b), !s.invalid
}

var (
	wireKeys        = []string{"custom_id", "messages", "metadata", "per_turn_api_tokens", "api_inputs", "budget"}
	wireMessageKeys = []string{"role", "content", "tokens", "tool_calls"}
	wireAPIKeys     = []string{"input", "output", "reasoning", "cached", "retried"}
	wireRetriedKeys = []string{"calls", "output"}
)

// maxFastDepth bounds the nesting decodeWireFast follows (encoding/json's
// own limit is 10000); deeper records go to json.Unmarshal.
const maxFastDepth = 200

// fastScanner reads JSON values from b at i. Every method that returns
// ok false has found something decodeWireFast declines; its position is
// then meaningless.
type fastScanner struct {
	b     []byte
	i     int
	depth int
	// invalid: a string read so far holds invalid UTF-8.
	invalid bool
	// buf collects a content string's decoded bytes.
	buf []byte
}

// space skips JSON whitespace.
func (s *fastScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// object reads an object at i whose names have no escapes, calling field
// with each name when i is at its value (after the colon and whitespace);
// field reads the value.
func (s *fastScanner) object(field func(key []byte) bool) bool {
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	s.i++
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	for {
		start := s.i
		esc, ok := s.str()
		if !ok || esc {
			return false
		}
		key := s.b[start+1 : s.i-1]
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.space()
		if !field(key) {
			return false
		}
		s.space()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.space()
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// array reads an array at i, calling elem when i is at each element.
// null reads as a nil slice in encoding/json; the caller handles it.
func (s *fastScanner) array(elem func() bool) bool {
	if s.i >= len(s.b) || s.b[s.i] != '[' {
		return false
	}
	s.i++
	s.space()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		s.space()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.space()
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// null reads a null at i if there is one.
func (s *fastScanner) null() bool {
	if len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// unknown skips the value of a field the struct does not have, declining
// a name that encoding/json would match to one of fields regardless of
// case (its folding also maps some non-ASCII letters to ASCII ones).
func (s *fastScanner) unknown(key []byte, fields []string) bool {
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
	return s.skip()
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
func (s *fastScanner) raw() (json.RawMessage, bool) {
	start := s.i
	if !s.skip() {
		return nil, false
	}
	return s.b[start:s.i:s.i], true
}

// stringPtr reads a *string field: null is nil.
func (s *fastScanner) stringPtr() (*string, bool) {
	if s.null() {
		return nil, true
	}
	start := s.i
	if _, ok := s.str(); !ok {
		return nil, false
	}
	lit := s.b[start:s.i]
	var v string
	switch string(lit) { // the roles, without copying them each time
	case `"user"`:
		v = "user"
	case `"assistant"`:
		v = "assistant"
	case `"tool"`:
		v = "tool"
	case `"system"`:
		v = "system"
	default:
		var ok bool
		if v, ok = unquoteFast(lit); !ok {
			return nil, false
		}
	}
	return &v, true
}

func (s *fastScanner) messages() ([]wireMessage, bool) {
	if s.null() {
		return nil, true
	}
	ms := []wireMessage{}
	ok := s.array(func() bool {
		ms = append(ms, wireMessage{})
		m := &ms[len(ms)-1]
		var seen uint8
		return s.object(func(key []byte) bool {
			var bit uint8
			var ok bool
			switch string(key) {
			case "role":
				bit = 1
				m.Role, ok = s.stringPtr()
			case "content":
				bit = 2
				if s.i < len(s.b) && s.b[s.i] == '"' {
					start := s.i
					m.text, m.hasText, ok = s.strText()
					m.Content = s.b[start:s.i:s.i]
				} else {
					m.Content, ok = s.raw()
				}
			case "tokens":
				bit = 4
				m.Tokens, ok = s.raw()
			case "tool_calls":
				bit = 8
				m.ToolCalls, ok = s.raw()
			default:
				return s.unknown(key, wireMessageKeys)
			}
			if seen&bit != 0 {
				return false
			}
			seen |= bit
			return ok
		})
	})
	return ms, ok
}

func (s *fastScanner) apiTokens() ([]wireAPI, bool) {
	if s.null() {
		return nil, true
	}
	as := []wireAPI{}
	ok := s.array(func() bool {
		as = append(as, wireAPI{})
		a := &as[len(as)-1]
		var seen uint8
		return s.object(func(key []byte) bool {
			var bit uint8
			var ok bool
			switch string(key) {
			case "input":
				bit = 1
				a.Input, ok = s.raw()
			case "output":
				bit = 2
				a.Output, ok = s.raw()
			case "reasoning":
				bit = 4
				a.Reasoning, ok = s.raw()
			case "cached":
				bit = 8
				a.Cached, ok = s.raw()
			case "retried":
				bit = 16
				ok = s.retried(a)
			default:
				return s.unknown(key, wireAPIKeys)
			}
			if seen&bit != 0 {
				return false
			}
			seen |= bit
			return ok
		})
	})
	return as, ok
}

func (s *fastScanner) retried(a *wireAPI) bool {
	if s.null() {
		a.Retried = nil
		return true
	}
	a.Retried = new(struct {
		Calls  json.RawMessage `json:"calls"`
		Output json.RawMessage `json:"output"`
	})
	r := a.Retried
	var seen uint8
	return s.object(func(key []byte) bool {
		var bit uint8
		var ok bool
		switch string(key) {
		case "calls":
			bit = 1
			r.Calls, ok = s.raw()
		case "output":
			bit = 2
			r.Output, ok = s.raw()
		default:
			return s.unknown(key, wireRetriedKeys)
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return ok
	})
}

// metadata reads the metadata object: a map of raw values, the last of a
// repeated key winning as in encoding/json.
func (s *fastScanner) metadata() (map[string]json.RawMessage, bool) {
	if s.null() {
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

// skip reads one value of any kind, checking its syntax.
func (s *fastScanner) skip() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, ok := s.str()
		return ok
	case c == '{':
		if s.depth++; s.depth > maxFastDepth {
			return false
		}
		ok := s.object(func([]byte) bool { return s.skip() })
		s.depth--
		return ok
	case c == '[':
		if s.depth++; s.depth > maxFastDepth {
			return false
		}
		ok := s.array(s.skip)
		s.depth--
		return ok
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	}
	return false
}

func (s *fastScanner) literal(lit string) bool {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// number reads a number by JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *fastScanner) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return false
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return false
		}
		i = j
	}
	s.i = i
	return true
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special8 is 0 when none of the eight bytes in x is a quote, a backslash
// or a control character (a byte less than 0x20), else not 0.
func special8(x uint64) uint64 {
	q := x ^ ('"' * ones)
	bs := x ^ ('\\' * ones)
	return ((q-ones)&^q | (bs-ones)&^bs | (x-0x20*ones)&^x) & highs
}

// str reads a string literal at i, checking what encoding/json's scanner
// checks: no control characters and only JSON's escapes. Other bytes are
// not checked (the scanner accepts invalid UTF-8 inside strings). esc
// reports whether there were escapes.
func (s *fastScanner) str() (esc, ok bool) {
	b := s.b
	i := s.i
	if i >= len(b) || b[i] != '"' {
		return false, false
	}
	i++
	start := i
	var hi uint64 // the bytes passed, or-ed: non-ASCII if its high bit is set
	for {
		// Eight bytes at a time while none is a quote, a backslash or a
		// control character.
		for len(b)-i >= 8 {
			x := binary.LittleEndian.Uint64(b[i:])
			if special8(x) != 0 {
				break
			}
			hi |= x
			i += 8
		}
		if i >= len(b) {
			return false, false
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			if hi&highs != 0 && !utf8.Valid(b[start:i]) {
				s.invalid = true
			}
			return esc, true
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(b[i+2:]); !ok {
					return false, false
				}
				i += 6
			default:
				return false, false
			}
		case c < 0x20:
			return false, false
		default:
			hi |= uint64(c)
			i++
		}
	}
}

// strText reads a string literal at i as str does, decoding it on the way
// as json.Unmarshal into a string would: plain runs are copied, escapes
// replaced. decoded is false, the literal read but left to unquoteString,
// for what json.Unmarshal treats in ways of its own: a \u surrogate
// (paired or not) and invalid UTF-8 (replaced by U+FFFD).
func (s *fastScanner) strText() (text string, decoded, ok bool) {
	b := s.b
	i := s.i
	if i >= len(b) || b[i] != '"' {
		return "", false, false
	}
	i++
	start := i
	run := i // the start of the plain run not yet in out
	out := s.buf[:0]
	esc := false
	decoded = true
	var hi uint64
	for {
		for len(b)-i >= 8 {
			x := binary.LittleEndian.Uint64(b[i:])
			if special8(x) != 0 {
				break
			}
			hi |= x
			i += 8
		}
		if i >= len(b) {
			return "", false, false
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			if hi&highs != 0 && !utf8.Valid(b[start:i]) {
				s.invalid = true
				return "", false, true
			}
			if !esc {
				return string(b[start:i]), true, true
			}
			if !decoded {
				return "", false, true
			}
			out = append(out, b[run:i]...)
			s.buf = out
			return string(out), true, true
		case c == '\\':
			if i+1 >= len(b) {
				return "", false, false
			}
			if decoded {
				out = append(out, b[run:i]...)
			}
			esc = true
			var n int
			var surrogate bool
			if out, n, surrogate = appendEscape(out, b[i:]); n == 0 {
				return "", false, false
			}
			if surrogate {
				decoded = false // pairs are json's
			}
			i += n
			run = i
		case c < 0x20:
			return "", false, false
		default:
			hi |= uint64(c)
			i++
		}
	}
}
