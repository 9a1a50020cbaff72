package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Stdout is the path that means standard output to Write and CheckFile.
const Stdout = "-"

// ErrNotRegular is wrapped by the errors of Write and CheckFile when
// something other than a regular file (a directory, a symbolic link, a
// FIFO, a device) is at the target path: replacing it would destroy it, and
// writing through it would surprise.
var ErrNotRegular = errors.New("not a regular file")

// CheckFile reports, before any work, whether Write could create or replace
// path: Stdout, or a path whose directory exists and at which there is
// nothing or a regular file.
func CheckFile(path string) error {
	if path == Stdout {
		return nil
	}
	if err := checkRegular(path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: directory %s does not exist", path, dir)
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s: %s is not a directory", path, dir)
	}
	return writable(dir)
}

// CheckDir reports, before any work, whether NewDir could create or replace
// the tree at path: nothing there, or a directory (a symbolic link to one
// is followed, as NewDir follows it). Whether an existing tree may be
// replaced is the caller's check.
func CheckDir(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s: exists and is not a directory", path)
	}
	return nil
}

// checkRegular refuses anything at path that is not a regular file.
func checkRegular(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("%s: %w (%s); refusing to replace it", path, ErrNotRegular, kind(fi.Mode()))
}

// kind names a file mode's type.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a file"
}
