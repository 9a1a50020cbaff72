package grpo

import "errors"

// Sentinel errors; classify with errors.Is.
var (
	// ErrConfig is a Config (or Space) field out of range.
	ErrConfig = errors.New("invalid config")
	// ErrTarget is an SFT answer that is neither an interval nor impossible.
	ErrTarget = errors.New("invalid sft target")
	// ErrData is a data row the trainer cannot use: no prompt, no budget,
	// an SFT conversation that does not end with the assistant's answer.
	ErrData = errors.New("invalid data row")
	// ErrEmbed is an embedding the server returned in the wrong shape.
	ErrEmbed = errors.New("invalid embedding")
	// ErrDiverged is a GRPO update whose objective is not a number.
	ErrDiverged = errors.New("grpo: objective diverged")
	// ErrCheckpoint is a missing, unreadable or mismatched checkpoint.
	ErrCheckpoint = errors.New("invalid checkpoint")
	// ErrRunExists is an output directory that holds an earlier run's
	// checkpoints, given without Options.Resume.
	ErrRunExists = errors.New("holds the checkpoints of an earlier run")
)

// FieldError is a Config field out of range. Field is the Go field path,
// e.g. Space.Bins; the command line maps it to its flag.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string {
	return ErrConfig.Error() + ": " + e.Field + ": " + e.Err.Error()
}

// Unwrap returns ErrConfig and the reason.
func (e *FieldError) Unwrap() []error { return []error{ErrConfig, e.Err} }
