package jsonlex

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStr(t *testing.T) {
	tests := []struct {
		name, in, want, err string
	}{
		{name: "plain", in: `"abc"`, want: "abc"},
		{name: "empty", in: `""`, want: ""},
		{name: "long plain crosses words", in: `"<answer>[100, 200]</answer> and more"`, want: "<answer>[100, 200]</answer> and more"},
		{name: "simple escapes", in: `"a\"b\\c\/d\be\ff\ng\rh\ti"`, want: "a\"b\\c/d\be\ff\ng\rh\ti"},
		{name: "go html escapes", in: `"\u003canswer\u003e[1, 2]\u003c/answer\u003e"`, want: "<answer>[1, 2]</answer>"},
		{name: "python non-ascii escape", in: `"time\uff1a[1, 2]"`, want: "time：[1, 2]"},
		{name: "surrogate pair", in: `"\ud83d\ude00"`, want: "😀"},
		{name: "lone high surrogate", in: `"\ud800x"`, want: "\uFFFDx"},
		{name: "high surrogate then non-low escape", in: `"\ud800\u0041"`, want: "\uFFFDA"},
		{name: "raw utf8", in: `"时间：[1, 2]"`, want: "时间：[1, 2]"},
		{name: "leading whitespace", in: " \t\r\n\"x\"", want: "x"},
		{name: "not a string", in: `12`, err: "offset 0: want string, got number"},
		{name: "unterminated plain", in: `"abc`, err: "offset 4: unterminated string"},
		{name: "unterminated after escape", in: `"a\n`, err: "offset 4: unterminated string"},
		{name: "control character", in: "\"a\nb\"", err: "offset 2: control character in string"},
		{name: "bad escape", in: `"a\x"`, err: `offset 3: invalid escape 'x'`},
		{name: "bad hex", in: `"\u12g4"`, err: `offset 3: invalid \u escape`},
		{name: "short hex", in: `"\u12"`, err: `offset 3: invalid \u escape`},
		{name: "end of input", in: ``, err: "offset 0: want string, got end of input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d Decoder
			d.ResetString(tt.in)
			got := d.Str()
			if tt.err != "" {
				if d.Err() == nil || d.Err().Error() != tt.err {
					t.Fatalf("Str(%q) error = %v, want %q", tt.in, d.Err(), tt.err)
				}
				if !errors.Is(d.Err(), ErrSyntax) {
					t.Errorf("error %v does not wrap ErrSyntax", d.Err())
				}
				return
			}
			if d.Err() != nil || string(got) != tt.want {
				t.Fatalf("Str(%q) = %q, %v; want %q", tt.in, got, d.Err(), tt.want)
			}
		})
	}
}

