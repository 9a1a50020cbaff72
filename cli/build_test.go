package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bagen-data/tokenizer"
)

// run executes the app with args and returns stdout and the error.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	stdout := os.Stdout
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout = w
	done := make(chan []byte)
	go func() {
		var b bytes.Buffer
		b.ReadFrom(r)
		done <- b.Bytes()
	}()
	app := App()
	app.Writer = w
	err = app.Run(context.Background(), append([]string{"bagen-data"}, args...))
	w.Close()
	os.Stdout = stdout
	return string(<-done), err
}

const oneRollout = `{"custom_id":"a","budget":100,"messages":[{"role":"user","content":"x","tokens":10},{"role":"assistant","content":"y","tokens":5},{"role":"user","content":"x","tokens":10},{"role":"assistant","content":"y","tokens":5}],"metadata":{"success":true}}` + "\n"

func TestBuildFlagErrorsAllAtOnce(t *testing.T) {
	_, err := run(t, "build", "--task", "chess", "--width", "wide", "--split", "50/50/10", "--labels", "v2", "--probe-every", "0")
	want := []string{
		`task "chess": want one of searchr1, sokoban, swebench, warehouse`,
		`width "wide": unknown kind`,
		`split "50/50/10": percentages sum to 110, want 100`,
		`labels: want paper or bagen-v1, got "v2"`,
		`--probe-every: got 0, want at least 1`,
	}
	if err == nil {
		t.Fatal("want an error")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
}

func TestBuildCommandSummary(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "r.jsonl")
	os.WriteFile(in, []byte(oneRollout), 0o644)
	out := filepath.Join(dir, "out")
	// The system prompt is counted by the tokenizer: give one explicitly so
	// the test does not depend on the cache.
	sys := filepath.Join(dir, "sys.txt")
	os.WriteFile(sys, []byte("S\n"), 0o644)
	stdout, err := run(t, "build", "--input", in, "--out", out, "--split", "0/0/100", "--system-prompt-file", sys, "--tokenizer", tokenizerPath(t))
	if err != nil {
		t.Fatal(err)
	}
	want := "1 trajectories from 1 input file(s); task sokoban, width pct30, labels paper, accounting message\n"
	if !strings.HasPrefix(stdout, want) {
		t.Errorf("summary starts %q, want %q", stdout, want)
	}
	if !strings.Contains(stdout, "eval             1             2/0           2/0") {
		t.Errorf("summary lacks the eval row with 2 possible probes:\n%s", stdout)
	}
}

func TestBuildRejectsArguments(t *testing.T) {
	_, err := run(t, "build", "rollouts.jsonl")
	if want := `build: unexpected argument "rollouts.jsonl" (inputs go in --input)`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func tokenizerPath(t *testing.T) string {
	t.Helper()
	p := tokenizer.DefaultPath()
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s missing: run `make tokenizer` first", p)
	}
	return p
}

func TestBuildCompatFlags(t *testing.T) {
	_, err := run(t, "build", "--compat", "bagen-v1", "--labels", "paper", "--split-by", "instance")
	for _, w := range []string{
		"labels: --compat bagen-v1 labels as bagen-v1, not paper",
		"split-by: --compat bagen-v1 splits trajectory by trajectory, not by instance",
	} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v lacks %q", err, w)
		}
	}
	_, err = run(t, "build", "--compat", "bagen-v2")
	if want := `compat "bagen-v2": want bagen-v1 (the behaviour of mll-lab-nu/BAGEN at 58bef4c) or none`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %s", err, want)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "r.jsonl")
	os.WriteFile(in, []byte(oneRollout), 0o644)
	out := filepath.Join(dir, "out")
	stdout, err := run(t, "build", "--compat", "bagen-v1", "--input", in, "--out", out, "--split", "0/0/100", "--tokenizer", tokenizerPath(t))
	if err != nil {
		t.Fatal(err)
	}
	if want := "1 trajectories from 1 input file(s); task sokoban, width pct30, labels bagen-v1, accounting message, compat bagen-v1\n"; !strings.HasPrefix(stdout, want) {
		t.Errorf("summary starts %q, want %q", stdout, want)
	}
	m, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil || !strings.Contains(string(m), `"compat": "bagen-v1"`) {
		t.Errorf("manifest does not record the compat: %v\n%s", err, m)
	}
}

