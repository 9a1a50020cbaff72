package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"bagen-data/internal/openai"
	"bagen-data/rollout"
)

// chatRequest is the part of a Chat Completions request the server reads.
// Other keys (max_tokens, top_p, tools, …) are accepted and ignored: the
// answer is one short text either way.
type chatRequest struct {
	Model        string
	Messages     []rollout.Message
	Stream       bool
	IncludeUsage bool // stream_options.include_usage
	Temperature  float64
	Seed         *uint64
}

// MaxTemperature is the largest temperature accepted, as OpenAI's API.
const MaxTemperature = 2

// decodeChat reads a request body. Every error is a *FieldError naming
// the field ("body" for the whole).
func decodeChat(body []byte) (chatRequest, error) {
	var req chatRequest
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return req, &FieldError{Path: "body", Err: fmt.Errorf("want a JSON object: %s", jsonProblem(body, err))}
	}
	var errs []error
	field := func(name string, dst any) bool {
		raw, ok := top[name]
		if !ok || bytes.Equal(raw, []byte("null")) {
			return false
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			errs = append(errs, &FieldError{Path: name, Err: fmt.Errorf("want %s, got %s", want(dst), kindOf(raw))})
			return false
		}
		return true
	}
	if !field("model", &req.Model) && len(errs) == 0 {
		errs = append(errs, &FieldError{Path: "model", Err: errors.New("required")})
	}
	var msgs []json.RawMessage
	if field("messages", &msgs) {
		req.Messages, errs = decodeMessages(msgs, errs)
	} else if raw, ok := top["messages"]; !ok || bytes.Equal(raw, []byte("null")) {
		errs = append(errs, &FieldError{Path: "messages", Err: errors.New("required")})
	}
	field("stream", &req.Stream)
	var opts openai.StreamOptions
	if field("stream_options", &opts) {
		req.IncludeUsage = opts.IncludeUsage
	}
	var temp float64
	if field("temperature", &temp) {
		if !(temp >= 0 && temp <= MaxTemperature) {
			errs = append(errs, &FieldError{Path: "temperature", Err: fmt.Errorf("want 0 to %d, got %v", MaxTemperature, temp)})
		}
		req.Temperature = temp
	}
	var seed int64
	if field("seed", &seed) {
		u := uint64(seed)
		req.Seed = &u
	}
	var n int64
	if field("n", &n) && n != 1 {
		errs = append(errs, &FieldError{Path: "n", Err: fmt.Errorf("want 1 (one answer per request), got %d", n)})
	}
	if len(errs) > 0 {
		return req, errs[0]
	}
	return req, nil
}

// decodeMessages reads each message: a role and a content that is a
// string or an array of text parts (joined with newlines, as vLLM does).
func decodeMessages(raws []json.RawMessage, errs []error) ([]rollout.Message, []error) {
	if len(raws) == 0 {
		return nil, append(errs, &FieldError{Path: "messages", Err: errors.New("empty")})
	}
	out := make([]rollout.Message, len(raws))
	for i, raw := range raws {
		path := "messages[" + strconv.Itoa(i) + "]"
		var m struct {
			Role    *string         `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			errs = append(errs, messageError(path, raw, err))
			continue
		}
		switch {
		case m.Role == nil:
			errs = append(errs, &FieldError{Path: path + ".role", Err: errors.New("required")})
			continue
		case *m.Role != "system" && *m.Role != "user" && *m.Role != "assistant":
			errs = append(errs, &FieldError{Path: path + ".role", Err: fmt.Errorf(`want "system", "user" or "assistant", got %q`, *m.Role)})
			continue
		}
		text, err := decodeContent(path+".content", m.Content)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[i] = rollout.Message{Role: *m.Role, Content: text}
	}
	return out, errs
}

// messageError names the part of a message that has the wrong type.
func messageError(path string, raw json.RawMessage, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return &FieldError{Path: path + "." + te.Field, Err: fmt.Errorf("want %s, got %s", te.Type, te.Value)}
	}
	return &FieldError{Path: path, Err: fmt.Errorf("want an object, got %s", kindOf(raw))}
}

// decodeContent reads a message's content.
func decodeContent(path string, raw json.RawMessage) (string, error) {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", &FieldError{Path: path, Err: errors.New("required")}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []openai.ContentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", &FieldError{Path: path, Err: fmt.Errorf("want a string or an array of text parts, got %s", kindOf(raw))}
	}
	texts := make([]string, len(parts))
	for j, p := range parts {
		pp := path + "[" + strconv.Itoa(j) + "]"
		switch {
		case p.Type != "text":
			return "", &FieldError{Path: pp + ".type", Err: errors.New(`want "text": the estimator reads text only`)}
		case p.Text == nil:
			return "", &FieldError{Path: pp + ".text", Err: errors.New("required")}
		}
		texts[j] = *p.Text
	}
	return strings.Join(texts, "\n"), nil
}

// want describes the JSON a Go destination takes.
func want(dst any) string {
	switch dst.(type) {
	case *string:
		return "a string"
	case *bool:
		return "true or false"
	case *float64:
		return "a number"
	case *int64:
		return "a 64-bit integer"
	case *[]json.RawMessage:
		return "an array"
	}
	return "an object"
}

// kindOf names the JSON value raw holds.
func kindOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil && f == math.Trunc(f) {
		return "the number " + string(raw)
	}
	return "a number"
}

// jsonProblem says why body is not a JSON object.
func jsonProblem(body []byte, err error) string {
	var se *json.SyntaxError
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		return "empty body"
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at byte %d: %v", se.Offset, se)
	case err == nil:
		return "got null"
	}
	return "got " + kindOf(body)
}