func TestNumbers(t *testing.T) {
	tests := []struct {
		name, in string
		int      int64
		float    float64
		intErr   string
		floatErr string
	}{
		{name: "zero", in: "0", int: 0, float: 0},
		{name: "negative", in: "-42", int: -42, float: -42},
		{name: "max int64", in: "9223372036854775807", int: 9223372036854775807, float: 9223372036854775807},
		{name: "min int64", in: "-9223372036854775808", int: -9223372036854775808, float: -9223372036854775808},
		{name: "int64 overflow", in: "9223372036854775808", intErr: "offset 0: integer out of range: 9223372036854775808", float: 9223372036854775808},
		{name: "fraction", in: "12.5", intErr: "offset 0: want an integer, got 12.5", float: 12.5},
		{name: "exponent", in: "1e3", intErr: "offset 0: want an integer, got 1e3", float: 1000},
		{name: "leading zero stops the number", in: "01", intErr: "offset 1: unexpected data after the top-level value", floatErr: "offset 1: unexpected data after the top-level value"},
		{name: "bare minus", in: "-", intErr: "offset 1: invalid number", floatErr: "offset 1: invalid number"},
		{name: "dot without digits", in: "1.", intErr: "offset 2: invalid number", floatErr: "offset 2: invalid number"},
		{name: "float overflow", in: "1e999", intErr: "offset 0: want an integer, got 1e999", floatErr: "offset 0: number out of range: 1e999"},
		{name: "string", in: `"5"`, intErr: "offset 0: want number, got string", floatErr: "offset 0: want number, got string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d Decoder
			d.ResetString(tt.in)
			got := d.Int()
			d.Finish()
			if errText(d.Err()) != tt.intErr || (tt.intErr == "" && got != tt.int) {
				t.Errorf("Int(%q) = %d, %v; want %d, %q", tt.in, got, d.Err(), tt.int, tt.intErr)
			}
			d.ResetString(tt.in)
			f := d.Float()
			d.Finish()
			if errText(d.Err()) != tt.floatErr || (tt.floatErr == "" && f != tt.float) {
				t.Errorf("Float(%q) = %v, %v; want %v, %q", tt.in, f, d.Err(), tt.float, tt.floatErr)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestContainers reads {"a":[1,2],"b":true} shapes and pins the errors of
// broken separators.
func TestContainers(t *testing.T) {
	tests := []struct {
		name, in, want, err string
	}{
		{name: "object of arrays", in: `{"a":[1,2],"b":[],"c":[3]}`, want: "a=1,2;b=;c=3;"},
		{name: "whitespace everywhere", in: " { \"a\" : [ 1 , 2 ] } ", want: "a=1,2;"},
		{name: "empty object", in: `{}`, want: ""},
		{name: "trailing comma in array", in: `{"a":[1,]}`, err: "offset 8: trailing comma"},
		{name: "trailing comma in object", in: `{"a":[1],}`, err: "offset 9: trailing comma"},
		{name: "missing comma", in: `{"a":[1 2]}`, err: "offset 8: want ',' or ']', got '2'"},
		{name: "missing colon", in: `{"a" [1]}`, err: "offset 5: want ':' after object key"},
		{name: "not an object", in: `[1]`, err: "offset 0: want object, got array"},
		{name: "unclosed", in: `{"a":[1`, err: "offset 7: unexpected end of input"},
		{name: "trailing data", in: `{"a":[1]} x`, err: "offset 10: unexpected data after the top-level value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d Decoder
			d.ResetString(tt.in)
			var sb strings.Builder
			if d.Begin('{') {
				for i := 0; d.Next(i, '}'); i++ {
					sb.Write(d.Key())
					sb.WriteByte('=')
					if d.Begin('[') {
						for j := 0; d.Next(j, ']'); j++ {
							if j > 0 {
								sb.WriteByte(',')
							}
							sb.WriteString(string(rune('0' + d.Int())))
						}
					}
					sb.WriteByte(';')
				}
			}
			d.Finish()
			if tt.err != "" {
				if errText(d.Err()) != tt.err {
					t.Fatalf("decode(%q) error = %v, want %q", tt.in, d.Err(), tt.err)
				}
				return
			}
			if d.Err() != nil || sb.String() != tt.want {
				t.Fatalf("decode(%q) = %q, %v; want %q", tt.in, sb.String(), d.Err(), tt.want)
			}
		})
	}
}

func TestSkip(t *testing.T) {
	tests := []struct {
		name, in, err string
	}{
		{name: "nested", in: `{"a":[1,{"b":null,"c":"x\"y"}],"d":-1.5e3,"e":false}`},
		{name: "literal typo", in: `[nul]`, err: "offset 1: invalid literal, want null"},
		{name: "bad value", in: `[1,@]`, err: "offset 3: want a value, got invalid character"},
		{name: "bad escape in key", in: `{"a\q":1}`, err: `offset 4: invalid escape 'q'`},
		{name: "too deep", in: strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2), err: "offset 513: nesting too deep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d Decoder
			d.ResetString(tt.in)
			d.Skip()
			d.Finish()
			if errText(d.Err()) != tt.err {
				t.Fatalf("Skip(%q) error = %v, want %q", tt.in, d.Err(), tt.err)
			}
		})
	}
}

func TestStrAliasesOrCopies(t *testing.T) {
	in := []byte(`["plain","esc\n"]`)
	var d Decoder
	d.Reset(in)
	d.Begin('[')
	d.Next(0, ']')
	a := d.Str()
	d.Next(1, ']')
	b := d.Str()
	if &a[0] != &in[2] {
		t.Errorf("plain string was copied; want it to alias the input")
	}
	if string(b) != "esc\n" || &b[0] == &in[10] {
		t.Errorf("escaped string = %q (aliased=%v); want an unescaped copy", b, &b[0] == &in[10])
	}
}

func TestNoAllocs(t *testing.T) {
	in := []byte(`{"query":["<|im_start|>user\nhi<|im_end|>"],"labels":["150"],"n":[1,2.5,true,null]}`)
	var d Decoder
	allocs := testing.AllocsPerRun(100, func() {
		d.Reset(in)
		d.Skip()
		d.Reset(in)
		d.Begin('{')
		for i := 0; d.Next(i, '}'); i++ {
			d.Key()
			d.Skip()
		}
		d.Finish()
	})
	if allocs != 0 || d.Err() != nil {
		t.Fatalf("allocs = %v, err = %v; want 0, nil", allocs, d.Err())
	}
}

// FuzzDecoder checks the decoder against encoding/json: the same inputs are
// valid, and strings and numbers decode to the same values.
func FuzzDecoder(f *testing.F) {
	for _, s := range []string{
		`{"query":["a\u003cb"],"prompts":["x"],"labels":["{\"remaining_tokens\":5}"]}`,
		`[1,-2.5e-3,true,false,null,"\ud83d\ude00",{}]`,
		`"\ud800\udc00"`, `"\ud800"`, `9223372036854775808`, `-0`, `[1,]`, `{"a" 1}`,
		"{\"k\xff\":[\"caf\xc3\xa9\",\"a\\n\xc0\xaf\"]}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if strings.Count(string(in), "[")+strings.Count(string(in), "{") > maxDepth {
			return
		}
		var d Decoder
		d.Reset(in)
		d.Skip()
		d.Finish()
		if got, want := d.Err() == nil, json.Valid(in); got != want {
			t.Fatalf("valid(%q) = %v (%v), encoding/json says %v", in, got, d.Err(), want)
		}
		// Raw gives the value as written; CheckUTF8 tells valid UTF-8
		// exactly (in valid JSON, bytes above 0x7f are in strings only).
		d.CheckUTF8 = true
		d.Reset(in)
		raw := d.Raw()
		d.Finish()
		if d.Err() == nil {
			if want := bytes.Trim(in, " \t\n\r"); !bytes.Equal(raw, want) {
				t.Fatalf("Raw(%q) = %q, want %q", in, raw, want)
			}
			if got, want := d.InvalidUTF8() == 0, utf8.Valid(in); got != want {
				t.Fatalf("Raw(%q): %d strings with invalid UTF-8, utf8.Valid says %v", in, d.InvalidUTF8(), want)
			}
		}
		d.CheckUTF8 = false
		switch d.Reset(in); d.Kind() {
		case String:
			s := d.Str()
			d.Finish()
			var want string
			werr := json.Unmarshal(in, &want)
			if (d.Err() == nil) != (werr == nil) {
				t.Fatalf("Str(%q) error %v, encoding/json %v", in, d.Err(), werr)
			}
			if werr == nil && utf8.Valid(in) && string(s) != want {
				t.Fatalf("Str(%q) = %q, encoding/json %q", in, s, want)
			}
		case Number:
			n := d.Int()
			d.Finish()
			var want int64
			werr := json.Unmarshal(in, &want)
			if (d.Err() == nil) != (werr == nil) || (werr == nil && n != want) {
				t.Fatalf("Int(%q) = %d, %v; encoding/json %d, %v", in, n, d.Err(), want, werr)
			}
		}
	})
}

func TestRawStr(t *testing.T) {
	var d Decoder
	d.ResetString(`["a\nb\u003c","plain"]`)
	d.Begin('[')
	d.Next(0, ']')
	raw, esc := d.RawStr()
	if string(raw) != `a\nb\u003c` || !esc {
		t.Errorf("RawStr = %q, %v; want %q, true", raw, esc, `a\nb\u003c`)
	}
	if got := d.Unescape(raw); string(got) != "a\nb<" {
		t.Errorf("Unescape(%q) = %q, want %q", raw, got, "a\nb<")
	}
	d.Next(1, ']')
	raw, esc = d.RawStr()
	if string(raw) != "plain" || esc {
		t.Errorf("RawStr = %q, %v; want plain, false", raw, esc)
	}
	if got := d.Unescape(raw); &got[0] != &raw[0] {
		t.Errorf("Unescape copied a string without escapes")
	}
}

func BenchmarkRawStr(b *testing.B) {
	prompt, err := os.ReadFile("testdata/prompt.txt")
	if err != nil {
		b.Fatal(err)
	}
	in, _ := json.Marshal(string(prompt))
	var d Decoder
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		d.Reset(in)
		d.RawStr()
		if d.Err() != nil {
			b.Fatal(d.Err())
		}
	}
}

