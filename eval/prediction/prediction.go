// Package prediction owns the predictions file — JSONL, one line per probe,
// {"custom_id": "...", "response": "..."} plus what the server reported —
// and the clients that fill it: a model served by Ollama (its native
// /api/chat) or any OpenAI-compatible Chat Completions endpoint (vLLM,
// SGLang, llama.cpp, hosted APIs). Every client of a remote model,
// grpo's embedding encoder included, retries through one policy, Retry.
//
// The file is a ledger: answers are appended as they arrive (Log), so an
// interrupted run resumes where it stopped and never records a probe twice.
// Set applies the file's rules (see NewSet) and is what eval's join reads.
package prediction

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Prediction is one line of a predictions file. A line is an answer (it
// has "response") or a failure (it has "error" and no "response": the
// probe's retries ran out; a later run asks it again).
type Prediction struct {
	CustomID string `json:"custom_id"`
	Response string `json:"response"`
	// Reasoning is the reasoning text the server returned apart from the
	// answer (reasoning_content, reasoning or Ollama's thinking).
	Reasoning string `json:"reasoning,omitempty"`
	// FinishReason is why generation stopped, as the server said: "stop",
	// "length" (cut at the token cap), …
	FinishReason string `json:"finish_reason,omitempty"`
	// Usage is the token spend the server reported.
	Usage *Usage `json:"usage,omitempty"`
	// LatencyMS is the wall time of the request that answered, retries
	// excluded, in milliseconds.
	LatencyMS float64 `json:"latency_ms,omitempty"`
	// Attempts is how many requests the probe took (1 when the first
	// answered); omitted when unknown.
	Attempts int `json:"attempts,omitempty"`
	// Model names the model asked (--model, --ollama); a log refuses to
	// mix models (see OpenLog). Reported is the model id the server
	// reported in its answer (e.g. a dated version of Model).
	Model    string `json:"model,omitempty"`
	Reported string `json:"reported_model,omitempty"`
	// Incomplete says the server sent the answer without marking it done
	// (Ollama's done flag); the text is kept and scored as it is.
	Incomplete bool `json:"incomplete,omitempty"`
	// Error, on a failure line, says why the probe has no answer.
	Error string `json:"error,omitempty"`
	// Key identifies the request an answer answers (RequestKey: model,
	// sampling and prompt); a rerun reuses the answer only for a probe
	// with the same key. Files written by hand may leave it out.
	Key string `json:"request_sha256,omitempty"`

	// Line is the 1-based line the prediction was read from (0 when it
	// was not read from a file).
	Line int `json:"-"`
}

// Failed reports whether p is a failure line, not an answer.
func (p Prediction) Failed() bool { return p.Error != "" }

// Cut reports whether the answer was cut off: the server stopped at the
// token cap or did not mark the answer done.
func (p Prediction) Cut() bool { return p.Incomplete || p.FinishReason == "length" }

// Usage is a request's token spend.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	// ReasoningTokens is the part of CompletionTokens spent reasoning,
	// when the server reports it.
	ReasoningTokens int64 `json:"reasoning_tokens,omitempty"`
	// CachedTokens is the part of PromptTokens served from the server's
	// prompt cache, when it reports it.
	CachedTokens int64 `json:"cached_tokens,omitempty"`
}

// maxLine bounds one JSONL line (a response is at most a few thousand
// tokens; 16 MiB leaves room for anything sane, reasoning included).
const maxLine = 16 << 20

// Read reads JSONL predictions, answers and failure lines alike, in file
// order. Blank lines are skipped; a malformed line is a *LineError naming
// name and the 1-based line.
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
		p.Line = line
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

var errBlank = errors.New("blank line")

// parseLine decodes one line: an object with a non-empty string custom_id
// and either a string response or a non-empty error.
func parseLine(b []byte) (Prediction, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return Prediction{}, errBlank
	}
	var raw struct {
		Prediction
		CustomID *string `json:"custom_id"`
		Response *string `json:"response"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return Prediction{}, fmt.Errorf("%w: %w", ErrSyntax, err)
	}
	p := raw.Prediction
	switch {
	case raw.CustomID == nil || *raw.CustomID == "":
		return Prediction{}, fmt.Errorf("custom_id: %w", ErrMissing)
	case raw.Response == nil && p.Error == "":
		return Prediction{}, fmt.Errorf("response: %w (a line needs a response, or an error for a probe that got none)", ErrMissing)
	case raw.Response != nil && p.Error != "":
		return Prediction{}, fmt.Errorf("error: %w", ErrBoth)
	}
	p.CustomID = *raw.CustomID
	if raw.Response != nil {
		p.Response = *raw.Response
	}
	return p, nil
}

// Marshal encodes p as one JSONL line, newline included. A failure line
// has no "response" key.
func Marshal(p Prediction) []byte {
	var b []byte
	var err error
	if p.Failed() {
		b, err = json.Marshal(failureLine{p.CustomID, p.Error, p.Attempts, p.Model})
	} else {
		b, err = json.Marshal(p)
	}
	if err != nil {
		panic("prediction: marshal: " + err.Error())
	}
	return append(b, '\n')
}

type failureLine struct {
	CustomID string `json:"custom_id"`
	Error    string `json:"error"`
	Attempts int    `json:"attempts,omitempty"`
	Model    string `json:"model,omitempty"`
}

// Write writes preds as JSONL, one Marshal line each, in order.
func Write(w io.Writer, preds []Prediction) error {
	bw := bufio.NewWriter(w)
	for _, p := range preds {
		if _, err := bw.Write(Marshal(p)); err != nil {
			return err
		}
	}
	return bw.Flush()
}
