package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	ucli "github.com/urfave/cli/v3"

	"bagen-data/dataset"
	"bagen-data/fixtures"
	"bagen-data/probes"
)

// result is what a run of the binary gave.
type result struct {
	stdout, stderr string
	code           int
}

// bagen runs bagen-data with args in a process of its own (the test binary
// calling Main, as main does) in dir, and returns its outputs and exit
// status.
func bagen(t *testing.T, dir string, args ...string) result {
	t.Helper()
	cmd := childCommand(t, dir, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return result{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
}

// childCommand is the command bagen runs.
func childCommand(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	enc, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), childArgs+"="+string(enc))
	return cmd
}

// fixtureFile copies an embedded fixture rollout file into dir.
func fixtureFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := fs.ReadFile(fixtures.Rollouts, name)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, filepath.Base(name))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// oneLine checks that a run failed with exit status code and exactly the
// one line want on stderr and nothing on stdout.
func (r result) oneLine(t *testing.T, code int, want string) {
	t.Helper()
	if r.code != code || r.stderr != want+"\n" || r.stdout != "" {
		t.Errorf("got exit %d, stderr %q, stdout %q\nwant exit %d, stderr %q", r.code, r.stderr, r.stdout, code, want+"\n")
	}
}

// "-" is standard output for every single-file output; anything at an
// output path that is not a regular file is refused before any work and
// left as it was.
func TestOutputsNeverClobber(t *testing.T) {
	dir := t.TempDir()
	in := fixtureFile(t, dir, "rollouts/sokoban/6x6_noise0.30.jsonl.zst")
	file := bagen(t, dir, "convert", "-q", "-i", in, "-o", "file.jsonl")
	piped := bagen(t, dir, "convert", "-q", "-i", in, "-o", "-")
	want, _ := os.ReadFile(filepath.Join(dir, "file.jsonl"))
	if file.code != 0 || piped.code != 0 || piped.stdout != string(want) || len(want) < 1000 {
		t.Fatalf("convert -o -: exit %d (%s), %d bytes on stdout; want exit 0 and the %d bytes -o file.jsonl writes",
			piped.code, piped.stderr, len(piped.stdout), len(want))
	}
	if _, err := os.Stat(filepath.Join(dir, "-")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("-o - created a file named -")
	}
	// With the data on stdout, the summary goes to stderr.
	r := bagen(t, dir, "convert", "-i", in, "-o", "-")
	if !strings.HasPrefix(r.stderr, "40 trajectories from 1 file(s) to -\n") || r.stdout != string(want) {
		t.Errorf("convert -o - without -q: stderr %q, %d bytes on stdout", r.stderr, len(r.stdout))
	}

	target := filepath.Join(dir, "target.txt")
	os.WriteFile(target, []byte("keep"), 0o644)
	os.Symlink(target, filepath.Join(dir, "link"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "adir"), 0o755)
	os.WriteFile(filepath.Join(dir, "preds.jsonl"), []byte(`{"custom_id":"x","response":"y"}`+"\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"convert", "-q", "-i", in, "-o", "link"},
			"bagen-data: convert: --out: link: not a regular file (a symbolic link); refusing to replace it"},
		{[]string{"convert", "-q", "-i", in, "-o", "fifo"},
			"bagen-data: convert: --out: fifo: not a regular file (a FIFO); refusing to replace it"},
		// Refused before reading: the input does not even exist.
		{[]string{"probes", "-q", "-i", "missing.jsonl", "-o", "adir"},
			"bagen-data: probes: --out: adir: not a regular file (a directory); refusing to replace it"},
		{[]string{"reward", "score", "--data", "missing.parquet", "--predictions", "preds.jsonl", "--out", "link"},
			"bagen-data: reward score: --out: link: not a regular file (a symbolic link); refusing to replace it"},
		{[]string{"eval", "--data", "missing.parquet", "--predictions", "preds.jsonl", "--json", "fifo", "--report", "adir"},
			"bagen-data: eval: --json: fifo: not a regular file (a FIFO); refusing to replace it\n" +
				"--report: adir: not a regular file (a directory); refusing to replace it"},
		{[]string{"build", "-q", "-i", "missing.jsonl", "--out", "target.txt"},
			"bagen-data: build: --out: target.txt: exists and is not a directory"},
		{[]string{"build", "-q", "--out", "-"},
			"bagen-data: build: --out: standard output (-) cannot serve here; give a file"},
		{[]string{"probes", "-q", "-i", "missing.jsonl", "-o", "no/such/dir/p.parquet"},
			"bagen-data: probes: --out: no/such/dir/p.parquet: directory no/such/dir does not exist"},
		{[]string{"eval", "--data", "missing.parquet", "--predictions", "preds.jsonl", "--json", "same.json", "--report", "same.json"},
			"bagen-data: eval: --report: same.json is also --json"},
	} {
		r := bagen(t, dir, tc.args...)
		r.oneLine(t, 1, tc.want)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "keep" {
		t.Errorf("target through the link: %q, %v; want keep", b, err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "fifo")); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi.Mode(), err)
	}
}

