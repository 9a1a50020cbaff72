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

// What is at the target and is not a regular file is refused and left as
// it was, by Write and, before any work, by CheckFile.
func TestWriteRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("old"), 0o644)
	os.Symlink(target, filepath.Join(dir, "link"))
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	for _, tc := range []struct{ name, want string }{
		{"link", "not a regular file (a symbolic link); refusing to replace it"},
		{"sub", "not a regular file (a directory); refusing to replace it"},
	} {
		p := filepath.Join(dir, tc.name)
		if err := CheckFile(p); err == nil || err.Error() != p+": "+tc.want || !errors.Is(err, ErrNotRegular) {
			t.Errorf("CheckFile(%s): got %v, want %s", tc.name, err, tc.want)
		}
		if err := WriteFile(p, []byte("new")); err == nil || err.Error() != "write "+p+": "+tc.want {
			t.Errorf("WriteFile(%s): got %v, want write %s: %s", tc.name, err, p, tc.want)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "old" {
		t.Errorf("the link's target holds %q, want old", b)
	}
	for _, p := range []string{Stdout, target, filepath.Join(dir, "new")} {
		if err := CheckFile(p); err != nil {
			t.Errorf("CheckFile(%s): %v", p, err)
		}
	}
	missing := filepath.Join(dir, "no", "f")
	if err := CheckFile(missing); err == nil || err.Error() != missing+": directory "+filepath.Join(dir, "no")+" does not exist" {
		t.Errorf("CheckFile(%s): %v", missing, err)
	}
	if err := CheckDir(target); err == nil || err.Error() != target+": exists and is not a directory" {
		t.Errorf("CheckDir(file): %v", err)
	}
	if err := CheckDir(filepath.Join(dir, "sub")); err != nil {
		t.Errorf("CheckDir(dir): %v", err)
	}
}
