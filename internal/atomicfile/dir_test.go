package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"bagen-data/internal/testenv"

	"github.com/google/go-cmp/cmp"
)

// tree lists every entry under root: files with their content, directories
// with a trailing slash, links with their target.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out[rel] = "-> " + l
		case fi.IsDir():
			out[rel+"/"] = ""
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// unwritable makes dir refuse new and removed entries, for root too
// (chattr +i) or as a user (chmod 0555), and undoes it at cleanup.
func unwritable(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
			testenv.Need(t, "chattr +i", fmt.Errorf("%w: %s", err, out))
		}
		t.Cleanup(func() { exec.Command("chattr", "-i", dir).Run() })
		return
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
}

func stages(t *testing.T, parent string) []string {
	t.Helper()
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.Contains(e.Name(), stageInfix) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestDirCommitReplacesWholeTree(t *testing.T) {
	parent := t.TempDir()
	target := filepath.Join(parent, "out")
	write(t, filepath.Join(target, "a/old.txt"), "old")
	write(t, filepath.Join(target, "keep.txt"), "old")
	d, err := NewDir(target, nil)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(d.Path(), "a/new.txt"), "new")
	write(t, filepath.Join(d.Scratch(), "spill"), "scratch")
	if got := tree(t, target); got["a/old.txt"] != "old" {
		t.Fatalf("target changed before commit: %v", got)
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"./": "", "a/": "", "a/new.txt": "new"}
	if diff := cmp.Diff(want, tree(t, target)); diff != "" {
		t.Errorf("target after commit (-want +got):\n%s", diff)
	}
	if s := stages(t, parent); s != nil {
		t.Errorf("staging directories left: %v", s)
	}
}

func TestDirCommitIntoNewTarget(t *testing.T) {
	parent := t.TempDir()
	target := filepath.Join(parent, "x", "out")
	d, err := NewDir(target, nil)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(d.Path(), "f"), "1")
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("target exists before commit: %v", err)
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"./": "", "f": "1"}, tree(t, target)); diff != "" {
		t.Errorf("target (-want +got):\n%s", diff)
	}
}

func TestDirFollowsSymlinkedTarget(t *testing.T) {
	parent := t.TempDir()
	real := filepath.Join(parent, "real")
	write(t, filepath.Join(real, "old"), "old")
	link := filepath.Join(parent, "link")
	if err := os.Symlink("real", link); err != nil {
		t.Fatal(err)
	}
	d, err := NewDir(link, nil)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(d.Path(), "new"), "new")
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if l, err := os.Readlink(link); err != nil || l != "real" {
		t.Errorf("link now %q (%v), want it still pointing at real", l, err)
	}
	if diff := cmp.Diff(map[string]string{"./": "", "new": "new"}, tree(t, real)); diff != "" {
		t.Errorf("link target (-want +got):\n%s", diff)
	}
}

// A commit that the kernel refuses leaves the target as it was and removes
// the stage.
func TestDirCommitFailureLeavesTarget(t *testing.T) {
	parent := t.TempDir()
	target := filepath.Join(parent, "out")
	write(t, filepath.Join(target, "f"), "old")
	d, err := NewDir(target, nil)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(d.Path(), "f"), "new")
	before := tree(t, target)
	unwritable(t, target) // moving it out needs to rewrite its ".."
	err = d.Commit()
	if err == nil {
		t.Fatal("commit succeeded, want an error")
	}
	if !strings.HasPrefix(err.Error(), "publish "+target+": ") {
		t.Errorf("error %q, want it to start with publish %s", err, target)
	}
	if diff := cmp.Diff(before, tree(t, target)); diff != "" {
		t.Errorf("target changed by a failed commit (-before +after):\n%s", diff)
	}
	if s := stages(t, parent); s != nil {
		t.Errorf("staging directories left: %v", s)
	}
}