// Flags after positional arguments are read as flags.
func TestFlagsAfterArguments(t *testing.T) {
	dir := t.TempDir()
	if r := bagen(t, dir, "build", "-q", "--out", "out"); r.code != 0 {
		t.Fatalf("build: %d %s", r.code, r.stderr)
	}
	first := bagen(t, dir, "validate", "--max-examples", "1", "out")
	after := bagen(t, dir, "validate", "out", "--max-examples", "1")
	if after.code != 0 || after.stdout != first.stdout || !strings.Contains(after.stdout, "0 errors") {
		t.Errorf("validate out --max-examples 1: exit %d, stdout\n%s\nstderr %s\nwant the output of flags first:\n%s",
			after.code, after.stdout, after.stderr, first.stdout)
	}
	makePredictions(t, dir, []string{"--data", "out", "--predictions", "p.jsonl"})
	if r := bagen(t, dir, "eval", "--data", "out", "--predictions", "p.jsonl", "--json", "a.json", "--bootstrap", "0"); r.code != 0 {
		t.Fatalf("eval: %s", r.stderr)
	}
	r := bagen(t, dir, "eval", "--compare", "a.json", "a.json", "--report", "x.html")
	page, err := os.ReadFile(filepath.Join(dir, "x.html"))
	if r.code != 0 || err != nil || !strings.Contains(string(page), "<svg") {
		t.Errorf("eval --compare a.json a.json --report x.html: exit %d, %s; report %v", r.code, r.stderr, err)
	}
	// "--" ends the flags: what follows is an argument even if it looks like a flag.
	r = bagen(t, dir, "validate", "--", "--max-examples")
	r.oneLine(t, 1, "bagen-data: validate: stat --max-examples: no such file or directory")
}

// help CMD, unknown commands and flags, missing required flags and bad
// values: one line each, with the nearest valid name.
func TestCommandLineErrors(t *testing.T) {
	dir := t.TempDir()
	help := bagen(t, dir, "help", "build")
	direct := bagen(t, dir, "build", "--help")
	if help.code != 0 || help.stdout != direct.stdout || !strings.HasPrefix(help.stdout, "NAME:\n   bagen-data build - ") {
		t.Errorf("help build: exit %d, stdout %q…; want build --help's", help.code, help.stdout[:min(80, len(help.stdout))])
	}
	if r := bagen(t, dir, "help"); r.code != 0 || !strings.Contains(r.stdout, "\n   help      show the commands, or a command's help (help reward serve)\n\nGLOBAL OPTIONS:") {
		t.Errorf("help: exit %d, want the commands with help last:\n%s", r.code, r.stdout)
	}
	if r := bagen(t, dir, "help", "reward", "score"); r.code != 0 || !strings.HasPrefix(r.stdout, "NAME:\n   bagen-data reward score - ") {
		t.Errorf("help reward score: exit %d, %q", r.code, r.stdout[:min(80, len(r.stdout))])
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"biuld"}, `bagen-data: unknown command "biuld"; did you mean build?`},
		{[]string{"help", "valdiate"}, `bagen-data: unknown command "valdiate"; did you mean validate?`},
		{[]string{"reward", "scroe"}, `bagen-data: reward: unknown command "scroe"; did you mean score?`},
		{[]string{"frobnicate"}, `bagen-data: unknown command "frobnicate"; commands: build, convert, reward, validate, eval, fixtures, grpo, probes, guard, baseline`},
		{[]string{"build", "-ouput", "x"}, "bagen-data: build: unknown flag --ouput; did you mean --out?"},
		{[]string{"build", "--sed", "1"}, "bagen-data: build: unknown flag --sed; did you mean --seed?"},
		{[]string{"probes", "--zzz"}, "bagen-data: probes: unknown flag --zzz (see bagen-data probes --help)"},
		{[]string{"build", "--out"}, "bagen-data: build: --out needs a value (DIR)"},
		{[]string{"build", "--seed", "abc"}, `bagen-data: build: invalid value "abc" for --seed: parse error`},
		{[]string{"reward", "serve", "--gc-percent", "x"}, `bagen-data: reward serve: invalid value "x" for --gc-percent: parse error`},
		{[]string{"convert", "-i", "x.jsonl"}, "bagen-data: convert: missing --out FILE"},
		{[]string{"reward", "score"}, "bagen-data: reward score: missing --data PATH and --predictions FILE"},
		{[]string{"fixtures", "sokoban"}, "bagen-data: fixtures sokoban: missing --out FILE"},
		{[]string{"eval", "--predictions", "p.jsonl"}, "bagen-data: eval: --data is required (the eval/test.parquet to score)"},
		{[]string{"eval", "stray", "--predictions", "p.jsonl"}, `bagen-data: eval: unexpected argument "stray" (files given as arguments need --compare)`},
		{[]string{"build", "--width", "30"}, `bagen-data: build: width "30": unknown kind (want pctN such as pct30, fixN such as fix100, or point)`},
		{[]string{"build", "stray"}, `bagen-data: build: unexpected argument "stray" (inputs go in --input)`},
		{[]string{"validate", "--max-examples", "-1", "out"}, "bagen-data: validate: --max-examples: want ≥ 0, got -1"},
		{[]string{"validate"}, "bagen-data: validate: give a dataset directory or parquet files"},
		{[]string{"grpo", "train", "stray"}, `bagen-data: grpo train: unexpected argument "stray"`},
	} {
		bagen(t, dir, tc.args...).oneLine(t, 2, tc.want)
	}
}

