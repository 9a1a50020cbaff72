//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package guard

import "os"

// lockFile is a no-op where there is no flock(2): an append is then one
// write to a file opened O_APPEND, which the system places whole at the
// file's end.
func lockFile(*os.File, bool) error { return nil }
