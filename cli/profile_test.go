package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// --cpuprofile works before the command name and among the command's
// flags, through the whole command line as main reads it, and a command's
// help lists it.
func TestCPUProfileEitherPlace(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "r.jsonl")
	if err := os.WriteFile(in, []byte(oneRollout), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, args := range [][]string{
		{"--cpuprofile", "P", "build", "--quiet", "--input", in, "--split", "0/0/100", "--out"},
		{"build", "--cpuprofile", "P", "--quiet", "--input", in, "--split", "0/0/100", "--out"},
	} {
		path := filepath.Join(dir, "cpu"+string(rune('a'+i))+".prof")
		args[slices.Index(args, "P")] = path
		args = append(args, filepath.Join(dir, "out"+string(rune('a'+i))))
		if r := bagen(t, dir, args...); r.code != 0 {
			t.Fatalf("%q: exit %d: %s", args, r.code, r.stderr)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		// A pprof profile is gzipped protocol buffers.
		if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%q: %s is not a gzipped profile (%d bytes)", args, path, len(b))
		}
	}
	help, err := run(t, "build", "--help")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(help, "--cpuprofile FILE") {
		t.Errorf("build --help does not list --cpuprofile:\n%s", help)
	}
}

// TestRateNote: the rate is what was done over the time taken, and the
// time left is what remains at that rate.
func TestRateNote(t *testing.T) {
	for _, tc := range []struct {
		done, total int64
		elapsed     time.Duration
		want        string
	}{
		{120, 2459, time.Minute, "2.0 prompts/s, 19m30s left"},
		{2459, 2459, 35 * time.Minute, "1.2 prompts/s, 0s left"},
		{0, 10, time.Second, ""},
	} {
		if got := rateNote(tc.done, tc.total, tc.elapsed, "prompts"); got != tc.want {
			t.Errorf("rateNote(%d, %d, %v) = %q, want %q", tc.done, tc.total, tc.elapsed, got, tc.want)
		}
	}
}
