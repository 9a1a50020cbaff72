package rollout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"
)

// fixtureFiles are the repository's canonical rollout logs: the embedded
// fixtures (package fixtures, which imports this one, so they are read
// from disk here), the test logs of the packages that read rollouts, and
// an OpenHands output log, whose records are all fields a rollout does not
// have.
var fixtureFiles = []string{
	"../fixtures/rollouts/*/*.jsonl.zst",
	"../fixtures/testdata/*.golden.jsonl",
	"../probes/testdata/replay/*.jsonl",
	"../probes/testdata/bagen-v1/env/*.jsonl",
	"../dataset/testdata/bagen-v1/rollouts.jsonl",
	"testdata/openhands/eval/output.jsonl",
}

// fixtureRecords is every non-blank line of fixtureFiles, by file.
func fixtureRecords(tb testing.TB) map[string][][]byte {
	tb.Helper()
	dec, err := zstd.NewReader(nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer dec.Close()
	recs := map[string][][]byte{}
	for _, pat := range fixtureFiles {
		names, err := filepath.Glob(pat)
		if err != nil || len(names) == 0 {
			tb.Fatalf("no fixture files match %s (%v)", pat, err)
		}
		for _, name := range names {
			data, err := os.ReadFile(name)
			if err != nil {
				tb.Fatal(err)
			}
			if strings.HasSuffix(name, ".zst") {
				if data, err = dec.DecodeAll(data, nil); err != nil {
					tb.Fatalf("%s: %v", name, err)
				}
			}
			for _, line := range bytes.Split(data, []byte("\n")) {
				if len(bytes.TrimSpace(line)) > 0 {
					recs[name] = append(recs[name], line)
				}
			}
		}
	}
	return recs
}

func unmarshalWire(data []byte, w *wireRollout) error { return json.Unmarshal(data, w) }

// checkFast compares decodeWireFast with json.Unmarshal on data: the fast
// path may decline, but what it accepts json.Unmarshal accepts, with a
// deep-equal result; and the Trajectory (or error) decodeRollout makes is
// the same either way. It reports whether the fast path was taken.
//
// It also checks what the fast path reads on the way: that it tells valid
// UTF-8 exactly, that a content string it decodes is json.Unmarshal's, and
// that Decode (which skips its own UTF-8 pass after it) gives what it did
// with checkUTF8 and json.Unmarshal, with and without replacement.
func checkFast(t testing.TB, data []byte) bool {
	t.Helper()
	var got, want wireRollout
	fast, valid := decodeWireFast(data, &got)
	err := json.Unmarshal(data, &want)
	if fast {
		if err != nil {
			t.Fatalf("the fast path accepts what json.Unmarshal rejects (%v):\n%q", err, data)
		}
		if valid != utf8.Valid(data) {
			t.Fatalf("the fast path says valid UTF-8 %v, utf8.Valid %v, for %q", valid, !valid, data)
		}
		for i := range got.Messages {
			m := &got.Messages[i]
			if m.hasText {
				var s string
				if err := json.Unmarshal(m.Content, &s); err != nil || s != m.text {
					t.Fatalf("messages[%d]: the fast path decodes %q as %q; json.Unmarshal %q (%v)", i, m.Content, m.text, s, err)
				}
			} else if m.text != "" {
				t.Fatalf("messages[%d]: text %q without hasText", i, m.text)
			}
			if lit := m.Content; len(lit) > 0 && lit[0] == '"' && !m.hasText && utf8.Valid(lit) && !bytes.Contains(lit, []byte(`\u`)) {
				t.Fatalf("messages[%d]: content %q left undecoded", i, lit)
			}
			m.text, m.hasText = "", false
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("the fast path gives\n%s\njson.Unmarshal\n%s\nfor %q", dumpWire(got), dumpWire(want), data)
		}
	}
	rec := Record{Pos: Position{File: "r.jsonl", Line: 7, Index: -1}, Data: data}
	tf, ef := decodeRollout(rec)
	tu, eu := decodeRolloutWith(rec, unmarshalWire)
	if fmt.Sprint(ef) != fmt.Sprint(eu) {
		t.Fatalf("decodeRollout errors %v; through json.Unmarshal %v\nfor %q", ef, eu, data)
	}
	if !reflect.DeepEqual(tf, tu) {
		t.Fatalf("decodeRollout gives\n%+v\nthrough json.Unmarshal\n%+v\nfor %q", tf, tu, data)
	}
	for _, opts := range []*Options{nil, {ReplaceInvalidUTF8: true}, {MaxMessageBytes: 8, ReplaceInvalidUTF8: true}} {
		rec.Options = opts
		tc, ec := decodeRolloutChecked(rec)
		tr, er := decodeReference(rec)
		if fmt.Sprint(ec) != fmt.Sprint(er) {
			t.Fatalf("decodeRolloutChecked (options %+v) errors %v; checkUTF8 and json.Unmarshal %v\nfor %q", opts, ec, er, data)
		}
		if !reflect.DeepEqual(tc, tr) {
			t.Fatalf("decodeRolloutChecked (options %+v) gives\n%+v\ncheckUTF8 and json.Unmarshal\n%+v\nfor %q", opts, tc, tr, data)
		}
	}
	return fast
}

// decodeReference is what Decode did for the rollout format before its
// reader checked UTF-8: checkUTF8, then the record through json.Unmarshal.
func decodeReference(rec Record) (Trajectory, error) {
	replaced, err := checkUTF8(rec)
	if err != nil {
		return Trajectory{Pos: rec.Pos}, err
	}
	t, err := decodeRolloutWith(rec, unmarshalWire)
	if err != nil {
		return t, err
	}
	t.Replaced = replaced
	return t, nil
}

// dumpWire shows a wireRollout with its pointers followed and nil told
// apart from empty.
func dumpWire(w wireRollout) string {
	var b strings.Builder
	str := func(p *string) string {
		if p == nil {
			return "nil"
		}
		return fmt.Sprintf("%q", *p)
	}
	raw := func(r json.RawMessage) string {
		if r == nil {
			return "nil"
		}
		return fmt.Sprintf("%q", r)
	}
	fmt.Fprintf(&b, "custom_id=%s api_inputs=%s budget=%s\n", str(w.CustomID), str(w.APIInputs), raw(w.Budget))
	fmt.Fprintf(&b, "messages (nil %v):\n", w.Messages == nil)
	for _, m := range w.Messages {
		fmt.Fprintf(&b, "  role=%s content=%s tokens=%s tool_calls=%s\n", str(m.Role), raw(m.Content), raw(m.Tokens), raw(m.ToolCalls))
	}
	fmt.Fprintf(&b, "metadata (nil %v):\n", w.Metadata == nil)
	for k, v := range w.Metadata {
		fmt.Fprintf(&b, "  %q=%s\n", k, raw(v))
	}
	fmt.Fprintf(&b, "per_turn_api_tokens (nil %v):\n", w.API == nil)
	for _, a := range w.API {
		fmt.Fprintf(&b, "  input=%s output=%s reasoning=%s cached=%s", raw(a.Input), raw(a.Output), raw(a.Reasoning), raw(a.Cached))
		if a.Retried != nil {
			fmt.Fprintf(&b, " retried calls=%s output=%s", raw(a.Retried.Calls), raw(a.Retried.Output))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestDecodeWireFastFixtures: every fixture record takes the fast path
// and decodes as through json.Unmarshal.
func TestDecodeWireFastFixtures(t *testing.T) {
	total, fast := 0, 0
	for name, recs := range fixtureRecords(t) {
		n := 0
		for _, r := range recs {
			if checkFast(t, r) {
				n++
			}
		}
		if n != len(recs) {
			t.Errorf("%s: fast path taken for %d of %d records", name, n, len(recs))
		}
		total += len(recs)
		fast += n
	}
	if total < 500 {
		t.Errorf("only %d fixture records", total)
	}
	t.Logf("fast path taken for %d of %d fixture records", fast, total)
}

const fastMsgs = `"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b","tokens":3}]`

// fastCases are records beside the fixtures' shapes, with whether the
// fast path takes them; they also seed FuzzDecodeRolloutFast.
var fastCases = []struct {
	name, data string
	fast       bool
}{
	{"plain", `{"custom_id":"t",` + fastMsgs + `}`, true},
	{"spaces", " \t\r\n{ \"custom_id\" : \"t\" , \"messages\" : [ { \"role\" : \"user\" , \"content\" : \"a\" } ] } \n\t", true},
	{"everything", `{"custom_id":"t","budget":3000,"api_inputs":"turn",` + fastMsgs + `,"metadata":{"success":true,"task":"sokoban","guard":{"a":[1,{"b":null}]}},` +
		`"per_turn_api_tokens":[{"input":5,"output":3,"reasoning":1,"cached":2,"retried":{"calls":1,"output":4}},{"input":6,"output":2,"retried":null}]}`, true},
	{"empty object", `{}`, true},
	{"empty arrays and objects", `{"custom_id":"t","messages":[],"metadata":{},"per_turn_api_tokens":[{"retried":{}}]}`, true},
	{"nulls", `{"custom_id":null,"messages":null,"metadata":null,"per_turn_api_tokens":null,"api_inputs":null,"budget":null}`, true},
	{"null fields", `{"custom_id":"t","messages":[{"role":null,"content":null,"tokens":null,"tool_calls":null}],"per_turn_api_tokens":[{"input":null,"output":null,"reasoning":null,"cached":null,"retried":null}]}`, true},
	{"raw values verbatim", `{"custom_id":"t","budget":1.50e+3,"messages":[{"role":"user","content":[{"type":"text","text":"x"}],"tokens":-0}],"metadata":{"x":[ 1 , 2 ],"y":"\u00e9\n"}}`, true},
	{"tool calls", `{"custom_id":"t","messages":[{"role":"user","content":"a"},{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"ls","arguments":"{\"p\": 1}"}}]}]}`, true},
	{"unicode escapes in id", `{"custom_id":"\u00e9\t\"x\"",` + fastMsgs + `}`, true},
	{"surrogate pair in id", `{"custom_id":"\ud83d\ude00",` + fastMsgs + `}`, true},
	{"lone surrogate in id", `{"custom_id":"\ud83d",` + fastMsgs + `}`, true},
	{"lone surrogate in content", `{"custom_id":"t","messages":[{"role":"user","content":"\ud800"}]}`, true},
	{"content escapes", `{"custom_id":"t","messages":[{"role":"user","content":"a\nb\t\"c\"\\d\/e\b\f\r"},{"role":"assistant","content":"\n"},{"role":"user","content":"\\"}]}`, true},
	{"content unicode escapes", `{"custom_id":"t","messages":[{"role":"user","content":"\u003cthink\u003e \u0000\u001f\u007f\u0080\u00e9\u07ff\u0800\uFFFD\uffff\uE000"}]}`, true},
	{"content escape at the ends", `{"custom_id":"t","messages":[{"role":"user","content":"\u00e9 plain run of more than eight bytes \n"},{"role":"user","content":""}]}`, true},
	{"content surrogate pair", `{"custom_id":"t","messages":[{"role":"user","content":"x\ud83d\ude00y\n"}]}`, true},
	{"content reversed surrogates", `{"custom_id":"t","messages":[{"role":"user","content":"\ude00\ud83d"}]}`, true},
	{"content high surrogate then escape", `{"custom_id":"t","messages":[{"role":"user","content":"\ud83d\n\u0041"}]}`, true},
	{"content raw utf-8 and escapes", `{"custom_id":"t","messages":[{"role":"user","content":"é\n😀\u00e9ü long enough to pass eight"}]}`, true},
	{"content invalid utf-8 and escapes", "{\"custom_id\":\"t\",\"messages\":[{\"role\":\"user\",\"content\":\"\\n\xe2\x82\\u00e9 and \xc0\xaf \xed\xa0\x80\xf4\x90\x80\x80 eight\"}]}", true},
	{"content invalid utf-8 in a long run", "{\"custom_id\":\"t\",\"messages\":[{\"role\":\"user\",\"content\":\"abcdefgh\xffabcdefgh\"}]}", true},
	{"content truncated utf-8 at the end", "{\"custom_id\":\"t\",\"messages\":[{\"role\":\"user\",\"content\":\"abc\xe2\x82\"}]}", true},
	{"invalid utf-8 in tool calls", "{\"custom_id\":\"t\",\"messages\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"function\":{\"name\":\"l\xffs\",\"arguments\":\"{}\"}}]}]}", true},
	{"invalid utf-8 in metadata value", "{\"custom_id\":\"t\",\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],\"metadata\":{\"task\":\"s\xff\"}}", true},
	{"invalid utf-8 in a declined record", "{\"custom_id\":\"t\",\"messages\":[{\"role\":\"user\",\"content\":\"a\xff\"}],\"Budget\":1}", false},
	{"invalid utf-8 in a bad record", "{\"custom_id\":\"t\",\"messages\":[{\"role\":\"user\",\"content\":\"a\xff\"}],\"budget\":-1}", true},
	{"content control character after escape", "{\"custom_id\":\"t\",\"messages\":[{\"role\":\"user\",\"content\":\"\\n\x01\"}]}", false},
	{"content bad escape after escape", `{"custom_id":"t","messages":[{"role":"user","content":"\n\q"}]}`, false},
	{"content bad unicode escape", `{"custom_id":"t","messages":[{"role":"user","content":"\n\u12g4"}]}`, false},
	{"content truncated escape", `{"custom_id":"t","messages":[{"role":"user","content":"\n\`, false},
	{"content unterminated", `{"custom_id":"t","messages":[{"role":"user","content":"abc\n`, false},
	{"content over the limit", `{"custom_id":"t","messages":[{"role":"user","content":"` + strings.Repeat(`\n`, 10) + `"}]}`, true},
	{"raw utf-8", `{"custom_id":"é😀","messages":[{"role":"user","content":"ü"}],"metadata":{"ключ":1}}`, true},
	{"invalid utf-8 in content", "{\"custom_id\":\"t\",\"messages\":[{\"role\":\"user\",\"content\":\"a\xffb\"}]}", true},
	{"invalid utf-8 in id", "{\"custom_id\":\"t\xff\",\"messages\":[{\"role\":\"user\",\"content\":\"a\"}]}", false},
	{"invalid utf-8 in metadata key", "{\"custom_id\":\"t\",\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],\"metadata\":{\"k\xfe\":1}}", false},
	{"invalid utf-8 in unknown key", "{\"custom_id\":\"t\",\"x\xfe\":1,\"messages\":[{\"role\":\"user\",\"content\":\"a\"}]}", false},
	{"unknown fields", `{"custom_id":"t","extra":{"a":[true,false,null,-1.5e-7,"s"]},` + fastMsgs[:len(fastMsgs)-2] + `,"name":"x","weight":[]}],"per_turn_api_tokens":[{"total":9,"retried":{"wall":1}}]}`, true},
	{"deep unknown", `{"custom_id":"t",` + fastMsgs + `,"deep":` + strings.Repeat("[", 150) + strings.Repeat("]", 150) + `}`, true},
	{"deeper unknown", `{"custom_id":"t",` + fastMsgs + `,"deep":` + strings.Repeat(`{"a":`, 300) + "1" + strings.Repeat("}", 300) + `}`, true},
	{"deeper than the lexer follows", `{"custom_id":"t",` + fastMsgs + `,"deep":` + strings.Repeat(`{"a":`, 1000) + "1" + strings.Repeat("}", 1000) + `}`, false},
	{"too deep", `{"custom_id":"t","deep":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`, false},
	{"case-changed key", `{"Custom_ID":"t",` + fastMsgs + `}`, false},
	{"case-changed message key", `{"custom_id":"t","messages":[{"ROLE":"user","content":"a"}]}`, false},
	{"case-changed api key", `{"custom_id":"t",` + fastMsgs + `,"per_turn_api_tokens":[{"Input":1,"output":2}]}`, false},
	{"case-changed retried key", `{"custom_id":"t",` + fastMsgs + `,"per_turn_api_tokens":[{"retried":{"Calls":1}}]}`, false},
	{"case-changed metadata key", `{"custom_id":"t",` + fastMsgs + `,"metadata":{"Success":true}}`, true},
	{"kelvin sign key", "{\"custom_id\":\"t\",\"messages\":[{\"role\":\"user\",\"content\":\"a\",\"to\u212aens\":5}]}", false},
	{"long s key", "{\"cu\u017ftom_id\":\"t\"," + fastMsgs + "}", false},
	{"escaped key", `{"custom\u005fid":"t",` + fastMsgs + `}`, false},
	{"escaped unknown key", `{"custom_id":"t","x\n":1,` + fastMsgs + `}`, false},
	{"escaped metadata key", `{"custom_id":"t",` + fastMsgs + `,"metadata":{"a\/b":1}}`, false},
	{"duplicate id", `{"custom_id":"a","custom_id":"b",` + fastMsgs + `}`, false},
	{"duplicate messages", `{"custom_id":"t",` + fastMsgs + `,"messages":[{"role":"user"}]}`, false},
	{"duplicate metadata", `{"custom_id":"t",` + fastMsgs + `,"metadata":{"a":1},"metadata":{"b":2}}`, false},
	{"duplicate null metadata", `{"custom_id":"t",` + fastMsgs + `,"metadata":{"a":1},"metadata":null}`, false},
	{"duplicate role", `{"custom_id":"t","messages":[{"role":"user","content":"a","role":"assistant"}]}`, false},
	{"duplicate retried", `{"custom_id":"t",` + fastMsgs + `,"per_turn_api_tokens":[{"retried":{"calls":1},"retried":{"output":2}}]}`, false},
	{"duplicate retried calls", `{"custom_id":"t",` + fastMsgs + `,"per_turn_api_tokens":[{"retried":{"calls":1,"calls":2}}]}`, false},
	{"duplicate unknown", `{"custom_id":"t","x":1,"x":2,` + fastMsgs + `}`, true},
	{"duplicate metadata key", `{"custom_id":"t",` + fastMsgs + `,"metadata":{"a":1,"a":[2]}}`, true},
	{"null message", `{"custom_id":"t","messages":[null,{"role":"user","content":"a"}]}`, false},
	{"null api entry", `{"custom_id":"t",` + fastMsgs + `,"per_turn_api_tokens":[null]}`, false},
	{"id a number", `{"custom_id":7,` + fastMsgs + `}`, false},
	{"messages an object", `{"custom_id":"t","messages":{}}`, false},
	{"metadata an array", `{"custom_id":"t",` + fastMsgs + `,"metadata":[]}`, false},
	{"retried a number", `{"custom_id":"t",` + fastMsgs + `,"per_turn_api_tokens":[{"retried":1}]}`, false},
	{"top-level null", `null`, false},
	{"top-level array", `[]`, false},
	{"byte order mark", "\ufeff{\"custom_id\":\"t\"," + fastMsgs + "}", false},
	{"trailing data", `{"custom_id":"t",` + fastMsgs + `} {}`, false},
	{"trailing comma", `{"custom_id":"t",` + fastMsgs + `,}`, false},
	{"truncated", `{"custom_id":"t",` + fastMsgs[:30], false},
	{"truncated string", `{"custom_id":"t`, false},
	{"truncated escape", `{"custom_id":"t\u00`, false},
	{"empty", ``, false},
	{"bad escape", `{"custom_id":"t","messages":[{"role":"user","content":"a\x"}]}`, false},
	{"control character", "{\"custom_id\":\"t\",\"messages\":[{\"role\":\"user\",\"content\":\"a\tb\"}]}", false},
	{"delete character", "{\"custom_id\":\"t\",\"messages\":[{\"role\":\"user\",\"content\":\"a\x7fb\"}]}", true},
	{"bad literal", `{"custom_id":"t",` + fastMsgs + `,"x":nul}`, false},
	{"literal run-on", `{"custom_id":"t",` + fastMsgs + `,"x":truex}`, false},
	{"leading zero", `{"custom_id":"t","budget":01,` + fastMsgs + `}`, false},
	{"bare point", `{"custom_id":"t","budget":1.,` + fastMsgs + `}`, false},
	{"bare minus", `{"custom_id":"t","budget":-,` + fastMsgs + `}`, false},
	{"bare exponent", `{"custom_id":"t","budget":1e,` + fastMsgs + `}`, false},
	{"leading point", `{"custom_id":"t","budget":.5,` + fastMsgs + `}`, false},
	{"plus sign", `{"custom_id":"t","budget":+5,` + fastMsgs + `}`, false},
	{"numbers", `{"custom_id":"t","budget":-0.0e-0,` + fastMsgs + `,"metadata":{"a":0,"b":1E+2,"c":123456789012345678901234567890}}`, true},
	{"missing colon", `{"custom_id" "t"}`, false},
	{"missing comma", `{"custom_id":"t" "budget":1}`, false},
	{"single quotes", `{'custom_id':'t'}`, false},
}

// TestDecodeContents pins what Decode makes of message contents that the
// one-pass reader decodes itself or leaves to json.Unmarshal, and the
// errors and replacement counts of invalid UTF-8 it finds on the way.
func TestDecodeContents(t *testing.T) {
	rec := func(content string) []byte {
		return []byte(`{"custom_id":"t","messages":[{"role":"user","content":"` + content + `"}]}`)
	}
	for _, tt := range []struct {
		name     string
		data     []byte
		opts     *Options
		want     string
		replaced int
		err      string
	}{
		{"plain", rec("hello, world"), nil, "hello, world", 0, ""},
		{"escapes", rec(`a\nb\t\"c\\d\/`), nil, "a\nb\t\"c\\d/", 0, ""},
		{"unicode escapes", rec(`\u003cthink\u003e\u00e9\u20ac\u0000`), nil, "<think>é€\x00", 0, ""},
		{"surrogate pair", rec(`\ud83d\ude00!`), nil, "😀!", 0, ""},
		{"lone surrogate", rec(`a\ud800b`), nil, "a\uFFFDb", 0, ""},
		{"raw utf-8", rec("é😀 and more than eight bytes"), nil, "é😀 and more than eight bytes", 0, ""},
		{"invalid utf-8", rec("caf\xe9 \xff\\n"), nil, "", 0,
			`r.jsonl:3: messages[0].content: invalid UTF-8 at byte 58 of the record (pass --replace-invalid-utf8 to replace it with U+FFFD)`},
		{"invalid utf-8 replaced", rec("caf\xe9 \xff\\n"), &Options{ReplaceInvalidUTF8: true}, "caf\uFFFD \uFFFD\n", 2, ""},
		{"truncated utf-8 in a long run replaced", rec("abcdefgh\xe2\x82abcdefgh"), &Options{ReplaceInvalidUTF8: true}, "abcdefgh\uFFFD\uFFFDabcdefgh", 2, ""},
		{"invalid utf-8 elsewhere", []byte("{\"custom_id\":\"t\",\"messages\":[{\"role\":\"user\",\"content\":\"a\\n\"}],\"metadata\":{\"task\":\"s\xff\"}}"), nil, "", 0,
			`r.jsonl:3: metadata.task: invalid UTF-8 at byte 83 of the record (pass --replace-invalid-utf8 to replace it with U+FFFD)`},
		{"invalid utf-8 elsewhere replaced", []byte("{\"custom_id\":\"t\",\"messages\":[{\"role\":\"user\",\"content\":\"a\\n\"}],\"metadata\":{\"task\":\"s\xff\"}}"), &Options{ReplaceInvalidUTF8: true}, "a\n", 1, ""},
		{"over the limit", rec(`\n\n\n\n\n`), &Options{MaxMessageBytes: 4}, "", 0,
			`r.jsonl:3: messages[0].content: over the size limit: 5 bytes, more than the message limit 4`},
		{"at the limit", rec(`\n\n\n\n`), &Options{MaxMessageBytes: 4}, "\n\n\n\n", 0, ""},
		{"control character", rec("a\x01"), nil, "", 0,
			`r.jsonl:3: invalid JSON at byte 57: invalid character '\x01' in string literal`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode(Record{Pos: Position{File: "r.jsonl", Line: 3, Index: -1}, Data: tt.data, Options: tt.opts})
			if fmt.Sprint(err) != fmt.Sprint(errString(tt.err)) {
				t.Fatalf("error %v, want %s", err, tt.err)
			}
			if err != nil {
				return
			}
			if got.Messages[0].Content != tt.want || got.Replaced != tt.replaced {
				t.Errorf("content %q with %d replaced, want %q with %d", got.Messages[0].Content, got.Replaced, tt.want, tt.replaced)
			}
		})
	}
}

// errString is s as an error, nil for "".
func errString(s string) error {
	if s == "" {
		return nil
	}
	return errors.New(s)
}

func TestDecodeWireFastCases(t *testing.T) {
	for _, tt := range fastCases {
		t.Run(tt.name, func(t *testing.T) {
			if got := checkFast(t, []byte(tt.data)); got != tt.fast {
				t.Errorf("fast path taken: %v, want %v", got, tt.fast)
			}
		})
	}
}

// TestDecodeWireFastUnmarshalMeanings pins the encoding/json behaviours
// the fast path declines for, so that a change in them shows here.
func TestDecodeWireFastUnmarshalMeanings(t *testing.T) {
	var w wireRollout
	if err := json.Unmarshal([]byte("{\"cu\u017ftom_id\":\"t\",\"messages\":[{\"role\":\"user\",\"to\u212aens\":5}]}"), &w); err != nil {
		t.Fatal(err)
	}
	if w.CustomID == nil || *w.CustomID != "t" || string(w.Messages[0].Tokens) != "5" {
		t.Errorf("folded names: got %s", dumpWire(w))
	}
	w = wireRollout{}
	if err := json.Unmarshal([]byte(`{"messages":[{"role":"user","tokens":1}],"messages":[{"content":"b"}]}`), &w); err != nil {
		t.Fatal(err)
	}
	if len(w.Messages) != 1 || w.Messages[0].Role == nil || string(w.Messages[0].Tokens) != "1" || string(w.Messages[0].Content) != `"b"` {
		t.Errorf("repeated array merged: got %s", dumpWire(w))
	}
}

// FuzzDecodeRolloutFast: the fast path never accepts what json.Unmarshal
// rejects, and what it accepts decodes the same.
func FuzzDecodeRolloutFast(f *testing.F) {
	for _, tt := range fastCases {
		f.Add([]byte(tt.data))
	}
	recs := fixtureRecords(f)
	for _, name := range []string{
		"../fixtures/testdata/sokoban.golden.jsonl",
		"../fixtures/testdata/warehouse.golden.jsonl",
		"../fixtures/testdata/searchr1.golden.jsonl",
		"../probes/testdata/replay/swebench.jsonl",
		"../probes/testdata/bagen-v1/env/half_reachable.jsonl",
		"../dataset/testdata/bagen-v1/rollouts.jsonl",
		"testdata/openhands/eval/output.jsonl",
	} {
		if len(recs[name]) == 0 {
			f.Fatalf("no records in %s", name)
		}
		r := recs[name][0]
		f.Add(r)
		f.Add(r[:len(r)/2])
		f.Add(bytes.Replace(r, []byte(`"role"`), []byte(`"Role"`), 1))
		f.Add(bytes.Replace(r, []byte(`"messages"`), []byte(`"x":null,"messages"`), 1))
	}
	// Logs of other formats: their records are mostly fields a rollout
	// does not have (mini-swe-agent's also has messages).
	err := filepath.WalkDir("testdata", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") && !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil || len(data) > 64<<10 {
			return err
		}
		if strings.HasSuffix(path, ".jsonl") {
			data, _, _ = bytes.Cut(data, []byte("\n"))
		}
		f.Add(data)
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFast(t, data)
	})
}

func benchRecords(b *testing.B) ([][]byte, int64) {
	var recs [][]byte
	var n int64
	for _, rs := range fixtureRecords(b) {
		for _, r := range rs {
			if _, err := decodeRollout(Record{Data: r}); err != nil {
				continue // the OpenHands log
			}
			recs = append(recs, r)
			n += int64(len(r))
		}
	}
	return recs, n
}

// BenchmarkDecodeRollout decodes every fixture record, through the fast
// path and through json.Unmarshal: the whole of decodeRollout, and
// (wire-) only the reading of the JSON into wireRollout; and Decode, the
// UTF-8 check included. A whole build's share is measured with
// tools/buildbench -base against an earlier binary and a --cpuprofile of
// each.
func BenchmarkDecodeRollout(b *testing.B) {
	recs, n := benchRecords(b)
	for _, bc := range []struct {
		name string
		wire func([]byte, *wireRollout) error
	}{{"wire-fast", decodeWire}, {"wire-unmarshal", unmarshalWire}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(n)
			b.ReportAllocs()
			for b.Loop() {
				for _, r := range recs {
					var w wireRollout
					if err := bc.wire(r, &w); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
	for _, bc := range []struct {
		name string
		wire func([]byte, *wireRollout) error
	}{{"fast", decodeWire}, {"unmarshal", unmarshalWire}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(n)
			b.ReportAllocs()
			for b.Loop() {
				for _, r := range recs {
					if _, err := decodeRolloutWith(Record{Data: r}, bc.wire); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
	// What a build calls: the UTF-8 check as well.
	b.Run("Decode", func(b *testing.B) {
		b.SetBytes(n)
		b.ReportAllocs()
		for b.Loop() {
			for _, r := range recs {
				if _, err := Decode(Record{Data: r}); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

func TestMessageField(t *testing.T) {
	for _, i := range []int{0, 1, 9, 10, 255, 256, 1000} {
		want := messageFields{
			role:      fmt.Sprintf("messages[%d].role", i),
			content:   fmt.Sprintf("messages[%d].content", i),
			tokens:    fmt.Sprintf("messages[%d].tokens", i),
			toolCalls: fmt.Sprintf("messages[%d].tool_calls", i),
		}
		if got := messageField(i); got != want {
			t.Errorf("messageField(%d) = %+v, want %+v", i, got, want)
		}
	}
}

// TestWireKeys: the names the fast path reads are the wire structs' JSON
// names, so that a field added to a struct is not silently left empty.
func TestWireKeys(t *testing.T) {
	tags := func(typ reflect.Type) []string {
		var names []string
		for f := range typ.Fields() {
			if !f.IsExported() { // what the fast path reads beside JSON
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			names = append(names, name)
		}
		return names
	}
	retried, _ := reflect.TypeFor[wireAPI]().FieldByName("Retried")
	for _, tt := range []struct {
		typ  reflect.Type
		keys []string
	}{
		{reflect.TypeFor[wireRollout](), wireKeys},
		{reflect.TypeFor[wireMessage](), wireMessageKeys},
		{reflect.TypeFor[wireAPI](), wireAPIKeys},
		{retried.Type.Elem(), wireRetriedKeys},
	} {
		if got := tags(tt.typ); !reflect.DeepEqual(got, tt.keys) {
			t.Errorf("%v: fields %q, the fast path reads %q", tt.typ, got, tt.keys)
		}
	}
}