func TestBuildDegenerateSplitNamesTheFix(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "r.jsonl")
	// Two trajectories with the same first user message: one instance group.
	os.WriteFile(in, []byte(oneRollout+strings.Replace(oneRollout, `"custom_id":"a"`, `"custom_id":"b"`, 1)), 0o644)
	out := filepath.Join(dir, "out")
	_, err := run(t, "build", "-q", "--input", in, "--out", out, "--split", "50/50/0", "--budget", "100000", "--tokenizer", tokenizerPath(t))
	want := "split rl (50%) has no rows: it received 0 of 2 trajectories, which form 1 instance group(s) (trajectories with the same first user message share a split); split by trajectory instead if the first user message is a generic instruction (--split-by trajectory)"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("out: %v, want nothing written", err)
	}
	if _, err := run(t, "build", "-q", "--input", in, "--out", out, "--split", "50/50/0", "--budget", "100000", "--split-by", "trajectory", "--tokenizer", tokenizerPath(t)); err != nil {
		t.Errorf("--split-by trajectory: %v", err)
	}
}

func TestBuildNoBudgetNamesTheFlag(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "r.jsonl")
	os.WriteFile(in, []byte(strings.Replace(oneRollout, `"budget":100,`, "", 1)), 0o644)
	_, err := run(t, "build", "-q", "--task", "swebench", "--input", in, "--out", filepath.Join(dir, "out"), "--tokenizer", tokenizerPath(t))
	want := in + ":1: budget: no budget: task swebench has no default and the trajectory sets none; pass --budget N"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestBuildErrorsNameTheFlag(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "r.jsonl")
	os.WriteFile(in, []byte(oneRollout+oneRollout), 0o644)
	_, err := run(t, "build", "-q", "--input", in, "--out", filepath.Join(dir, "out"), "--tokenizer", tokenizerPath(t))
	want := in + `:2: custom_id "a" already used at ` + in + `:1 (use --prefix-ids to prefix ids with their file name)`
	if err == nil || err.Error() != want {
		t.Errorf("duplicate ids: got %v\nwant %s", err, want)
	}
	// No tokenizer anywhere: the cache is empty.
	t.Setenv("BAGEN_DATA_CACHE", t.TempDir())
	uncounted := filepath.Join(dir, "u.jsonl")
	os.WriteFile(uncounted, []byte(strings.ReplaceAll(oneRollout, `,"tokens":10`, "")), 0o644)
	_, err = run(t, "build", "-q", "--input", uncounted, "--out", filepath.Join(dir, "out"))
	want = uncounted + ":1: messages[0].tokens: a token count is not recorded and no tokenizer was given: pass --tokenizer PATH/tokenizer.json (run `make tokenizer` for Qwen's), ollama:MODEL or hf:REPO"
	if err == nil || err.Error() != want {
		t.Errorf("no tokenizer: got %v\nwant %s", err, want)
	}
}

func TestBuildMessageLimitNamesTheFlag(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "r.jsonl")
	os.WriteFile(in, []byte(strings.Replace(oneRollout, `"content":"y"`, `"content":"a longer answer"`, 1)), 0o644)
	_, err := run(t, "build", "-q", "--input", in, "--out", filepath.Join(dir, "out"), "--max-message-bytes", "12", "--tokenizer", tokenizerPath(t))
	want := in + ":1: messages[1].content: over the size limit: 15 bytes, more than the message limit 12 (raise --max-message-bytes if the logs need it)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
