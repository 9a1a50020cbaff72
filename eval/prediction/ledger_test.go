package prediction

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadLedger reads a guard ledger's estimates as predictions: ids are
// the probe ids, unestimated turns are failure lines, other events and a
// last line cut by a crash are skipped.
func TestReadLedger(t *testing.T) {
	const session = `{"bagen_guard":1,"event":"session","session":"s1","time":"t","policy":"log","budget":100,"format":"chat"}` + "\n"
	const call = `{"event":"call","session":"s1","time":"t","call":1,"turn":1,"format":"chat","stream":false,"status":200,"tools":true,"input":[],"output":[],"usage":null,"complete":true,"latency_ms":1}` + "\n"
	tests := []struct {
		name  string
		files map[string]string
		want  []Prediction
		err   string
	}{
		{"estimates", map[string]string{
			"s1.jsonl": session + call +
				`{"event":"estimate","session":"s1","time":"t","after_turn":1,"response":"<answer>[1, 2]</answer>","verdict":"interval","interval":[1,2],"estimator_input_tokens":700,"estimator_output_tokens":20,"latency_ms":3.5}` + "\n" +
				`{"event":"estimate","session":"s1","time":"t","after_turn":2,"response":"","verdict":"unestimated","interval":null,"error":"estimator down"}` + "\n" +
				`{"event":"stop","session":"s1","time":"t","after_turn":2,"reason":"budget","spent":120}` + "\n",
			"s0.jsonl": `{"bagen_guard":1,"event":"session","session":"s0","time":"t","policy":"log","budget":0,"format":"chat"}` + "\n" +
				`{"event":"estimate","session":"s0","time":"t","after_turn":3,"response":"maybe","verdict":"unparseable","interval":null}` + "\n" +
				`{"event":"estimate","session":"s0","ti`,
		}, []Prediction{
			{CustomID: "s0_probe_after_turn_3", Response: "maybe", Line: 2},
			{CustomID: "s1_probe_after_turn_1", Response: "<answer>[1, 2]</answer>", Usage: &Usage{PromptTokens: 700, CompletionTokens: 20}, LatencyMS: 3.5, Line: 3},
			{CustomID: "s1_probe_after_turn_2", Error: "estimator down", Line: 4},
		}, ""},
		{"empty", map[string]string{"notes.txt": "x"}, nil, ""},
		{"cut midway", map[string]string{"s1.jsonl": session + "{\n" + call}, nil, "s1.jsonl:2: not a JSON object: unexpected end of JSON input"},
		{"no session", map[string]string{"s1.jsonl": `{"event":"estimate","after_turn":1,"response":"x","verdict":"unparseable"}` + "\n"}, nil, "s1.jsonl:1: session: missing"},
		{"turn 0", map[string]string{"s1.jsonl": `{"event":"estimate","session":"s1","after_turn":0,"response":"x","verdict":"unparseable"}` + "\n"}, nil, "s1.jsonl:1: after_turn: want ≥ 1, got 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ReadLedger(dir)
			if tt.err != "" {
				var le *LineError
				if err == nil || err.Error() != filepath.Join(dir, tt.err) || !errors.As(err, &le) {
					t.Fatalf("ReadLedger: got error %v, want %s", err, filepath.Join(dir, tt.err))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ReadLedger (-want +got):\n%s", diff)
			}
			set, err := ReadFile(dir)
			if err != nil {
				t.Fatal(err)
			}
			if n := set.Answers() + set.Failures(); n != len(tt.want) {
				t.Errorf("ReadFile(dir): %d predictions, want %d", n, len(tt.want))
			}
		})
	}
}

// FuzzReadLedger: any session file reads as predictions with probe ids
// or fails with a *LineError; never a panic.
func FuzzReadLedger(f *testing.F) {
	f.Add([]byte(`{"bagen_guard":1,"event":"session","session":"s1"}` + "\n" +
		`{"event":"estimate","session":"s1","after_turn":1,"response":"<answer>[1, 2]</answer>","verdict":"interval","interval":[1,2],"estimator_input_tokens":7}` + "\n" +
		`{"event":"estimate","session":"s1","after_turn":2,"response":"","verdict":"unestimated","error":"down"}` + "\n"))
	f.Add([]byte(`{"event":"estimate","session":"s1","after_turn":0}` + "\n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "s.jsonl"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		preds, err := ReadLedger(dir)
		var le *LineError
		if err != nil && !errors.As(err, &le) {
			t.Fatalf("ReadLedger: %v is not a *LineError", err)
		}
		for _, p := range preds {
			if p.CustomID == "" || p.Line < 1 || (p.Failed() && p.Response != "") {
				t.Fatalf("ReadLedger: %+v", p)
			}
		}
	})
}
