package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"bagen-data/internal/httpd"
	"bagen-data/internal/jsonlex"
	"bagen-data/reward"
)

// Sentinels classify request failures; status maps them to HTTP codes.
var (
	// ErrBadRequest is wrapped by errors about a request body that is not
	// the route's JSON shape.
	ErrBadRequest = httpd.ErrBadRequest
	// ErrTooLarge: the body exceeds Config.MaxBody.
	ErrTooLarge = httpd.ErrTooLarge
	// ErrMethod: the route exists but not for this method.
	ErrMethod = httpd.ErrMethod
	// ErrNotFound: no route has this path.
	ErrNotFound = httpd.ErrNotFound
	// ErrConfig is wrapped by Config validation errors.
	ErrConfig = httpd.ErrConfig
	// ErrDraining: /healthz while the server drains (503).
	ErrDraining = httpd.ErrDraining
	// ErrDrainTimeout is wrapped by Serve's error when connections were
	// still busy at the end of Config.DrainTimeout and were closed.
	ErrDrainTimeout = httpd.ErrDrainTimeout
)

// Hints for a request without its label: each trainer sends the label
// column only when told which column holds it.
const (
	openRLHFLabelHint = "start OpenRLHF with --data.label_key label (v0.10.2 and later; --label_key label before) so that it sends the label column"
	slimeLabelHint    = "start slime with --label-key label (and --rm-type remote_rm) so that it sends the label column"
)

// errNoLabel is a label the trainer did not send; hint says which flag
// sends it.
type errNoLabel struct{ what, hint string }

func (e errNoLabel) Error() string { return e.what + "; " + e.hint }

// FieldError is a request field that cannot be read: Path names the field
// and index, as in "labels[3]" or "items[0].remaining_tokens".
type FieldError struct {
	Path string
	Err  error
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *FieldError) Unwrap() error { return e.Err }

// status maps an error to its HTTP status code. Anything a client can send
// maps to a 4xx; only failures of the server itself are 500.
func status(err error) int {
	var fe *FieldError
	var mbe *http.MaxBytesError
	var pe *httpd.ProtocolError
	switch {
	case errors.As(err, &pe):
		return pe.Code
	case errors.Is(err, ErrDraining):
		return http.StatusServiceUnavailable
	case errors.As(err, &mbe), errors.Is(err, ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrMethod):
		return http.StatusMethodNotAllowed
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.As(err, &fe), errors.Is(err, ErrBadRequest),
		errors.Is(err, jsonlex.ErrSyntax), errors.Is(err, reward.ErrLabel):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// bodyError is a body the lexer stopped at: one that is not JSON says so
// with encoding/json's reason; one of the wrong shape keeps err.
func bodyError(body []byte, err error) *FieldError {
	var v any
	var se *json.SyntaxError
	if jerr := json.Unmarshal(body, &v); !errors.As(jerr, &se) {
		return &FieldError{Path: "body", Err: err}
	}
	msg := se.Error()
	if se.Offset >= int64(len(body)) && strings.Contains(msg, "in literal") {
		// encoding/json calls a cut literal ("nul") an invalid ' '.
		msg = "unexpected end of input"
	}
	return &FieldError{Path: "body", Err: fmt.Errorf("not valid JSON: offset %d: %s", se.Offset, msg)}
}