func TestRawStrPrefix(t *testing.T) {
	tests := []struct {
		name, known, in string
		raw             string
		escaped         bool
		err             string
	}{
		{"prefix", `ab\ncd`, `"ab\n"`, `ab\n`, true, ""},
		{"plain prefix", `abcd`, `"ab"`, `ab`, false, ""},
		{"equal", `ab\u00e9`, `"ab\u00e9"`, `ab\u00e9`, true, ""},
		{"empty", `abc`, `""`, ``, false, ""},
		{"diverges", `abcd`, `"abxy"`, `abxy`, false, ""},
		{"longer", `ab`, `"abc"`, `abc`, false, ""},
		{"longer, escaped", `a\nb`, `"a\nbc\t"`, `a\nbc\t`, true, ""},
		{"longer, invalid", `a\nb`, `"a\nb\x"`, ``, false, `offset 6: invalid escape 'x'`},
		{"quote escaped in known", `ab\"cd`, `"ab\"`, ``, false, "offset 5: unterminated string"},
		{"cut inside a \\u escape", `ab\u00e9`, `"ab\u00"`, ``, false, `offset 5: invalid \u escape`},
		{"cut after an escaped backslash", `ab\\cd`, `"ab\\"`, `ab\\`, true, ""},
		{"invalid after the prefix", `abc`, "\"ab\x01\"", ``, false, "offset 3: control character in string"},
		{"not a string", `abc`, `12`, ``, false, "offset 0: want string, got number"},
	}
	for _, tt := range tests {
		var d Decoder
		d.ResetString(tt.in)
		raw, esc := d.RawStrPrefix([]byte(tt.known))
		err := ""
		if d.Err() != nil {
			err = d.Err().Error()
		}
		if string(raw) != tt.raw || esc != tt.escaped || err != tt.err {
			t.Errorf("%s: RawStrPrefix(%q) of %q = %q, %v, %q; want %q, %v, %q", tt.name, tt.known, tt.in, raw, esc, err, tt.raw, tt.escaped, tt.err)
		}
	}
}