// The task comes from the records: a Search-R1 log builds Search-R1 rows
// without --task; two tasks in one run are an error naming both; --task
// overrides with a warning.
func TestTaskFromRecords(t *testing.T) {
	dir := t.TempDir()
	sr := fixtureFile(t, dir, "rollouts/searchr1/noise0.50.jsonl.zst")
	sk := fixtureFile(t, dir, "rollouts/sokoban/6x6_noise0.30.jsonl.zst")
	// The fixture's SFT split happens to hold no impossible probe: build says so.
	oneClass := "warning: the sft split has 25 possible and 0 impossible probes: F1 and the recall of the absent class are undefined (logs with failed or over-budget rollouts, or a smaller --budget)\n"
	if r := bagen(t, dir, "build", "-q", "-i", sr, "-o", "sr"); r.code != 0 || r.stderr != oneClass {
		t.Fatalf("build: exit %d, stderr %q", r.code, r.stderr)
	}
	rows, err := dataset.ReadRL(filepath.Join(dir, "sr", "eval", "test.parquet"))
	if err != nil || len(rows) == 0 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	preset, err := probes.Compat{}.Preset("searchr1")
	if err != nil {
		t.Fatal(err)
	}
	searchSystem := preset.System
	for _, r := range rows {
		if r.DataSource != "budget_probe_searchr1" || r.Prompt[0].Content != searchSystem {
			t.Fatalf("row %s: data_source %s, system prompt %.60q; want budget_probe_searchr1 and Search-R1's",
				r.ExtraInfo.CustomID, r.DataSource, r.Prompt[0].Content)
		}
	}
	bagen(t, dir, "build", "-q", "-i", sr, "-i", sk, "-o", "mix").oneLine(t, 1,
		"bagen-data: build: inputs mix tasks: "+sk+":1 says sokoban, "+sr+":1 says searchr1; build each task on its own")
	bagen(t, dir, "probes", "-q", "-i", sk, "-i", sr, "-o", "mix.parquet").oneLine(t, 1,
		"bagen-data: probes: inputs mix tasks: "+sk+":1 says sokoban, "+sr+":1 says searchr1; build each task on its own")
	r := bagen(t, dir, "build", "-q", "-i", sr, "--task", "sokoban", "-o", "forced")
	if want := "warning: --task sokoban overrides task searchr1, which " + sr + ":1 names\n"; r.code != 0 || !strings.HasPrefix(r.stderr, want) {
		t.Errorf("--task sokoban on Search-R1 logs: exit %d, stderr %q; want 0 and %q", r.code, r.stderr, want)
	}
	rows, _ = dataset.ReadRL(filepath.Join(dir, "forced", "eval", "test.parquet"))
	if len(rows) == 0 || rows[0].DataSource != "budget_probe_sokoban" {
		t.Errorf("--task sokoban: rows %d, want data_source budget_probe_sokoban", len(rows))
	}
}

