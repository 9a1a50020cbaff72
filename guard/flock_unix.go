//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package guard

import (
	"os"
	"syscall"
)

// lockFile takes flock(2) on f, exclusive or shared, until f is closed:
// guards sharing a ledger directory never interleave a session's lines.
func lockFile(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}
