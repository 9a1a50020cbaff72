package rollout

import (
	"encoding/json"
	"testing"
)

// unquoteCases cover the fast path and every way out of it.
var unquoteCases = []string{
	`""`, `"plain ascii"`, `"Turn 1. State:\n#__X\n"`, `"tab\there \"quoted\" \\ back\/slash"`,
	`"\b\f\r"`, `"caf\u00e9 \u4e2d\u6587 \u0000"`, `"\u00E9\u00e9"`, `"héllo 世界 🙂"`,
	`"\ud83d\ude42"`, `"\ud83d alone"`, `"\ude42"`, "\"bad \xff utf8\"", "\"ctl \x01\"",
	`"trailing \"`, `"\x"`, `"\u12"`, `"\u12g4"`, `"a"b"`, `"unterminated`, `x`, `"`, `123`,
}

func TestUnquoteStringMatchesEncodingJSON(t *testing.T) {
	for _, c := range unquoteCases {
		checkUnquote(t, []byte(c))
	}
}

// unquoteString's values, recomputed by hand from JSON's escapes and
// encoding/json's replacement of invalid UTF-8 and lone surrogates.
func TestUnquoteStringValues(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`"Turn 1.\nok"`, "Turn 1.\nok"},
		{`"caf\u00e9"`, "café"},
		{`"\ud83d\ude42"`, "\U0001F642"},
		{`"\ud83d alone"`, "\uFFFD alone"},
		{"\"\xff\"", "\uFFFD"},
		{`"a\"b"`, `a"b`},
	} {
		if got, err := unquoteString([]byte(tc.in)); got != tc.want || err != nil {
			t.Errorf("unquoteString(%s) = %q, %v; want %q, nil", tc.in, got, err, tc.want)
		}
	}
}

func checkUnquote(t *testing.T, v []byte) {
	t.Helper()
	var want string
	wantErr := json.Unmarshal(v, &want)
	got, err := unquoteString(v)
	if (err != nil) != (wantErr != nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Fatalf("unquoteString(%q) error %v, json.Unmarshal %v", v, err, wantErr)
	}
	if err == nil && got != want {
		t.Fatalf("unquoteString(%q) = %q, json.Unmarshal %q", v, got, want)
	}
}

func FuzzUnquoteString(f *testing.F) {
	for _, c := range unquoteCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, v []byte) { checkUnquote(t, v) })
}

// BenchmarkUnquoteString decodes a Sokoban-like observation (ASCII with
// \n escapes and a non-ASCII rune) the way the readers do, against
// json.Unmarshal into a string.
func BenchmarkUnquoteString(b *testing.B) {
	var text []byte
	for range 8 {
		text = append(text, "#__X_OP_\n"...)
	}
	text = append(text, "Player (1, 2) → boxes [(3, 4)]. You can push but not pull boxes. (reward: -0.1)"...)
	lit, err := json.Marshal(string(text))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("unquoteString", func(b *testing.B) {
		b.SetBytes(int64(len(lit)))
		for b.Loop() {
			if _, err := unquoteString(lit); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(lit)))
		for b.Loop() {
			var s string
			if err := json.Unmarshal(lit, &s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
