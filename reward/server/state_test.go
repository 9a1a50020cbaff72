package server

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"bagen-data/internal/httpd"
)

func TestResponse(t *testing.T) {
	tests := []struct {
		name          string
		query, prompt string // JSON string contents as written
		hasPrompt     bool
		want          string
	}{
		{"prompt prefix", `P\n<answer>[est_low, est_high]</answer>\nA: <answer>[1, 2]</answer><|im_end|>`, `P\n<answer>[est_low, est_high]</answer>\nA: `, true, "<answer>[1, 2]</answer>"},
		{"prefix once decoded only", `\u003canswer\u003e[9, 9]\u003c/answer\u003eR<|im_end|>`, `<answer>[9, 9]</answer>`, true, "R"},
		{"prompt not a prefix: last assistant marker", `x<|im_start|>assistant\n<answer>[est_low, est_high]</answer><|im_start|>assistant\nR<|endoftext|>`, `y`, true, "\nR"},
		{"no prompt: last assistant marker", `a<|im_start|>assistant\nR`, ``, false, "\nR"},
		{"empty prompt is no prefix", `a<|im_start|>assistant\nR`, ``, true, "\nR"},
		{"no marker: whole query", `<answer>[1, 2]</answer>`, ``, false, "<answer>[1, 2]</answer>"},
		{"end tokens and white space stripped", `R <|im_end|>\n<|endoftext|>\n`, ``, false, "R"},
		{"end token inside kept", `R<|im_end|>S`, ``, false, "R<|im_end|>S"},
		{"high surrogate at the prompt's end", `P\ud83d\ude00R`, `P\ud83d`, true, "P😀R"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := getState()
			defer putState(st)
			q := jstr{[]byte(tt.query), true}
			p := jstr{[]byte(tt.prompt), true}
			if got := string(st.response(q, p, tt.hasPrompt)); got != tt.want {
				t.Errorf("response(%q, %q) = %q, want %q", tt.query, tt.prompt, got, tt.want)
			}
		})
	}
}

func TestAppendError(t *testing.T) {
	err := &FieldError{Path: "labels[2]", Err: errors.New("bad \"label\"\n\x01\xff")}
	want := `{"error":"labels[2]: bad \"label\"\n\u0001\ufffd"}`
	if got := string(appendError(nil, err)); got != want {
		t.Errorf("appendError = %s, want %s", got, want)
	}
}

func TestStatus(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{&FieldError{Path: "x", Err: errMissing}, 400},
		{ErrBadRequest, 400},
		{ErrTooLarge, 413},
		{ErrMethod, 405},
		{ErrNotFound, 404},
		{errors.New("disk on fire"), 500},
	}
	for _, tt := range tests {
		if got := status(tt.err); got != tt.want {
			t.Errorf("status(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// FuzzHandler feeds arbitrary bodies to every scoring route: the answer is
// always 200, 400 or 413 with a JSON body, never a 500 or a panic.
func FuzzHandler(f *testing.F) {
	for _, s := range []string{
		`{"query":["<|im_start|>assistant\n<answer>[1, 2]</answer>"],"prompts":["p"],"labels":["2"]}`,
		`{"prompt":"p","response":"<answer>impossible</answer>","label":"impossible"}`,
		`{"items":[{"response":"r","remaining_tokens":3,"is_possible":true},{"response":"r","label":"{\"is_possible\":true,\"time_weeks\":1,\"warehouse_item_weeks\":2,\"cumulative_cost_usd\":3}"}]}`,
		`{"items":[{"response":"r","is_possible":true,"time_weeks":1}]}`,
	} {
		f.Add(s)
	}
	h, err := New(Config{Limits: httpd.Limits{MaxBody: 1 << 16}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/get_reward", "/slime", "/v1/rewards"} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(body)))
			switch rec.Code {
			case 200, 400, 413:
			default:
				t.Fatalf("POST %s %q = %d %s", path, body, rec.Code, rec.Body)
			}
			if !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("POST %s %q: response is not JSON: %s", path, body, rec.Body)
			}
		}
	})
}
