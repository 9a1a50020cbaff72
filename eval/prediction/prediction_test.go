package prediction

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRead(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Prediction
		wantErr string
	}{
		{"lines", `{"custom_id":"a","response":"<answer>impossible</answer>"}` + "\n\n" + `{"custom_id":"b","response":"","model":"m","extra":1}`,
			[]Prediction{{CustomID: "a", Response: "<answer>impossible</answer>"}, {CustomID: "b", Model: "m"}}, ""},
		{"empty", "", nil, ""},
		{"not json", `{"custom_id":"a","response":"x"}` + "\n{oops\n", nil,
			"preds.jsonl:2: not a JSON object: invalid character 'o' looking for beginning of object key string"},
		{"no id", `{"response":"x"}`, nil, "preds.jsonl:1: custom_id: missing"},
		{"empty id", `{"custom_id":"","response":"x"}`, nil, "preds.jsonl:1: custom_id: missing"},
		{"no response", `{"custom_id":"a"}`, nil, "preds.jsonl:1: response: missing"},
		{"response not a string", `{"custom_id":"a","response":3}`, nil,
			"preds.jsonl:1: not a JSON object: json: cannot unmarshal number into Go struct field .response of type string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Read(strings.NewReader(tt.in), "preds.jsonl")
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Read(%q): got error %v, want %q", tt.in, err, tt.wantErr)
				}
				var le *LineError
				if !errors.As(err, &le) {
					t.Errorf("error %v is not a *LineError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Read(%q) (-want +got):\n%s", tt.in, d)
			}
		})
	}
}

func TestReadTestdata(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "preds.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := Read(f, "preds.jsonl")
	if err != nil || len(got) != 3 || got[1].Model != "qwen2.5:7b" || !got[2].Incomplete {
		t.Errorf("got %+v, %v; want 3 predictions, the second by qwen2.5:7b, the third incomplete", got, err)
	}
}

func TestMap(t *testing.T) {
	m, err := Map([]Prediction{{CustomID: "a", Response: "x"}, {CustomID: "a", Response: "x"}, {CustomID: "b", Response: "y"}})
	if err != nil || len(m) != 2 || m["a"] != "x" {
		t.Errorf("got %v, %v; want a→x, b→y", m, err)
	}
	_, err = Map([]Prediction{{CustomID: "a", Response: "x"}, {CustomID: "a", Response: "z"}})
	if !errors.Is(err, ErrDuplicate) || err.Error() != `custom_id "a": two different responses` {
		t.Errorf("got %v, want the duplicate error", err)
	}
}

func FuzzRead(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join("testdata", "preds.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"custom_id":"a","response":"<answer>[1, 2]</answer>"}` + "\n"))
	f.Add([]byte("\n\n{\"custom_id\":\"\\u00e9\",\"response\":\"\"}"))
	f.Add([]byte(`{"custom_id":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		preds, err := Read(strings.NewReader(string(data)), "f")
		if err != nil {
			return
		}
		// What was read writes back and reads the same.
		var b strings.Builder
		for _, p := range preds {
			b.Write(Marshal(p))
		}
		again, err := Read(strings.NewReader(b.String()), "f")
		if err != nil || !cmp.Equal(preds, again) {
			t.Fatalf("round trip: %v, %v -> %v", preds, err, again)
		}
	})
}

func TestLogResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "preds.jsonl")
	l, preds, err := OpenLog(path, "m1")
	if err != nil || len(preds) != 0 {
		t.Fatalf("new log: %v, %v", preds, err)
	}
	for _, id := range []string{"a", "b"} {
		if err := l.Append(Prediction{CustomID: id, Response: "r" + id}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	// The process dies while writing a third line.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"custom_id":"c","resp`)
	f.Close()

	l, preds, err = OpenLog(path, "m1")
	if err != nil {
		t.Fatal(err)
	}
	want := []Prediction{{CustomID: "a", Response: "ra", Model: "m1"}, {CustomID: "b", Response: "rb", Model: "m1"}}
	if d := cmp.Diff(want, preds); d != "" {
		t.Errorf("reopened (-want +got):\n%s", d)
	}
	if !l.Has("a") || l.Has("c") {
		t.Errorf("Has: a %t, c %t; want true, false", l.Has("a"), l.Has("c"))
	}
	l.Append(Prediction{CustomID: "c", Response: "rc"})
	l.Close()
	data, _ := os.ReadFile(path)
	wantFile := `{"custom_id":"a","response":"ra","model":"m1"}` + "\n" +
		`{"custom_id":"b","response":"rb","model":"m1"}` + "\n" +
		`{"custom_id":"c","response":"rc","model":"m1"}` + "\n"
	if string(data) != wantFile {
		t.Errorf("file:\n%s\nwant:\n%s", data, wantFile)
	}

	if _, _, err := OpenLog(path, "m2"); !errors.Is(err, ErrModel) {
		t.Errorf("other model: got %v, want ErrModel", err)
	}
}

func TestLogKeepsCompleteLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "preds.jsonl")
	os.WriteFile(path, []byte(`{"custom_id":"a","response":"x"}`), 0o644)
	l, preds, err := OpenLog(path, "")
	if err != nil || len(preds) != 1 {
		t.Fatalf("got %v, %v; want the one line", preds, err)
	}
	l.Append(Prediction{CustomID: "b", Response: "y"})
	l.Close()
	data, _ := os.ReadFile(path)
	if want := `{"custom_id":"a","response":"x"}` + "\n" + `{"custom_id":"b","response":"y"}` + "\n"; string(data) != want {
		t.Errorf("file: got %q, want %q", data, want)
	}
}
