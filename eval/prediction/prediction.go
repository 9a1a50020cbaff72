// Package prediction reads and writes model predictions for eval — JSONL
// lines {"custom_id": "...", "response": "..."} — and asks a model served
// by Ollama to answer probes, appending each answer to a log as it arrives
// so an interrupted run resumes where it stopped.
package prediction

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Prediction is one line of a predictions file.
type Prediction struct {
	CustomID string `json:"custom_id"`
	Response string `json:"response"`
	// Model names the model that answered, when known; a log refuses to
	// mix models.
	Model string `json:"model,omitempty"`
	// Incomplete says the server sent the answer without marking it done;
	// the text is kept and scored as it is (asking again would give the
	// same answer).
	Incomplete bool `json:"incomplete,omitempty"`
}

// maxLine bounds one JSONL line (a response is at most a few thousand
// tokens; 16 MiB leaves room for anything sane).
const maxLine = 16 << 20

// Read reads JSONL predictions. Blank lines are skipped; a malformed line is
// a *LineError naming name and the 1-based line.
func Read(r io.Reader, name string) ([]Prediction, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var out []Prediction
	for line := 1; sc.Scan(); line++ {
		p, err := parseLine(sc.Bytes())
		if errors.Is(err, errBlank) {
			continue
		}
		if err != nil {
			return nil, &LineError{File: name, Line: line, Err: err}
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

var errBlank = errors.New("blank line")

// parseLine decodes one line: an object with a non-empty string custom_id
// and a string response.
func parseLine(b []byte) (Prediction, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return Prediction{}, errBlank
	}
	var raw struct {
		CustomID   *string `json:"custom_id"`
		Response   *string `json:"response"`
		Model      string  `json:"model"`
		Incomplete bool    `json:"incomplete"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return Prediction{}, fmt.Errorf("%w: %w", ErrSyntax, err)
	}
	switch {
	case raw.CustomID == nil || *raw.CustomID == "":
		return Prediction{}, fmt.Errorf("custom_id: %w", ErrMissing)
	case raw.Response == nil:
		return Prediction{}, fmt.Errorf("response: %w", ErrMissing)
	}
	return Prediction{CustomID: *raw.CustomID, Response: *raw.Response, Model: raw.Model, Incomplete: raw.Incomplete}, nil
}

// Map indexes predictions by custom_id. A repeated id with the same
// response is kept once; with a different response it is a
// *DuplicateError.
func Map(preds []Prediction) (map[string]string, error) {
	out := make(map[string]string, len(preds))
	for _, p := range preds {
		if prev, ok := out[p.CustomID]; ok && prev != p.Response {
			return nil, &DuplicateError{CustomID: p.CustomID}
		}
		out[p.CustomID] = p.Response
	}
	return out, nil
}

// Marshal encodes p as one JSONL line, newline included.
func Marshal(p Prediction) []byte {
	b, err := json.Marshal(p)
	if err != nil {
		panic("prediction: marshal: " + err.Error())
	}
	return append(b, '\n')
}
