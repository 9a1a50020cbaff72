// Package atomicfile writes files so that readers see either the old file
// or the complete new one, never a partial write: the content goes to a
// temporary file in the target's directory, which is synced, closed and
// renamed over the target; on any error the temporary file is removed and
// the target is untouched. Dir does the same for a whole directory tree.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write creates or replaces path with what fn writes. The file gets mode
// 0644. The error names path; a failing Close is reported like any other.
// Path Stdout writes to standard output; anything at path that is not a
// regular file is refused (ErrNotRegular) and left as it is.
func Write(path string, fn func(w io.Writer) error) (err error) {
	if path == Stdout {
		return writeStdout(fn)
	}
	if err := checkRegular(path); err != nil {
		return fmt.Errorf("write %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	if err = fn(f); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// writeStdout is Write to standard output, buffered.
func writeStdout(fn func(w io.Writer) error) error {
	bw := bufio.NewWriterSize(os.Stdout, 1<<16)
	if err := fn(bw); err != nil {
		return fmt.Errorf("write to standard output: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write to standard output: %w", err)
	}
	return nil
}

// WriteFile is Write for data already in memory.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