// FuzzRawStrPrefix: whatever the known string, RawStrPrefix reads what
// RawStr reads, with the same error at the same offset.
func FuzzRawStrPrefix(f *testing.F) {
	for _, s := range [][2]string{
		{`"ab\ncd"`, `"ab\n"`}, {`"ab\u00e9"`, `"ab\u00"`}, {`"ab\\cd"`, `"ab\\"`},
		{`"ab\"cd"`, `"ab\""`}, {`"\ud83d\ude00"`, `"\ud83d"`}, {`"abc"`, "\"ab\x01\""},
		{`"ab"`, `"ab\nc\u00e9"`}, {`"a\u00e9"`, `"a\u00e9\x"`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, knownIn, in []byte) {
		var d Decoder
		d.Reset(knownIn)
		known, _ := d.RawStr()
		if d.Err() != nil {
			return
		}
		var want, got Decoder
		want.Reset(in)
		wraw, wesc := want.RawStr()
		got.Reset(in)
		graw, gesc := got.RawStrPrefix(known)
		if string(graw) != string(wraw) || gesc != wesc || got.Offset() != want.Offset() || fmt.Sprint(got.Err()) != fmt.Sprint(want.Err()) {
			t.Fatalf("RawStrPrefix(%q) of %q = %q, %v, offset %d, %v; RawStr %q, %v, offset %d, %v",
				known, in, graw, gesc, got.Offset(), got.Err(), wraw, wesc, want.Offset(), want.Err())
		}
	})
}

