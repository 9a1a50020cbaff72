package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

var errTest = errors.New("atomicfile: test failure")

func TestWriteReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	if err := WriteFile(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != "new" {
		t.Errorf("content %q, want new", b)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
}

func TestWriteFailureLeavesTargetAndNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	WriteFile(path, []byte("old"))
	err := Write(path, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return errTest
	})
	if !errors.Is(err, errTest) || err.Error() != "write "+path+": atomicfile: test failure" {
		t.Fatalf("got %v", err)
	}
	b, _ := os.ReadFile(path)
	entries, _ := os.ReadDir(dir)
	if string(b) != "old" || len(entries) != 1 {
		t.Errorf("after a failed write: content %q, %d entries; want old and 1", b, len(entries))
	}
}

func TestWriteMissingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "f.txt")
	if err := WriteFile(path, nil); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v, want a not-exist error", err)
	}
}
