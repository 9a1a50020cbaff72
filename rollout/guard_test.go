package rollout

import (
	"strings"
	"testing"
)

const ledgerHead = `{"bagen_guard":1,"event":"session","session":"s-1","policy":"log","budget":0,"format":"chat"}`

func TestGuardLedgerErrors(t *testing.T) {
	call := func(usage string) string {
		return `{"event":"call","session":"s-1","call":1,"turn":1,"status":200,"tools":false,"input":[{"role":"user","text":"u"}],"output":[{"role":"assistant","text":"a"}],"usage":` + usage + `}`
	}
	tests := []struct {
		name, data, want string
	}{
		{"no turn", ledgerHead, `l.jsonl: session "s-1" has no answered call`},
		{"not first", call(`null`), `l.jsonl:1: event: want "session" first, got "call"`},
		{"bad event", ledgerHead + "\n" + `{"event":"dance"}` + "\n" + call("null"), `l.jsonl:2: event: want session, call, estimate, forecast, warn or stop, got "dance"`},
		{"negative input", ledgerHead + "\n" + call(`{"input":-5,"output":1,"reasoning":null,"cached":0}`), "l.jsonl:2: usage.input: want a count ≥ 0 (input and output may be -1, unrecorded)"},
		{"negative reasoning", ledgerHead + "\n" + call(`{"input":5,"output":1,"reasoning":-1,"cached":0}`), "l.jsonl:2: usage.reasoning: want a count ≥ 0 (input and output may be -1, unrecorded)"},
		{"bad json", ledgerHead + "\n" + `{"event":"call",` + "\n" + call("null"), "l.jsonl:2: "},
	}
	for _, tt := range tests {
		_, err := Decode(Record{Pos: Position{File: "l.jsonl", Index: -1}, Data: []byte(tt.data), Format: GuardLedger})
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.want)
		}
	}
	// A last line cut by a crash is left out; the calls before it count.
	tr, err := Decode(Record{Pos: Position{File: "l.jsonl", Index: -1}, Data: []byte(ledgerHead + "\n" + call(`{"input":5,"output":1,"reasoning":null,"cached":0}`) + "\n" + `{"event":"ca`), Format: GuardLedger})
	if err != nil || len(tr.API) != 1 || tr.API[0].Input != 5 || tr.ID != "s-1" {
		t.Errorf("cut last line: %+v, %v", tr.API, err)
	}
}

func FuzzGuardLedger(f *testing.F) {
	f.Add([]byte(ledgerHead + "\n" + `{"event":"call","turn":1,"tools":true,"input":[{"role":"user","text":"u"}],"output":[{"role":"assistant","text":"a"}],"usage":{"input":3,"output":2,"reasoning":1,"cached":0}}` + "\n" + `{"event":"estimate","after_turn":1,"verdict":"impossible","interval":null}` + "\n" + `{"event":"stop","after_turn":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Decode(Record{Pos: Position{File: "f", Index: -1}, Data: data, Format: GuardLedger})
		if err != nil {
			return
		}
		if len(tr.Messages) == 0 || tr.ID == "" || tr.Extra.Guard == nil {
			t.Fatalf("decoded %+v with no messages, id or guard run", tr)
		}
		for i, a := range tr.API {
			if a.Input < Unrecorded || a.Output < Unrecorded || a.Reasoning != nil && *a.Reasoning < 0 || a.Cached < 0 {
				t.Fatalf("API[%d] = %+v", i, a)
			}
		}
		if _, err := MarshalCanonical(tr); err != nil {
			t.Fatal(err)
		}
	})
}
