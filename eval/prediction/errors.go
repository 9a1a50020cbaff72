package prediction

import (
	"errors"
	"fmt"
)

// ErrSyntax means a predictions line is not a JSON object.
var ErrSyntax = errors.New("not a JSON object")

// ErrMissing means a required field of a predictions line is absent.
var ErrMissing = errors.New("missing")

// ErrDuplicate means two predictions for one custom_id disagree.
var ErrDuplicate = errors.New("two different responses")

// ErrModel means a predictions log holds another model's answers.
var ErrModel = errors.New("answers from another model")

// LineError is a malformed line of a predictions file.
type LineError struct {
	File string
	Line int // 1-based
	Err  error
}

// Error formats e as "file:line: reason".
func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }

// Unwrap returns the reason.
func (e *LineError) Unwrap() error { return e.Err }

// DuplicateError is a custom_id with two different responses.
type DuplicateError struct{ CustomID string }

// Error names the custom_id.
func (e *DuplicateError) Error() string {
	return fmt.Sprintf("custom_id %q: %v", e.CustomID, ErrDuplicate)
}

// Unwrap returns ErrDuplicate.
func (e *DuplicateError) Unwrap() error { return ErrDuplicate }
