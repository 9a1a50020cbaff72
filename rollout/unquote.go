package rollout

import (
	"encoding/json"
	"unicode/utf8"
)

// unquoteString decodes the JSON string literal v, the whole of v, as
// json.Unmarshal into a string would. Message texts are most of a log's
// bytes, and json.Unmarshal would check the literal's syntax a second time
// (the record it came from was already checked) and go through reflection:
// the common case here is a loop over the bytes. Anything the loop does
// not handle the same way by construction — control characters, \u
// surrogates, invalid UTF-8, a malformed literal — goes to json.Unmarshal,
// which also gives the error.
func unquoteString(v []byte) (string, error) {
	if s, ok := unquoteFast(v); ok {
		return s, nil
	}
	var s string
	err := json.Unmarshal(v, &s)
	return s, err
}

// unquoteFast is unquoteString's fast path: ok false leaves the literal
// to json.Unmarshal.
func unquoteFast(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	v = v[1 : len(v)-1]
	// Valid UTF-8 is copied as is; json.Unmarshal replaces invalid bytes.
	if !utf8.Valid(v) {
		return "", false
	}
	i := plainRun(v)
	if i == len(v) {
		return string(v), true
	}
	out := make([]byte, 0, len(v))
	for {
		out = append(out, v[:i]...)
		v = v[i:]
		if len(v) == 0 {
			return string(out), true
		}
		if v[0] != '\\' || len(v) < 2 { // a quote or a control character
			return "", false
		}
		var n int
		var surrogate bool
		if out, n, surrogate = appendEscape(out, v); n == 0 || surrogate { // surrogate pairs are json's
			return "", false
		}
		v = v[n:]
		i = plainRun(v)
	}
}

// plainRun is the length of v's prefix that a JSON string holds as is:
// no quote, backslash or control character.
func plainRun(v []byte) int {
	for i, c := range v {
		if c < 0x20 || c == '"' || c == '\\' {
			return i
		}
	}
	return len(v)
}

// hex4 reads the four hex digits of a \u escape.
// appendEscape decodes the escape sequence that starts v (v[0] is its
// backslash) onto out and returns its length, or 0 when JSON allows no such
// escape. A \u escape of a surrogate half is not decoded (JSON pairs them;
// the callers leave that to encoding/json): surrogate is true and out is
// unchanged.
func appendEscape(out, v []byte) (_ []byte, n int, surrogate bool) {
	if len(v) < 2 {
		return out, 0, false
	}
	switch v[1] {
	case '"', '\\', '/':
		return append(out, v[1]), 2, false
	case 'b':
		return append(out, '\b'), 2, false
	case 'f':
		return append(out, '\f'), 2, false
	case 'n':
		return append(out, '\n'), 2, false
	case 'r':
		return append(out, '\r'), 2, false
	case 't':
		return append(out, '\t'), 2, false
	case 'u':
		r, ok := hex4(v[2:])
		switch {
		case !ok:
			return out, 0, false
		case utf8.RuneLen(r) < 0:
			return out, 6, true
		}
		return utf8.AppendRune(out, r), 6, false
	}
	return out, 0, false
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
