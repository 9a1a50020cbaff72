package validate

import "errors"

// ErrNoFiles means the paths given hold no parquet file to validate.
var ErrNoFiles = errors.New("no parquet files found")

// ErrInvalid is returned by callers (the validate command) when a report
// has error-level findings.
var ErrInvalid = errors.New("dataset failed validation")
