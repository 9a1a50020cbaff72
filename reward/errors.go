package reward

import "errors"

// ErrLabel is wrapped by every error about a label that cannot be read.
var ErrLabel = errors.New("invalid label")
