package server

import (
	"errors"
	"testing"
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