// Ctrl-C during build: "interrupted; out unchanged", exit 130, the
// previous build left byte for byte.
func TestInterruptedBuild(t *testing.T) {
	dir := t.TempDir()
	var inputs []string
	for i := range 60 {
		for _, name := range []string{"sokoban/8x8_noise0.45", "sokoban/8x8_noise0.35", "sokoban/6x6_noise0.70"} {
			p := fixtureFile(t, dir, "rollouts/"+name+".jsonl.zst")
			q := filepath.Join(dir, fmt.Sprintf("%s-%d.jsonl.zst", filepath.Base(name), i))
			if err := os.Rename(p, q); err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, "-i", q)
		}
	}
	if r := bagen(t, dir, "build", "-q", "--out", "out"); r.code != 0 {
		t.Fatalf("first build: %s", r.stderr)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "out", "manifest.json"))
	cmd := childCommand(t, dir, append([]string{"build", "-q", "--prefix-ids", "--workers", "1", "--out", "out"}, inputs...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the build is under way: its stage directory exists.
	deadline := time.Now().Add(30 * time.Second)
	for {
		stages, _ := filepath.Glob(filepath.Join(dir, ".out.stage-*"))
		if len(stages) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 || stderr.String() != "bagen-data: interrupted; out unchanged\n" {
		t.Errorf("got exit %d, stderr %q; want 130 and \"bagen-data: interrupted; out unchanged\"", code, stderr.String())
	}
	after, _ := os.ReadFile(filepath.Join(dir, "out", "manifest.json"))
	if !bytes.Equal(before, after) || len(before) == 0 {
		t.Errorf("the interrupted build changed out/manifest.json")
	}
}

// reward serve says it is draining on the first signal and stops at once
// on the second.
func TestRewardServeSecondSignal(t *testing.T) {
	cmd := childCommand(t, t.TempDir(), "reward", "serve", "--addr", "127.0.0.1:0", "--drain-grace", "20s", "--drain-timeout", "30s")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func() string {
		select {
		case l := <-lines:
			return l
		case <-time.After(20 * time.Second):
			t.Fatal("no line from reward serve within 20s")
		}
		return ""
	}
	if l := next(); !strings.HasPrefix(l, "reward: serving on http://127.0.0.1:") {
		t.Fatalf("first line %q", l)
	}
	cmd.Process.Signal(os.Interrupt)
	if l, want := next(), "reward: draining: /healthz answers 503 for 20s, then requests in flight finish (at most 30s in all); interrupt again to stop at once"; l != want {
		t.Errorf("after the first signal: %q, want %q", l, want)
	}
	start := time.Now()
	cmd.Process.Signal(os.Interrupt)
	if l := next(); l != "bagen-data: stopped at once" {
		t.Errorf("after the second signal: %q", l)
	}
	cmd.Wait()
	if code, took := cmd.ProcessState.ExitCode(), time.Since(start); code != 130 || took > 5*time.Second {
		t.Errorf("exit %d after %v; want 130 at once", code, took)
	}
}

// A trajectory pretty-printed over several lines is read; in an input
// directory, files that hold no trajectory are skipped and counted; a
// previous build's output directory says what it skipped.
func TestMultiLineJSONAndSkippedFiles(t *testing.T) {
	dir := t.TempDir()
	pretty := "{\n  \"custom_id\": \"a\",\n  \"messages\": [\n    {\"role\": \"user\", \"content\": \"x\", \"tokens\": 3},\n" +
		"    {\"role\": \"assistant\", \"content\": \"y\", \"tokens\": 2}\n  ],\n  \"metadata\": {\"success\": true}\n}\n"
	os.WriteFile(filepath.Join(dir, "one.json"), []byte(pretty), 0o644)
	r := bagen(t, dir, "convert", "-q", "-i", "one.json", "-o", "-")
	want := `{"custom_id":"a","messages":[{"role":"user","content":"x","tokens":3},{"role":"assistant","content":"y","tokens":2}],"metadata":{"success":true,"outcome_source":"score"}}` + "\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("convert one.json: exit %d, stderr %q, stdout %q; want %q", r.code, r.stderr, r.stdout, want)
	}
	in := filepath.Join(dir, "in")
	os.Mkdir(in, 0o755)
	fixtureFile(t, in, "rollouts/searchr1/noise0.50.jsonl.zst")
	os.WriteFile(filepath.Join(in, "config.json"), []byte("{\n  \"lr\": 0.1\n}\n"), 0o644)
	r = bagen(t, dir, "build", "-i", "in", "-o", "out")
	if r.code != 0 || !strings.HasSuffix(r.stdout, "\nskipped 1 file(s) in input directories that hold no trajectory: in/config.json\n") {
		t.Errorf("build -i in: exit %d, stderr %q, stdout\n%s", r.code, r.stderr, r.stdout)
	}
	bagen(t, dir, "build", "-q", "-i", "out", "-o", "again").oneLine(t, 1,
		"bagen-data: no valid trajectories in the input (skipped 1 file(s) in input directories that hold no trajectory: out/manifest.json)")
	bagen(t, dir, "build", "-q", "-i", "in/config.json", "-o", "again").oneLine(t, 1,
		"bagen-data: in/config.json:1: custom_id: missing")
}

// One meaning per flag name: --json is a FILE ("-" for stdout) in validate
// as in eval; --data takes the directory build wrote wherever it takes a
// parquet file; validate takes --input like the other readers.
func TestOneVocabulary(t *testing.T) {
	dir := t.TempDir()
	if r := bagen(t, dir, "build", "-q", "--out", "out"); r.code != 0 {
		t.Fatalf("build: %s", r.stderr)
	}
	stdout := bagen(t, dir, "validate", "out", "--json", "-")
	file := bagen(t, dir, "validate", "-i", "out", "--json", "report.json")
	saved, _ := os.ReadFile(filepath.Join(dir, "report.json"))
	if stdout.code != 0 || file.code != 0 || !strings.HasPrefix(stdout.stdout, "{\n  \"files\": [") || string(saved) != stdout.stdout || file.stdout != "" {
		t.Errorf("validate --json: exit %d/%d, stdout %.40q, file %.40q", stdout.code, file.code, stdout.stdout, saved)
	}
	bagen(t, dir, "validate", "--json", "out").oneLine(t, 1, "bagen-data: validate: --json: out: not a regular file (a directory); refusing to replace it"+
		" (--json takes the report's FILE now, - for standard output; the dataset goes after the flags)")
	preds := filepath.Join(dir, "preds.jsonl")
	os.WriteFile(preds, nil, 0o644)
	byDir := bagen(t, dir, "reward", "score", "--data", "out", "--predictions", preds)
	byFile := bagen(t, dir, "reward", "score", "--data", "out/eval/test.parquet", "--predictions", preds)
	if byDir.code != 0 || byDir.stdout != byFile.stdout || !strings.Contains(byDir.stdout, "data rows: 245 ") {
		t.Errorf("reward score --data out: exit %d, %s\nwant as --data out/eval/test.parquet:\n%s", byDir.code, byDir.stdout+byDir.stderr, byFile.stdout)
	}
	bagen(t, dir, "grpo", "train", "--data", "out/eval/test.parquet", "--out", "run").oneLine(t, 1,
		"bagen-data: grpo train: --data out/eval/test.parquet: want the directory build wrote (sft/, rl/, eval/), not a file")
}

// Feedback where users wait: Ollama not running is said at once with what
// to do; a build whose splits lack impossible probes warns; --out data/
// prints clean paths.
func TestFeedback(t *testing.T) {
	dir := t.TempDir()
	var lines strings.Builder
	for i := range 10 {
		fmt.Fprintf(&lines, `{"custom_id":"t%d","budget":1000,"messages":[{"role":"user","content":"go %d","tokens":10},{"role":"assistant","content":"a","tokens":5},{"role":"user","content":"b","tokens":10},{"role":"assistant","content":"c","tokens":5}],"metadata":{"success":true}}`+"\n", i, i)
	}
	os.WriteFile(filepath.Join(dir, "easy.jsonl"), []byte(lines.String()), 0o644)
	r := bagen(t, dir, "build", "-i", "easy.jsonl", "--out", "data/")
	wantErr := ""
	for _, s := range []struct {
		name string
		n    int
	}{{"sft", 8}, {"rl", 10}, {"eval", 2}} {
		wantErr += fmt.Sprintf("warning: the %s split has %d possible and 0 impossible probes: F1 and the recall of the absent class are undefined (logs with failed or over-budget rollouts, or a smaller --budget)\n", s.name, s.n)
	}
	if r.code != 0 || r.stderr != wantErr {
		t.Errorf("build of all-possible logs: exit %d, stderr\n%s\nwant\n%s", r.code, r.stderr, wantErr)
	}
	if !strings.Contains(r.stdout, " data/sft/train.parquet\n") || strings.Contains(r.stdout, "//") {
		t.Errorf("--out data/: summary\n%s\nwant data/sft/train.parquet, no //", r.stdout)
	}
	cmd := childCommand(t, dir, "eval", "--data", "data", "--ollama", "qwen")
	cmd.Env = append(cmd.Env, "OLLAMA_HOST=127.0.0.1:1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	cmd.Run()
	want := "bagen-data: eval: ollama: dial tcp 127.0.0.1:1: connect: connection refused " +
		"(is Ollama running at http://127.0.0.1:1? start it with `ollama serve`, or set OLLAMA_HOST to where it listens)\n"
	if took := time.Since(start); stderr.String() != want || took > 3*time.Second {
		t.Errorf("eval --ollama without Ollama: %q after %v; want at once %q", stderr.String(), took, want)
	}

}

// dryApp is App with every command's action replaced by one that sets
// *leaf to the command the line names, and the output paths unchecked: the
// command line's parsing and flag checks, no work.
func dryApp(leaf **ucli.Command) *ucli.Command {
	app := App()
	app.Before, app.After = nil, nil
	app.ArgValidator = func(_ context.Context, c *ucli.Command) error {
		if len(c.Commands) > 0 || c.Name == helpName {
			return nil
		}
		return checkRequired(c)
	}
	var dry func(cmds []*ucli.Command)
	dry = func(cmds []*ucli.Command) {
		for _, c := range cmds {
			if len(c.Commands) == 0 && c.Name != helpName {
				c.Action = func(_ context.Context, c *ucli.Command) error { *leaf = c; return nil }
			}
			dry(c.Commands)
		}
	}
	dry(app.Commands)
	return app
}

// FuzzCommandLine feeds arbitrary command lines to the parser and its
// checks: they never panic; a line that does not parse is a one-line
// *UsageError; and the same line read again, by a tree of its own, reads
// the same command, flag values and arguments (no parse leaks into the
// next).
func FuzzCommandLine(f *testing.F) {
	f.Add("build -q --out out -i a.jsonl")
	f.Add("validate out --json - --max-examples 1")
	f.Add("help reward score")
	f.Add("eval --compare a.json b.json --report x.html")
	f.Add("fixtures sokoban -o x -n 3 -- -weird")
	f.Add("biuld --ouput=x")
	f.Add("reward score --data --out x")
	f.Add("build --seed abc")
	f.Fuzz(func(t *testing.T, text string) {
		args := append([]string{"bagen-data"}, strings.Fields(text)...)
		first, err := readLine(args)
		var ue *UsageError
		if err != nil && (!errors.As(err, &ue) || strings.Contains(err.Error(), "\n")) {
			if !strings.HasPrefix(err.Error(), "No help topic for ") {
				t.Fatalf("%q: %v is not a one-line usage error", args, err)
			}
		}
		again, err2 := readLine(args)
		if again != first || fmt.Sprint(err) != fmt.Sprint(err2) {
			t.Fatalf("%q read twice: %s (%v) then %s (%v)", args, first, err, again, err2)
		}
	})
}

// readLine parses args with dryApp and says what it read: the command, its
// flags that are set and their values, and the arguments.
func readLine(args []string) (string, error) {
	var leaf *ucli.Command
	app := dryApp(&leaf)
	app.Writer, app.ErrWriter = io.Discard, io.Discard
	err := app.Run(context.Background(), args)
	if leaf == nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s:", commandPath(leaf))
	for _, x := range leaf.Lineage() {
		for _, f := range x.Flags {
			if f.IsSet() {
				fmt.Fprintf(&b, " --%s=%v", f.Names()[0], f.Get())
			}
		}
	}
	fmt.Fprintf(&b, " args %q", leaf.Args().Slice())
	return b.String(), err
}
