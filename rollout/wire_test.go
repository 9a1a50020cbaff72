package rollout

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ledgerItem is a ledger message as version 1 of the ledger declared it,
// a struct of its own; GuardItems must write and read the same bytes.
type ledgerItem struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

type ledgerSides struct {
	Input  []ledgerItem `json:"input"`
	Output []ledgerItem `json:"output"`
}

type itemSides struct {
	Input  GuardItems `json:"input"`
	Output GuardItems `json:"output"`
}

func TestGuardItemsKeepTheLedgerSpelling(t *testing.T) {
	texts := []string{"", "plain", "a <b> & c", "line\nbreak \"quoted\" \\", "日本語 \u2028 \x7f", "<tool_call>\n{\"name\": \"x\"}\n</tool_call>"}
	var old ledgerSides
	var items itemSides
	for i, s := range texts {
		role := []string{"system", "user", "assistant", "tool"}[i%4]
		old.Input = append(old.Input, ledgerItem{Role: role, Text: s})
		items.Input = append(items.Input, Message{Role: role, Content: s, Tokens: int64(i)})
	}
	old.Output, items.Output = []ledgerItem{}, GuardItems{}
	sameJSON(t, items, old)
	if got, want := must(json.Marshal(itemSides{})), must(json.Marshal(ledgerSides{})); !bytes.Equal(got, want) {
		t.Errorf("nil sides: got %s, want %s", got, want)
	}
	var back itemSides
	if err := json.Unmarshal(must(json.Marshal(old)), &back); err != nil {
		t.Fatal(err)
	}
	for i := range items.Input {
		items.Input[i].Tokens = 0 // the ledger does not carry counts
	}
	if diff := cmp.Diff(items, back); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
}

func TestGuardItemsErrorsNameTheField(t *testing.T) {
	tests := []struct{ name, data, field, want string }{
		{"not an array", `{"input":"x"}`, "input", "want an array, got JSON string"},
		{"role not a string", `{"input":[{"role":1,"text":"a"}]}`, "input.role", "want a string, got JSON number"},
		{"text not a string", `{"output":[{"role":"user","text":[]}]}`, "output.text", "want a string, got JSON array"},
	}
	for _, tt := range tests {
		var old ledgerSides
		oldErr := json.Unmarshal([]byte(tt.data), &old)
		var got itemSides
		err := json.Unmarshal([]byte(tt.data), &got)
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			t.Fatalf("%s: got %v, want a type error", tt.name, err)
		}
		if te.Field != tt.field || JSONCause(err).Error() != tt.want {
			t.Errorf("%s: got field %q, %v; want %q, %s", tt.name, te.Field, JSONCause(err), tt.field, tt.want)
		}
		if JSONCause(err).Error() != JSONCause(oldErr).Error() || err2field(err) != err2field(oldErr) {
			t.Errorf("%s: got %s: %v, the old items gave %s: %v", tt.name, err2field(err), JSONCause(err), err2field(oldErr), JSONCause(oldErr))
		}
	}
}

// sameJSON checks that got and want encode to the same bytes, with and
// without HTML escaping.
func sameJSON(t *testing.T, got, want any) {
	t.Helper()
	for _, escape := range []bool{true, false} {
		enc := func(v any) []byte {
			var buf bytes.Buffer
			e := json.NewEncoder(&buf)
			e.SetEscapeHTML(escape)
			if err := e.Encode(v); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}
		if g, w := enc(got), enc(want); !bytes.Equal(g, w) {
			t.Errorf("escape %v: got %s, want %s", escape, g, w)
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// canonItem is a canonical JSONL message as the canonical writer and the
// fixtures declared it before CanonicalMessages.
type canonItem struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	Tokens  *int64 `json:"tokens,omitempty"`
}

func TestCanonicalMessagesKeepTheCanonicalSpelling(t *testing.T) {
	msgs := CanonicalMessages{
		{Role: "system", Content: "a <b> & c", Tokens: 5},
		{Role: "user", Content: "no count \u2028", Tokens: Unrecorded},
		{Role: "assistant", Content: "", Tokens: 0},
	}
	old := []canonItem{{"system", "a <b> & c", Tokens(5)}, {"user", "no count \u2028", nil}, {"assistant", "", Tokens(0)}}
	sameJSON(t, msgs, old)
	var back CanonicalMessages
	if err := json.Unmarshal(must(json.Marshal(old)), &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(msgs, back); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
	line, err := MarshalCanonical(Trajectory{ID: "empty"})
	if err != nil || !bytes.Contains(line, []byte(`"messages":[]`)) {
		t.Errorf("no messages: got %s, %v; want \"messages\":[]", line, err)
	}
}

// FuzzMessageSpellings reads arbitrary JSON as both spellings: what one
// reads, it writes back and reads again as the same messages.
func FuzzMessageSpellings(f *testing.F) {
	f.Add([]byte(`[{"role":"user","text":"a <b>"},{"role":"tool","text":""}]`))
	f.Add([]byte(`[{"role":"user","content":"u","tokens":3},{"role":"assistant","content":"a"}]`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var g GuardItems
		if json.Unmarshal(data, &g) == nil {
			var back GuardItems
			if err := json.Unmarshal(must(json.Marshal(g)), &back); err != nil || !cmp.Equal(g, back) {
				t.Fatalf("ledger items %v: read back %v, %v", g, back, err)
			}
		}
		var c CanonicalMessages
		if json.Unmarshal(data, &c) == nil {
			var back CanonicalMessages
			if err := json.Unmarshal(must(json.Marshal(c)), &back); err != nil || !cmp.Equal(c, back) {
				t.Fatalf("canonical messages %v: read back %v, %v", c, back, err)
			}
		}
	})
}
