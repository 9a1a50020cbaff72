//go:build !linux

package cli

import "time"

// threadCPU is unknown here: 0.
func threadCPU() time.Duration { return 0 }
