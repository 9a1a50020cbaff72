package rollout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// text reads a message content: a string, or a list of content blocks
// ({"type": "text", "text": …}, input_text, output_text) whose texts are
// joined with blank lines; other blocks (images) are left out. Null or
// absent is "" with ok false. The text must fit the message limit.
func text(rec Record, field string, raw json.RawMessage) (s string, ok bool, err error) {
	v, ok := present(raw)
	if !ok {
		return "", false, nil
	}
	switch v[0] {
	case '"':
		if s, err = unquoteString(v); err != nil {
			return "", false, rec.Errorf(field, "%w", JSONCause(err))
		}
	case '[':
		if s, err = blocks(rec, field, v); err != nil {
			return "", false, err
		}
	default:
		return "", false, rec.Errorf(field, "want a string or a list of text blocks, got %s", clipJSON(v))
	}
	return s, true, checkSize(rec, field, s)
}

type block struct {
	Type string          `json:"type"`
	Text json.RawMessage `json:"text"`
}

func blocks(rec Record, field string, v json.RawMessage) (string, error) {
	var bs []json.RawMessage
	if err := json.Unmarshal(v, &bs); err != nil {
		return "", rec.Errorf(field, "%w", JSONCause(err))
	}
	var parts []string
	for i, raw := range bs {
		f := fmt.Sprintf("%s[%d]", field, i)
		var b block
		if err := json.Unmarshal(raw, &b); err != nil {
			return "", rec.Errorf(f, "want a content block object, got %s", clipJSON(raw))
		}
		switch b.Type {
		case "text", "input_text", "output_text", "":
			var t string
			if err := json.Unmarshal(b.Text, &t); err != nil {
				return "", rec.Errorf(f+".text", "want a string, got %s", clipJSON(b.Text))
			}
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n\n"), nil
}

// checkSize rejects a text over the message limit.
func checkSize(rec Record, field, s string) error {
	if limit := rec.Options.maxMessage(); int64(len(s)) > limit {
		return rec.Errorf(field, "%w: %d bytes, more than the message limit %d", ErrTooLarge, len(s), limit)
	}
	return nil
}

// checkUTF8 finds invalid UTF-8 in a record (encoding/json would replace it
// silently). It returns the number of invalid sequences when replacement is
// allowed, else an error naming the field that holds the first one.
func checkUTF8(rec Record) (int, error) {
	if utf8.Valid(rec.Data) {
		return 0, nil
	}
	if rec.Options != nil && rec.Options.ReplaceInvalidUTF8 {
		return countInvalid(rec.Data), nil
	}
	off := firstInvalid(rec.Data)
	if rec.Pos.Line == 0 && rec.Pos.Index < 0 {
		rec.Pos.Line = 1 + bytes.Count(rec.Data[:off], []byte("\n"))
	}
	return 0, rec.Errorf(pathAt(rec.Data, off), "%w at byte %d of the record (pass --replace-invalid-utf8 to replace it with U+FFFD)", ErrInvalidUTF8, off)
}

func firstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

func countInvalid(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			n++
		}
		i += size
	}
	return n
}

// pathAt is the JSON path (messages[3].content) of the value that holds
// byte off of data, found by walking its tokens.
func pathAt(data []byte, off int) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	var p jsonPath
	for {
		tok, err := dec.Token()
		if err != nil {
			return p.String()
		}
		key := p.key(tok)
		if dec.InputOffset() > int64(off) {
			return p.String()
		}
		if !key {
			p = p.step(tok)
		}
	}
}

// jsonPath is the objects and arrays open around a token of a JSON
// value, outermost first.
type jsonPath []pathFrame

// pathFrame is one open object or array.
type pathFrame struct {
	array bool
	key   string // an object's current key
	index int    // an array's values so far
	inKey bool   // an object whose next string token is a key
}

func (p jsonPath) String() string {
	var b strings.Builder
	for _, f := range p {
		if f.array {
			b.WriteString("[" + strconv.Itoa(f.index-1) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(f.key)
	}
	return b.String()
}

// key takes tok as the innermost object's next key, if it is one, and
// otherwise counts it as a value of the innermost array.
func (p jsonPath) key(tok json.Token) bool {
	if len(p) == 0 {
		return false
	}
	top := &p[len(p)-1]
	if k, ok := tok.(string); ok && !top.array && top.inKey {
		top.key, top.inKey = k, false
		return true
	}
	if top.array && tok != json.Delim(']') {
		top.index++
	}
	return false
}

// step opens or closes an object or array at tok, a value or delimiter,
// and waits for the next key after a value in an object.
func (p jsonPath) step(tok json.Token) jsonPath {
	switch tok {
	case json.Delim('{'):
		p = append(p, pathFrame{inKey: true})
	case json.Delim('['):
		p = append(p, pathFrame{array: true})
	case json.Delim('}'), json.Delim(']'):
		p = p[:len(p)-1]
	}
	if len(p) > 0 && !p[len(p)-1].array {
		if _, isDelim := tok.(json.Delim); !isDelim || tok == json.Delim('}') || tok == json.Delim(']') {
			p[len(p)-1].inKey = true
		}
	}
	return p
}
