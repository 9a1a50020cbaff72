package server

import (
	"context"
	"errors"
	"net/http"

	"bagen-data/grpo"
	"bagen-data/internal/httpd"
	"bagen-data/internal/openai"
	"bagen-data/probes"
)

// Sentinels classify request failures; classify maps them, and httpd's
// (ErrMethod, ErrNotFound, ErrConfig, …), to HTTP codes.
var (
	// ErrBadRequest is wrapped by errors about a request that is not the
	// route's JSON shape.
	ErrBadRequest = httpd.ErrBadRequest
	// ErrUnknownModel: the request names a model the server does not serve.
	ErrUnknownModel = errors.New("model not found")
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

// apiError is an error as an OpenAI-compatible server answers it, with
// its status.
type apiError struct {
	status int
	openai.Error
}

// classify maps an error to its status and OpenAI error. Anything a client
// can send maps to a 4xx; Ollama failing is a 503; only failures of the
// server itself are 500.
func classify(err error) apiError {
	e := apiError{Error: openai.Error{Message: err.Error()}}
	var fe *FieldError
	var pe *probes.PromptError
	var perr *httpd.ProtocolError
	switch {
	case errors.As(err, &perr):
		e.status, e.Type = perr.Code, "invalid_request_error"
	case errors.As(err, &pe):
		e.status, e.Type, e.Param, e.Code = http.StatusBadRequest, "invalid_request_error", pe.Field, "not_a_budget_probe"
	case errors.As(err, &fe):
		e.status, e.Type, e.Param = http.StatusBadRequest, "invalid_request_error", fe.Path
	case errors.Is(err, httpd.ErrTooLarge):
		e.status, e.Type = http.StatusRequestEntityTooLarge, "invalid_request_error"
	case errors.Is(err, ErrBadRequest):
		e.status, e.Type = http.StatusBadRequest, "invalid_request_error"
	case errors.Is(err, ErrUnknownModel):
		e.status, e.Type, e.Param, e.Code = http.StatusNotFound, "invalid_request_error", "model", "model_not_found"
	case errors.Is(err, httpd.ErrMethod):
		e.status, e.Type = http.StatusMethodNotAllowed, "invalid_request_error"
	case errors.Is(err, httpd.ErrNotFound):
		e.status, e.Type = http.StatusNotFound, "not_found_error"
	case errors.Is(err, httpd.ErrDraining):
		e.status, e.Type = http.StatusServiceUnavailable, "server_error"
	case errors.Is(err, grpo.ErrUnavailable):
		e.status, e.Type, e.Code = http.StatusServiceUnavailable, "server_error", "ollama_unavailable"
	case errors.Is(err, context.Canceled):
		e.status, e.Type = 499, "server_error" // the client went away; nobody reads it
	default:
		e.status, e.Type = http.StatusInternalServerError, "server_error"
	}
	return e
}
