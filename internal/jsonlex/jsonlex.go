// Package jsonlex is the house's one JSON lexer: it reads JSON straight
// from a byte slice for the readers that cannot afford encoding/json's
// reflection — the reward's labels and its server's requests, the rollout
// log's records, the session logs' top-level keys and tokenizer.json's
// vocabulary and merges. It owns JSON's lexical rules (whitespace, string
// escapes and their decoding, the number grammar, literals, nesting): a
// fix to any of them is made here and reaches every reader. No reflection,
// no allocation for strings without escapes, and errors that say what was
// wanted and what was found at which byte offset.
//
// A Decoder is a pull parser with a sticky error: once a call fails, every
// later call returns a zero value and Err reports the first failure, so a
// caller reads a whole shape and checks Err once per value it cares about.
package jsonlex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// ErrSyntax is wrapped by every error a Decoder reports.
var ErrSyntax = errors.New("invalid JSON")

// Error is a decoding failure at a byte offset of the input.
type Error struct {
	Offset int
	Msg    string
}

func (e *Error) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Msg) }

// Unwrap returns ErrSyntax.
func (e *Error) Unwrap() error { return ErrSyntax }

// Kind is the JSON type of the next value.
type Kind uint8

// Kinds of JSON values; End means the input is exhausted.
const (
	End Kind = iota
	Invalid
	Null
	Bool
	Number
	String
	Array
	Object
)

var kindNames = [...]string{"end of input", "invalid character", "null", "boolean", "number", "string", "array", "object"}

// String names k the way error messages do.
func (k Kind) String() string { return kindNames[k] }

// maxDepth bounds nesting in skipped values so hostile input cannot grow
// the stack without limit.
const maxDepth = 512

// Decoder reads JSON values from a byte slice. The zero value is ready
// after Reset. Strings returned by Str alias the input or the Decoder's
// arena and stay valid until the next Reset. A Decoder is not safe for
// concurrent use.
type Decoder struct {
	// CheckUTF8 makes the Decoder check that every string it reads or
	// skips, keys included, is valid UTF-8, counting those that are not
	// (InvalidUTF8). JSON's grammar, and so the Decoder otherwise, takes
	// any byte above 0x1f in a string; encoding/json replaces invalid
	// bytes with U+FFFD when it decodes them. Reset keeps the setting.
	CheckUTF8 bool

	buf     []byte
	pos     int
	err     error
	arena   []byte
	invalid int // strings holding invalid UTF-8, with CheckUTF8
}

// Reset starts decoding b, keeping the arena's capacity.
func (d *Decoder) Reset(b []byte) {
	d.buf, d.pos, d.err, d.arena, d.invalid = b, 0, nil, d.arena[:0], 0
}

// InvalidUTF8 is the number of strings read or skipped since Reset that
// hold invalid UTF-8; it counts only with CheckUTF8.
func (d *Decoder) InvalidUTF8() int { return d.invalid }

