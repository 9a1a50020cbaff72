package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bagen-data/fixtures"
	"bagen-data/tokenizer"
)

// needTokenizer fails the test when Qwen's tokenizer.json is not cached.
func needTokenizer(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(tokenizer.DefaultPath()); err != nil {
		t.Fatalf("%s is missing: run `make tokenizer` first", tokenizer.DefaultPath())
	}
}

// runApp runs bagen-data with args and returns what it wrote to stdout.
func runApp(t *testing.T, args ...string) (string, error) {
	t.Helper()
	app := App()
	var out bytes.Buffer
	app.ErrWriter, app.Writer = io.Discard, &out
	err := app.Run(context.Background(), append([]string{"bagen-data"}, args...))
	return out.String(), err
}

// TestEmbeddedFixturesRegenerate runs every go:generate line of
// fixtures/gen.go into a temporary directory and compares the output with
// the embedded file byte for byte.
func TestEmbeddedFixturesRegenerate(t *testing.T) {
	needTokenizer(t)
	f, err := os.Open(filepath.Join("..", "fixtures", "gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const prefix = "//go:generate go run ../cmd/bagen-data "
	dir := t.TempDir()
	runs := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), prefix)
		if !ok {
			continue
		}
		args := strings.Fields(line)
		if args[len(args)-2] != "--out" {
			t.Fatalf("gen.go: %q does not end in --out FILE", line)
		}
		embedded := args[len(args)-1]
		args[len(args)-1] = filepath.Join(dir, filepath.Base(embedded))
		if _, err := runApp(t, args...); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		got, err := os.ReadFile(args[len(args)-1])
		if err != nil {
			t.Fatal(err)
		}
		want, err := fixtures.Rollouts.ReadFile(embedded)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: regenerated %d bytes differ from the embedded %d (run go generate ./fixtures)", embedded, len(got), len(want))
		}
		runs++
	}
	if runs != 16 {
		t.Errorf("gen.go has %d generate lines, want 16", runs)
	}
}

func TestFixturesCommand(t *testing.T) {
	needTokenizer(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "r.jsonl")
	msg, err := runApp(t, "fixtures", "sokoban", "-n", "16", "--size", "8", "--boxes", "2", "--noise", "0.3", "--seed", "42", "--budget", "2500", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if want := out + ": 16 trajectories, "; !strings.HasPrefix(msg, want) {
		t.Errorf("summary %q, want prefix %q", msg, want)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n != 16 || !bytes.HasPrefix(b, []byte(`{"custom_id":"sokoban_8x8_s42_0000","budget":2500,"messages":[{"role":"system","content":"You're a helpful assistant.`)) {
		t.Errorf("%d lines starting %q", n, b[:min(len(b), 120)])
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"fixtures", "sokoban", "-n", "0", "--out", out}, "fixtures sokoban: -n: got 0, want at least 1"},
		{[]string{"fixtures", "sokoban", "--noise", "1.5", "--out", out}, "fixtures sokoban: invalid config: Noise: got 1.5, want 0 to 1"},
		{[]string{"fixtures", "searchr1", "--budget", "-1", "--out", out}, "fixtures searchr1: invalid config: Budget: got -1, want at least 1"},
		{[]string{"fixtures", "warehouse", "--tokenizer", filepath.Join(dir, "none.json"), "--out", out}, "fixtures warehouse: tokenizer: open " + filepath.Join(dir, "none.json") + ": no such file or directory"},
	} {
		if _, err := runApp(t, tt.args...); err == nil || err.Error() != tt.want {
			t.Errorf("%v: error %v, want %q", tt.args, err, tt.want)
		}
	}
}
