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

// The fast path is exact for the literals it accepts.
func TestUnquoteFastPath(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{`"Turn 1.\nok"`, "Turn 1.\nok", true},
		{`"caf\u00e9"`, "café", true},
		{`"\ud83d\ude42"`, "", false},
		{"\"\xff\"", "", false},
		{`"a\"b"`, `a"b`, true},
	} {
		got, ok := unquoteFast([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("unquoteFast(%s) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
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