func BenchmarkRawStrPrefix(b *testing.B) {
	prompt, err := os.ReadFile("testdata/prompt.txt")
	if err != nil {
		b.Fatal(err)
	}
	query, _ := json.Marshal(string(prompt) + "<answer>[140, 160]</answer><|im_end|>")
	in, _ := json.Marshal(string(prompt))
	var d Decoder
	d.Reset(query)
	known, _ := d.RawStr()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		d.Reset(in)
		d.RawStrPrefix(known)
		if d.Err() != nil {
			b.Fatal(d.Err())
		}
	}
}

// TestPlain: the eight-byte scan stops where a byte-by-byte one does,
// for every byte value at every position of two words, alone and after
// a byte that borrows.
func TestPlain(t *testing.T) {
	ascii := func(b []byte) bool { return !slices.ContainsFunc(b, func(c byte) bool { return c >= 0x80 }) }
	slow := func(b []byte) int {
		for p, c := range b {
			if c < 0x20 || c == '"' || c == '\\' {
				return p
			}
		}
		return len(b)
	}
	for _, fill := range []byte{'a', 0xff, 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x80} {
		for c := range 256 {
			for pos := range 16 {
				for _, second := range []int{-1, pos + 1, 15} {
					b := bytes.Repeat([]byte{fill}, 17)
					if second > pos && second < len(b) {
						b[second] = 0
					}
					b[pos] = byte(c)
					if got := plain(b, 0); got != slow(b) {
						t.Fatalf("plain(%x, 0) = %d, want %d", b, got, slow(b))
					}
					// Non-ASCII bytes passed always show; the last word's
					// bytes may show too.
					if got, high := plainHigh(b, 0); got != slow(b) || high&highs == 0 && !ascii(b[:got]) {
						t.Fatalf("plainHigh(%x, 0) = %d, %#x; want %d and a high bit", b, got, high, slow(b))
					}
				}
			}
		}
	}
}

func TestCommonPrefix(t *testing.T) {
	a := bytes.Repeat([]byte("0123456789"), 300)
	for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 65, 191, 192, 1000, 2999} {
		for _, cut := range []int{n, len(a)} {
			b := bytes.Clone(a[:cut])
			if n < len(b) {
				b[n] = 'x'
			}
			if got := commonPrefix(a, b); got != n {
				t.Errorf("commonPrefix of %d bytes differing at %d = %d, want %d", len(b), n, got, n)
			}
			if got := commonPrefix(b, a); got != n {
				t.Errorf("commonPrefix of %d bytes differing at %d, swapped = %d, want %d", len(b), n, got, n)
			}
		}
	}
}