func TestNewDirRefusesBeforeTouchingAnything(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, target string) // makes target unreplaceable
		want  string                            // error, with T for target
	}{
		{"a file", func(t *testing.T, target string) { write(t, target, "x") }, "T: not a directory"},
		{"an unwritable subdirectory", func(t *testing.T, target string) {
			write(t, filepath.Join(target, "sub/f"), "x")
			unwritable(t, filepath.Join(target, "sub"))
		}, "T/sub: not writable: "},
		{"a mount point inside", func(t *testing.T, target string) {
			write(t, filepath.Join(target, "f"), "x")
			mountTmpfs(t, filepath.Join(target, "sub"))
		}, "T/sub: " + ErrMountPoint.Error()},
		{"a mount point", func(t *testing.T, target string) {
			mountTmpfs(t, target)
			write(t, filepath.Join(target, "f"), "x")
		}, "T: " + ErrMountPoint.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			target := filepath.Join(parent, "out")
			tc.setup(t, target)
			before := tree(t, parent)
			_, err := NewDir(target, nil)
			want := strings.ReplaceAll(tc.want, "T", target)
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("got error %v, want %s…", err, want)
			}
			if diff := cmp.Diff(before, tree(t, parent)); diff != "" {
				t.Errorf("refused NewDir changed files (-before +after):\n%s", diff)
			}
		})
	}
}

func mountTmpfs(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		testenv.Need(t, "a tmpfs mount", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
}

// TestMain runs the test binary as the child TestCleanStaleAfterSIGKILL
// kills when ATOMICFILE_HOLD_STAGE names a target: it stages a directory,
// says "ready" and waits to be killed.
func TestMain(m *testing.M) {
	if target := os.Getenv("ATOMICFILE_HOLD_STAGE"); target != "" {
		holdStage(target)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func holdStage(target string) {
	d, err := NewDir(target, nil)
	if err == nil {
		err = os.WriteFile(filepath.Join(d.Path(), "half-written"), []byte("x"), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	os.Stdout.WriteString("ready\n")
	time.Sleep(time.Minute)
}

func TestCleanStaleAfterSIGKILL(t *testing.T) {
	parent := t.TempDir()
	target := filepath.Join(parent, "out")
	// Look-alikes a user may own: no marker, a marker with other text, a
	// marker that is a link to the real thing.
	write(t, filepath.Join(parent, ".out.stage-mine", "data"), "user")
	write(t, filepath.Join(parent, ".out.stage-other", markerName), "my own notes\n")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "ATOMICFILE_HOLD_STAGE="+target)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("helper said %q (%v), want ready", line, err)
	}
	live := slices.DeleteFunc(stages(t, parent), func(s string) bool { return s == ".out.stage-mine" || s == ".out.stage-other" })
	if len(live) != 1 {
		t.Fatalf("staging directories of the helper: %v, want one", live)
	}
	if err := os.Symlink(filepath.Join(live[0], markerName), filepath.Join(parent, ".out.stage-link")); err != nil {
		t.Fatal(err)
	}
	if removed := CleanStale(parent); removed != nil {
		t.Errorf("removed %v while its build runs, want nothing", removed)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if got := stages(t, parent); !slices.Contains(got, live[0]) {
		t.Fatalf("the killed build's stage is gone before any cleanup: %v", got)
	}
	d, err := NewDir(target, nil) // the next build
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abort()
	got := stages(t, parent)
	if slices.Contains(got, live[0]) {
		t.Errorf("stale stage %s survived the next build", live[0])
	}
	for _, keep := range []string{".out.stage-mine", ".out.stage-other", ".out.stage-link"} {
		if !slices.Contains(got, keep) {
			t.Errorf("%s (no marker of ours) was removed", keep)
		}
	}
	if b, err := os.ReadFile(filepath.Join(parent, ".out.stage-mine", "data")); err != nil || string(b) != "user" {
		t.Errorf("user's file: %q, %v", b, err)
	}
}
