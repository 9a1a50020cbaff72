package server

import (
	"context"
	"errors"
	"net/http"

	"bagen-data/grpo"
	"bagen-data/internal/httpd"
	"bagen-data/probes"
)

// Sentinels classify request failures; status maps them to HTTP codes.
var (
	// ErrBadRequest is wrapped by errors about a request that is not the
	// route's JSON shape.
	ErrBadRequest = httpd.ErrBadRequest
	// ErrUnknownModel: the request names a model the server does not serve.
	ErrUnknownModel = errors.New("model not found")
	// ErrMethod: the route exists but not for this method.
	ErrMethod = errors.New("method not allowed")
	// ErrNotFound: no route has this path.
	ErrNotFound = errors.New("not found")
	// ErrConfig is wrapped by Config validation errors.
	ErrConfig = errors.New("invalid server config")
)

// FieldError is a request field that cannot be read: Path names it as in
// "messages[3].content" or "temperature".
type FieldError struct {
	Path string
	Err  error
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Err.Error() }

// Unwrap returns ErrBadRequest and the cause.
func (e *FieldError) Unwrap() []error { return []error{ErrBadRequest, e.Err} }

// apiError is an error as an OpenAI-compatible server answers it:
// {"error": {"message", "type", "param", "code"}}.
type apiError struct {
	status  int
	message string
	typ     string // invalid_request_error, not_found_error, server_error, …
	param   string // the field at fault, if any
	code    string // a machine-readable code, if any
}

// classify maps an error to its status and OpenAI error. Anything a client
// can send maps to a 4xx; Ollama failing is a 503; only failures of the
// server itself are 500.
func classify(err error) apiError {
	e := apiError{message: err.Error()}
	var fe *FieldError
	var pe *probes.PromptError
	var perr *httpd.ProtocolError
	switch {
	case errors.As(err, &perr):
		e.status, e.typ = perr.Code, "invalid_request_error"
	case errors.As(err, &pe):
		e.status, e.typ, e.param, e.code = http.StatusBadRequest, "invalid_request_error", pe.Field, "not_a_budget_probe"
	case errors.As(err, &fe):
		e.status, e.typ, e.param = http.StatusBadRequest, "invalid_request_error", fe.Path
	case errors.Is(err, httpd.ErrTooLarge):
		e.status, e.typ = http.StatusRequestEntityTooLarge, "invalid_request_error"
	case errors.Is(err, ErrBadRequest):
		e.status, e.typ = http.StatusBadRequest, "invalid_request_error"
	case errors.Is(err, ErrUnknownModel):
		e.status, e.typ, e.param, e.code = http.StatusNotFound, "invalid_request_error", "model", "model_not_found"
	case errors.Is(err, ErrMethod):
		e.status, e.typ = http.StatusMethodNotAllowed, "invalid_request_error"
	case errors.Is(err, ErrNotFound):
		e.status, e.typ = http.StatusNotFound, "not_found_error"
	case errors.Is(err, httpd.ErrDraining):
		e.status, e.typ = http.StatusServiceUnavailable, "server_error"
	case errors.Is(err, grpo.ErrUnavailable):
		e.status, e.typ, e.code = http.StatusServiceUnavailable, "server_error", "ollama_unavailable"
	case errors.Is(err, context.Canceled):
		e.status, e.typ = 499, "server_error" // the client went away; nobody reads it
	default:
		e.status, e.typ = http.StatusInternalServerError, "server_error"
	}
	return e
}

// appendJSON appends e's body.
func (e apiError) appendJSON(b []byte) []byte {
	b = append(b, `{"error":{"message":`...)
	b = httpd.AppendString(b, e.message)
	b = append(b, `,"type":`...)
	b = httpd.AppendString(b, e.typ)
	b = append(b, `,"param":`...)
	b = appendOptional(b, e.param)
	b = append(b, `,"code":`...)
	b = appendOptional(b, e.code)
	return append(b, "}}"...)
}

func appendOptional(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return httpd.AppendString(b, s)
}
