package eval

import "fmt"

// LabelError is a row whose label column cannot be read (reward.ParseTarget
// failed). Row is the 0-based row index in the data file.
type LabelError struct {
	Row      int
	CustomID string
	Err      error
}

// Error says "row 3 (x_probe_after_turn_2): label: …".
func (e *LabelError) Error() string {
	return fmt.Sprintf("row %d (%s): label: %v", e.Row, e.CustomID, e.Err)
}

// Unwrap returns the parser's error, which wraps reward.ErrLabel.
func (e *LabelError) Unwrap() error { return e.Err }