// ResetString starts decoding s without copying it; s is only read.
func (d *Decoder) ResetString(s string) {
	d.Reset(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// Trim drops the arena if its capacity exceeds n bytes, so a pooled
// Decoder does not keep one huge request's memory.
func (d *Decoder) Trim(n int) {
	if cap(d.arena) > n {
		d.arena = nil
	}
}

// Err returns the first error, or nil.
func (d *Decoder) Err() error { return d.err }

// Offset is the current byte offset.
func (d *Decoder) Offset() int { return d.pos }

// Seek moves to off, an Offset that a Decoder reading input whose first
// off bytes are these reported: what it read before off was read the
// same way, so reading goes on from there as it went on then. An off
// outside the input fails.
func (d *Decoder) Seek(off int) {
	if off < 0 || off > len(d.buf) {
		d.fail(fmt.Sprintf("seek to %d outside the input's %d bytes", off, len(d.buf)))
		return
	}
	d.pos = off
}

func (d *Decoder) fail(msg string) {
	if d.err == nil {
		d.err = &Error{Offset: d.pos, Msg: msg}
	}
}

func (d *Decoder) want(what string) {
	d.fail("want " + what + ", got " + d.Kind().String())
}

func (d *Decoder) ws() {
	for d.pos < len(d.buf) {
		switch d.buf[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// Kind skips whitespace and reports the type of the next value.
func (d *Decoder) Kind() Kind {
	d.ws()
	if d.pos >= len(d.buf) {
		return End
	}
	switch c := d.buf[d.pos]; {
	case c == '"':
		return String
	case c == '{':
		return Object
	case c == '[':
		return Array
	case c == 't' || c == 'f':
		return Bool
	case c == 'n':
		return Null
	case c == '-' || (c >= '0' && c <= '9'):
		return Number
	}
	return Invalid
}

// Begin consumes the opening '{' or '[' given in open.
func (d *Decoder) Begin(open byte) bool {
	if d.err != nil {
		return false
	}
	d.ws()
	if d.pos < len(d.buf) && d.buf[d.pos] == open {
		d.pos++
		return true
	}
	if open == '{' {
		d.want("object")
	} else {
		d.want("array")
	}
	return false
}

// Next reports whether the container closed by end ('}' or ']') has an
// element with index i, consuming the separating comma or the closing
// delimiter. Loop with: for i := 0; d.Next(i, ']'); i++ { … }.
func (d *Decoder) Next(i int, end byte) bool {
	if d.err != nil {
		return false
	}
	d.ws()
	if d.pos >= len(d.buf) {
		d.fail("unexpected end of input")
		return false
	}
	if d.buf[d.pos] == end {
		d.pos++
		return false
	}
	if i > 0 {
		if d.buf[d.pos] != ',' {
			d.fail(fmt.Sprintf("want ',' or '%c', got %q", end, d.buf[d.pos]))
			return false
		}
		d.pos++
		d.ws()
		if d.pos < len(d.buf) && d.buf[d.pos] == end {
			d.fail("trailing comma")
			return false
		}
	}
	return true
}

// Key reads an object key and its colon.
func (d *Decoder) Key() []byte {
	k := d.Str()
	d.colon()
	return k
}

// RawKey reads an object key and its colon as RawStr reads a string: the
// key as written, aliasing the input, and whether it holds an escape.
func (d *Decoder) RawKey() (raw []byte, escaped bool) {
	raw, escaped = d.RawStr()
	d.colon()
	return raw, escaped
}

func (d *Decoder) colon() {
	if d.err != nil {
		return
	}
	d.ws()
	if d.pos >= len(d.buf) || d.buf[d.pos] != ':' {
		d.fail("want ':' after object key")
		return
	}
	d.pos++
}

// Finish checks that only whitespace follows the top-level value.
func (d *Decoder) Finish() {
	if d.err != nil {
		return
	}
	d.ws()
	if d.pos < len(d.buf) {
		d.fail("unexpected data after the top-level value")
	}
}

// Null consumes a null if one comes next and reports whether it did.
func (d *Decoder) Null() bool {
	if d.err != nil || d.Kind() != Null {
		return false
	}
	return d.literal("null")
}

// Bool reads true or false.
func (d *Decoder) Bool() bool {
	if d.err != nil {
		return false
	}
	if d.Kind() != Bool {
		d.want("boolean")
		return false
	}
	if d.buf[d.pos] == 't' {
		return d.literal("true")
	}
	d.literal("false")
	return false
}

func (d *Decoder) literal(lit string) bool {
	if len(d.buf)-d.pos >= len(lit) && string(d.buf[d.pos:d.pos+len(lit)]) == lit {
		d.pos += len(lit)
		return true
	}
	d.fail("invalid literal, want " + lit)
	return false
}

// number consumes a JSON number and returns its text.
func (d *Decoder) number() []byte {
	if d.err != nil {
		return nil
	}
	if d.Kind() != Number {
		d.want("number")
		return nil
	}
	start, b, p := d.pos, d.buf, d.pos
	if b[p] == '-' {
		p++
	}
	switch {
	case p < len(b) && b[p] == '0':
		p++
	case p < len(b) && b[p] >= '1' && b[p] <= '9':
		p = digits(b, p)
	default:
		d.pos = p
		d.fail("invalid number")
		return nil
	}
	if p < len(b) && b[p] == '.' {
		if q := digits(b, p+1); q > p+1 {
			p = q
		} else {
			d.pos = p + 1
			d.fail("invalid number")
			return nil
		}
	}
	if p < len(b) && (b[p] == 'e' || b[p] == 'E') {
		p++
		if p < len(b) && (b[p] == '+' || b[p] == '-') {
			p++
		}
		if q := digits(b, p); q > p {
			p = q
		} else {
			d.pos = p
			d.fail("invalid number")
			return nil
		}
	}
	d.pos = p
	return b[start:p]
}

func digits(b []byte, p int) int {
	for p < len(b) && b[p] >= '0' && b[p] <= '9' {
		p++
	}
	return p
}

// Int reads a number that must be an integer within int64.
func (d *Decoder) Int() int64 {
	text := d.number()
	if d.err != nil {
		return 0
	}
	n, neg := text, text[0] == '-'
	if neg {
		n = n[1:]
	}
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	var v uint64
	for _, c := range n {
		if c < '0' || c > '9' {
			d.pos -= len(text)
			d.fail("want an integer, got " + string(text))
			return 0
		}
		if v > (limit-uint64(c-'0'))/10 {
			d.pos -= len(text)
			d.fail("integer out of range: " + string(text))
			return 0
		}
		v = v*10 + uint64(c-'0')
	}
	if neg {
		return int64(-v)
	}
	return int64(v)
}

// Float reads a number as a float64.
func (d *Decoder) Float() float64 {
	text := d.number()
	if d.err != nil {
		return 0
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		d.pos -= len(text)
		d.fail("number out of range: " + string(text))
		return 0
	}
	return f
}

// Str reads a string. Without escapes the result aliases the input;
// otherwise it is unescaped into the arena.
func (d *Decoder) Str() []byte {
	raw, escaped := d.RawStr()
	if !escaped {
		return raw
	}
	return d.Unescape(raw)
}

// RawStr reads and validates a string, returning its content as written
// (escapes not decoded) and whether it holds any escape. The result
// aliases the input.
func (d *Decoder) RawStr() (raw []byte, escaped bool) {
	if d.err != nil {
		return nil, false
	}
	if d.Kind() != String {
		d.want("string")
		return nil, false
	}
	return d.rawStr(d.pos+1, false)
}

// RawStrPrefix is RawStr for a string that likely shares a prefix with
// known, the content of a string RawStr returned (OpenRLHF sends each
// prompt again as the start of its query): the shared bytes were
// validated there and are only compared here. It returns what RawStr
// returns, and fails as RawStr does.
func (d *Decoder) RawStrPrefix(known []byte) (raw []byte, escaped bool) {
	if d.err != nil || d.Kind() != String || d.CheckUTF8 {
		return d.RawStr()
	}
	start := d.pos + 1
	n := tokenStart(known, commonPrefix(d.buf[start:], known))
	return d.rawStr(start+n, bytes.IndexByte(known[:n], '\\') >= 0)
}

// rawStr is RawStr for the string starting at d.pos, whose content up to
// p, not inside an escape, is valid; escaped says whether it holds one.
func (d *Decoder) rawStr(p int, escaped bool) (raw []byte, _ bool) {
	b := d.buf
	start := d.pos + 1
	var high, h uint64 // the bytes passed, or-ed: non-ASCII if a high bit is set
	for {
		if d.CheckUTF8 {
			p, h = plainHigh(b, p)
			high |= h
		} else {
			p = plain(b, p)
		}
		if p >= len(b) {
			d.pos = p
			d.fail("unterminated string")
			return nil, false
		}
		if c := b[p]; c == '"' {
			d.pos = p + 1
			if d.CheckUTF8 && high&highs != 0 && !utf8.Valid(b[start:p]) {
				d.invalid++
			}
			return b[start:p:p], escaped
		} else if c != '\\' {
			d.pos = p
			d.fail("control character in string")
			return nil, false
		}
		escaped = true
		// The common one-character escapes inline; \u and errors below.
		if p+1 < len(b) && simpleEscapes[b[p+1]] != 0 {
			p += 2
			continue
		}
		d.pos = p
		if !d.skipEscape() {
			return nil, false
		}
		p = d.pos
	}
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	// Equal chunks of doubling size, then halving ones: the difference
	// is then within a word, found in a few calls to the vectorised
	// bytes.Equal however long the prefix.
	i, size := 0, 64
	for i+size <= n && bytes.Equal(a[i:i+size], b[i:i+size]) {
		i += size
		size *= 2
	}
	for size /= 2; size >= 8; size /= 2 {
		if i+size <= n && bytes.Equal(a[i:i+size], b[i:i+size]) {
			i += size
		}
	}
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// tokenStart returns the start of the escape of raw, the content of a
// string RawStr validated, that spans offset i, or i if none does: raw[:i]
// is then valid content too. Only the nearest backslash before i within
// an escape's length (6, \uXXXX) can start one that does.
func tokenStart(raw []byte, i int) int {
	for j := i - 1; j >= 0 && j >= i-5; j-- {
		if raw[j] != '\\' {
			continue
		}
		run := j
		for run > 0 && raw[run-1] == '\\' {
			run--
		}
		size := 2
		switch {
		case (j-run)%2 == 1:
			return i // raw[j] is escaped: the escape ends at j+1
		case raw[j+1] == 'u':
			size = 6
		}
		if j+size <= i {
			return i
		}
		return j
	}
	return i
}

const ones, highs = 0x0101010101010101, 0x8080808080808080

// specials flags, by its high bit, each of the eight bytes of x that is a
// quote, a backslash or a control character. A byte below 0x20 borrows in
// x-0x20…, a quote or a backslash in (x^c)-0x01…; a byte's high bit, which
// rules out a borrow from it, is the same in x and x^c. Borrows flag bytes
// above a flagged one, never below, so the lowest flag is exact.
func specials(x uint64) uint64 {
	q, s := x^(ones*'"'), x^(ones*'\\')
	return ((x - ones*0x20) | (q - ones) | (s - ones)) &^ x & highs
}

// plain returns the offset of the first byte at or after p that is a
// quote, a backslash or a control character, eight bytes at a time.
func plain(b []byte, p int) int {
	for ; p >= 0 && p <= len(b)-8; p += 8 {
		if m := specials(binary.LittleEndian.Uint64(b[p : p+8])); m != 0 {
			return p + bits.TrailingZeros64(m)/8
		}
	}
	for ; p < len(b); p++ {
		if special[b[p]] {
			return p
		}
	}
	return p
}

// plainHigh is plain that also returns the bytes it passed or-ed together,
// whose high bits tell whether any was not ASCII (bytes of the last word
// may be included): the price of CheckUTF8, kept out of plain's loop.
func plainHigh(b []byte, p int) (int, uint64) {
	var high uint64
	for ; p >= 0 && p <= len(b)-8; p += 8 {
		x := binary.LittleEndian.Uint64(b[p : p+8])
		high |= x
		if m := specials(x); m != 0 {
			return p + bits.TrailingZeros64(m)/8, high
		}
	}
	for ; p < len(b); p++ {
		if special[b[p]] {
			return p, high
		}
		high |= uint64(b[p])
	}
	return p, high
}

// special marks the bytes that end a run of plain string content.
var special = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// skipEscape validates the escape at d.pos and moves past it.
func (d *Decoder) skipEscape() bool {
	if d.pos+1 >= len(d.buf) {
		d.fail("unterminated string")
		return false
	}
	c := d.buf[d.pos+1]
	if simpleEscapes[c] != 0 {
		d.pos += 2
		return true
	}
	if c != 'u' {
		d.pos++
		d.fail(fmt.Sprintf("invalid escape %q", c))
		return false
	}
	if _, ok := hex4(d.buf, d.pos+2); !ok {
		d.pos += 2
		d.fail("invalid \\u escape")
		return false
	}
	d.pos += 6
	return true
}

// simpleEscapes maps the byte after a backslash to what it stands for;
// zero marks the bytes that do not form a one-character escape.
var simpleEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

func hex4(b []byte, p int) (rune, bool) {
	if p+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[p : p+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// Unescape decodes the content of a string that RawStr validated into
// the arena, as encoding/json does: lone surrogates become U+FFFD. Content
// without a backslash is returned as is.
func (d *Decoder) Unescape(raw []byte) []byte {
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw
	}
	from := len(d.arena)
	// Decoding never lengthens: an escape of 2 or 6 bytes stands for at
	// most 3 bytes of UTF-8, a pair of 12 for 4.
	d.arena = appendUnescaped(slices.Grow(d.arena, len(raw)), raw)
	return d.arena[from:len(d.arena):len(d.arena)]
}

func appendUnescaped(dst, raw []byte) []byte {
	for len(raw) > 0 {
		i := bytes.IndexByte(raw, '\\')
		if i < 0 {
			return append(dst, raw...)
		}
		dst = append(dst, raw[:i]...)
		raw = raw[i:]
		if c := simpleEscapes[raw[1]]; c != 0 {
			dst = append(dst, c)
			raw = raw[2:]
			continue
		}
		r, _ := hex4(raw, 2)
		raw = raw[6:]
		if utf16.IsSurrogate(r) {
			r2, ok := rune(0), false
			if len(raw) >= 6 && raw[0] == '\\' && raw[1] == 'u' {
				r2, ok = hex4(raw, 2)
			}
			if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
				dst = utf8.AppendRune(dst, dec)
				raw = raw[6:]
				continue
			}
			r = utf8.RuneError
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

// Skip consumes the next value of any type, validating it.
func (d *Decoder) Skip() { d.skip(0) }

// Raw consumes the next value of any type, validating it, and returns it
// as written, without the whitespace around it (what json.RawMessage
// holds). The result aliases the input.
func (d *Decoder) Raw() []byte {
	if d.err != nil {
		return nil
	}
	d.ws()
	start := d.pos
	d.skip(0)
	if d.err != nil {
		return nil
	}
	return d.buf[start:d.pos:d.pos]
}

func (d *Decoder) skip(depth int) {
	if d.err != nil {
		return
	}
	if depth > maxDepth {
		d.fail("nesting too deep")
		return
	}
	switch d.Kind() {
	case String:
		d.skipString()
	case Number:
		d.number()
	case Bool:
		d.Bool()
	case Null:
		d.Null()
	case Array:
		d.pos++
		for i := 0; d.Next(i, ']'); i++ {
			d.skip(depth + 1)
		}
	case Object:
		d.pos++
		for i := 0; d.Next(i, '}'); i++ {
			d.skipString()
			d.colon()
			d.skip(depth + 1)
		}
	default:
		d.want("a value")
	}
}

// skipString validates a string without copying it.
func (d *Decoder) skipString() { d.RawStr() }