// TestCheckUTF8: with CheckUTF8 every string with invalid UTF-8 is counted
// once, wherever it is (a key, a value read or skipped, after an escape or
// in a long run), and valid non-ASCII text is not; without it nothing is.
func TestCheckUTF8(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     int
	}{
		{"ascii", `{"a":["b","c\n"]}`, 0},
		{"valid non-ascii", "{\"caf\xc3\xa9\":\"\xe2\x82\xac and \xf0\x9f\x98\x80, a long run of text\"}", 0},
		{"key", "{\"k\xff\":1}", 1},
		{"skipped value", "{\"a\":[1,{\"b\":\"x\xc0\xafy\"}]}", 1},
		{"after an escape", "[\"\\n\xff\"]", 1},
		{"in a long run", "[\"abcdefghijklmnop\xffabcdefghijklmnop\"]", 1},
		{"a surrogate's bytes", "[\"\xed\xa0\x80\"]", 1},
		{"cut rune at the end", "[\"ab\xe2\x82\"]", 1},
		{"two strings", "[\"\xff\",\"ok\",\"\xfe\"]", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d Decoder
			d.Reset([]byte(tc.in))
			d.Skip()
			if d.Err() != nil || d.InvalidUTF8() != 0 {
				t.Fatalf("without CheckUTF8: err %v, InvalidUTF8 %d; want nil, 0", d.Err(), d.InvalidUTF8())
			}
			d.CheckUTF8 = true
			d.Reset([]byte(tc.in))
			d.Skip()
			if d.Err() != nil || d.InvalidUTF8() != tc.want {
				t.Fatalf("Skip(%q): err %v, InvalidUTF8 %d; want nil, %d", tc.in, d.Err(), d.InvalidUTF8(), tc.want)
			}
			d.Reset([]byte(tc.in))
			if d.InvalidUTF8() != 0 {
				t.Fatalf("InvalidUTF8 after Reset = %d, want 0", d.InvalidUTF8())
			}
		})
	}
}

func TestRawAndRawKey(t *testing.T) {
	var d Decoder
	d.ResetString(" { \"a\\n\" : [1, {\"b\":null}] ,\"c\": \"x\\u00e9\" } ")
	d.Begin('{')
	var got []string
	for i := 0; d.Next(i, '}'); i++ {
		k, esc := d.RawKey()
		got = append(got, fmt.Sprintf("%s %v %s", k, esc, d.Raw()))
	}
	d.Finish()
	want := []string{`a\n true [1, {"b":null}]`, `c false "x\u00e9"`}
	if d.Err() != nil || !slices.Equal(got, want) {
		t.Fatalf("got %q, err %v; want %q", got, d.Err(), want)
	}
	d.ResetString(`[1,]`)
	if raw := d.Raw(); raw != nil || d.Err() == nil {
		t.Fatalf("Raw of [1,] = %q, err %v; want nil and an error", raw, d.Err())
	}
}

// TestSeek: a Decoder that seeks to where another stopped in a body with
// the same beginning reads the rest as a Decoder that read it all.
func TestSeek(t *testing.T) {
	var a, b Decoder
	a.Reset([]byte(`[{"k":"v1"},"x"]`))
	a.Begin('[')
	a.Next(0, ']')
	a.Skip()
	off := a.Offset()
	b.Reset([]byte(`[{"k":"v1"},"y",3]`))
	b.Seek(off)
	var got []string
	for i := 1; b.Next(i, ']'); i++ {
		got = append(got, string(b.Raw()))
	}
	if want := []string{`"y"`, `3`}; b.Err() != nil || !slices.Equal(got, want) {
		t.Errorf("after Seek(%d): %q, %v; want %q", off, got, b.Err(), want)
	}
	b.Seek(100)
	if err := b.Err(); err == nil || err.Error() != "offset 18: seek to 100 outside the input's 18 bytes" {
		t.Errorf("Seek past the end: %v", err)
	}
}
