//go:build !linux

package uring

import "errors"

// Ring is io_uring's, which only Linux has: elsewhere New fails and
// callers read with pread.
type Ring struct{}

// New fails: io_uring is Linux's.
func New(uint32) (*Ring, error) { return nil, errors.New("io_uring: Linux only") }

// Read reads nothing: every index is left to pread, and the ring is
// reported unusable.
func (r *Ring) Read(_ int, _ []int64, bufs [][]byte) ([]int, bool, error) {
	failed := make([]int, len(bufs))
	for i := range failed {
		failed[i] = i
	}
	return failed, false, nil
}

// Close does nothing.
func (r *Ring) Close() {}
