package dataset

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"bagen-data/internal/testenv"
	"bagen-data/rollout"

	"github.com/google/go-cmp/cmp"

	"bagen-data/internal/atomicfile"
)

// digests maps every entry under root to its SHA-256 (files), "dir" or
// "-> target" (links), hidden entries included.
func digests(t *testing.T, root string) map[string]string {
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
			out[rel] = "dir"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			out[rel] = hex.EncodeToString(sum[:])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
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

func mountTmpfs(t *testing.T, dir string) {
	t.Helper()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=4m"); err != nil {
		testenv.Need(t, "a tmpfs mount", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
}

// moveToOtherFS replaces out/rl by a link to a copy on another file
// system (/dev/shm), as a user short of space might.
func moveToOtherFS(t *testing.T, out string) {
	t.Helper()
	other, err := os.MkdirTemp("/dev/shm", "bagen-rl-")
	if err != nil {
		testenv.Need(t, "/dev/shm", err)
	}
	t.Cleanup(func() { os.RemoveAll(other) })
	var a, b syscall.Stat_t
	if syscall.Stat(other, &a) != nil || syscall.Stat(out, &b) != nil || a.Dev == b.Dev {
		testenv.Need(t, "/dev/shm on a file system of its own", errors.New("/dev/shm is on the same file system as the output"))
	}
	data, err := os.ReadFile(filepath.Join(out, RLFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "train.parquet"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(out, "rl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(out, "rl")); err != nil {
		t.Fatal(err)
	}
}

// A build that cannot replace the output directory fails before any work
// and leaves every file as it was: the output of the previous build, the
// inputs, and no staging directory.
func TestBuildFailureLeavesEveryFileIdentical(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, out string)
		want  string // error; O is the output directory
		is    error
	}{
		{"rl is a file", func(t *testing.T, out string) {
			// rm -rf out/rl && echo x > out/rl
			if err := os.RemoveAll(filepath.Join(out, "rl")); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(out, "rl"), []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "O: rl: " + ErrNotOutput.Error(), ErrNotOutput},
		{"a user's file in the output directory", func(t *testing.T, out string) {
			if err := os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "O: notes.txt: " + ErrNotOutput.Error(), ErrNotOutput},
		{"rl without write permission", func(t *testing.T, out string) {
			unwritable(t, filepath.Join(out, "rl"))
		}, "O/rl: not writable: ", syscall.EPERM},
		{"output directory without write permission", func(t *testing.T, out string) {
			unwritable(t, out)
		}, "O: not writable: ", syscall.EPERM},
		{"rl a link to another file system", moveToOtherFS, "O: rl: " + ErrNotOutput.Error(), ErrNotOutput},
		{"rl a mount point", func(t *testing.T, out string) {
			data, err := os.ReadFile(filepath.Join(out, RLFile))
			if err != nil {
				t.Fatal(err)
			}
			mountTmpfs(t, filepath.Join(out, "rl"))
			if err := os.WriteFile(filepath.Join(out, RLFile), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "O/rl: " + atomicfile.ErrMountPoint.Error(), atomicfile.ErrMountPoint},
		{"output directory a mount point", func(t *testing.T, out string) {
			saved := digestsAndBytes(t, out)
			mountTmpfs(t, out)
			for name, b := range saved {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(out, name)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}, "O: " + atomicfile.ErrMountPoint.Error(), atomicfile.ErrMountPoint},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			src := writeInput(t, dir, "r.jsonl", canonical(20, 0))
			if _, err := Build(context.Background(), []rollout.Source{src}, out, testConfig()); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, out)
			if os.Geteuid() != 0 && tc.is == syscall.EPERM {
				tc.is = syscall.EACCES
			}
			before := digests(t, dir)
			cfg := testConfig()
			cfg.Seed = 7
			cfg.Progress = func(string, int64, int64) { t.Error("the build started work") }
			_, err := Build(context.Background(), []rollout.Source{src}, out, cfg)
			want := strings.ReplaceAll(tc.want, "O", out)
			if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, tc.is) {
				t.Fatalf("got error %v, want %s… wrapping %v", err, want, tc.is)
			}
			if diff := cmp.Diff(before, digests(t, dir)); diff != "" {
				t.Errorf("a failed build changed files (-before +after):\n%s", diff)
			}
		})
	}
}

// digestsAndBytes reads the outputs of a build by name.
func digestsAndBytes(t *testing.T, out string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	for _, f := range []string{SFTFile, RLFile, EvalFile, ManifestFile} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		m[f] = b
	}
	return m
}

// A failure mid-build (here the writer of the manifest finds its path
// taken by a directory inside the stage) also leaves everything as it was.
func TestBuildFailureMidWriteLeavesEveryFileIdentical(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	src := writeInput(t, dir, "r.jsonl", canonical(20, 0))
	if _, err := Build(context.Background(), []rollout.Source{src}, out, testConfig()); err != nil {
		t.Fatal(err)
	}
	before := digests(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	cfg := testConfig()
	cfg.Seed = 7
	cfg.Progress = func(stage string, done, total int64) {
		if strings.HasPrefix(stage, "write") {
			cancel() // after the scan, while the first file is written
		}
	}
	_, err := Build(ctx, []rollout.Source{src}, out, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got error %v, want context.Canceled", err)
	}
	if diff := cmp.Diff(before, digests(t, dir)); diff != "" {
		t.Errorf("a cancelled build changed files (-before +after):\n%s", diff)
	}
}

// A successful build over a previous one replaces it whole: the result is
// byte-identical to a build into a fresh directory, and no stage remains.
func TestBuildReplacesPreviousOutputWhole(t *testing.T) {
	dir := t.TempDir()
	src := writeInput(t, dir, "r.jsonl", canonical(20, 0))
	out, fresh := filepath.Join(dir, "out"), filepath.Join(dir, "fresh")
	if _, err := Build(context.Background(), []rollout.Source{src}, out, testConfig()); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.Seed = 7
	for _, o := range []string{out, fresh} {
		if _, err := Build(context.Background(), []rollout.Source{src}, o, cfg); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(digests(t, fresh), digests(t, out)); diff != "" {
		t.Errorf("rebuilt output differs from a fresh one (-fresh +rebuilt):\n%s", diff)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"fresh", "out", "r.jsonl"}, names); diff != "" {
		t.Errorf("entries next to the output (-want +got):\n%s", diff)
	}
}

// TestMain runs the test binary as the child
// TestBuildRemovesStageOfKilledBuild kills when DATASET_KILLED_BUILD holds
// an input and an output: it starts a build, says "ready" once the build
// is under way and waits to be killed.
func TestMain(m *testing.M) {
	if args := os.Getenv("DATASET_KILLED_BUILD"); args != "" {
		killedBuild(args)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func killedBuild(args string) {
	in, out, _ := strings.Cut(args, "\n")
	var once sync.Once
	cfg := testConfig()
	cfg.Progress = func(string, int64, int64) {
		once.Do(func() { os.Stdout.WriteString("ready\n") })
		time.Sleep(time.Minute)
	}
	Build(context.Background(), []rollout.Source{rollout.FileSource(in)}, out, cfg)
}

func TestBuildRemovesStageOfKilledBuild(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	src := writeInput(t, dir, "r.jsonl", canonical(20, 0))
	// A user's directory with a staging-like name and no marker.
	lookalike := filepath.Join(dir, ".out.stage-123")
	if err := os.MkdirAll(filepath.Join(lookalike, "tree"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lookalike, "tree", "data"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "DATASET_KILLED_BUILD="+src.Name+"\n"+out)
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
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	left, _ := filepath.Glob(filepath.Join(dir, ".out.stage-*"))
	if len(left) != 2 {
		t.Fatalf("after SIGKILL: %v, want the look-alike and the killed build's stage", left)
	}
	if _, err := Build(context.Background(), []rollout.Source{src}, out, testConfig()); err != nil {
		t.Fatal(err)
	}
	left, _ = filepath.Glob(filepath.Join(dir, ".out.stage-*"))
	if diff := cmp.Diff([]string{lookalike}, left); diff != "" {
		t.Errorf("after the next build (-want +got):\n%s", diff)
	}
	if b, err := os.ReadFile(filepath.Join(lookalike, "tree", "data")); err != nil || string(b) != "mine" {
		t.Errorf("the look-alike's file: %q, %v", b, err)
	}
}
