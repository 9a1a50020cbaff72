package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v3"

	"bagen-data/dataset"
	"bagen-data/tokenizer"
)

// readmeLine is a bagen-data command line of a code block of the README
// or a docs/ page.
type readmeLine struct {
	file string // as the reader names it: README.md, docs/eval.md
	line int    // 1-based, where it starts
	text string // as written, continuation lines joined
	args []string
}

// readmeCommands extracts the bagen-data command lines of the code blocks
// of a Markdown file: a "$ " prompt, leading VAR=value assignments and a
// trailing "# comment" are dropped, "\" continues a line.
func readmeCommands(t *testing.T, file string) []readmeLine {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", file))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var out []readmeLine
	in := false
	for i := 0; i < len(lines); i++ {
		if strings.HasPrefix(strings.TrimSpace(lines[i]), "```") {
			in = !in
			continue
		}
		if !in {
			continue
		}
		start, text := i+1, strings.TrimSpace(lines[i])
		for strings.HasSuffix(text, "\\") && i+1 < len(lines) {
			i++
			text = strings.TrimSpace(strings.TrimSuffix(text, "\\") + " " + strings.TrimSpace(lines[i]))
		}
		text = strings.TrimPrefix(text, "$ ")
		words := shellWords(text)
		for len(words) > 0 && regexp.MustCompile(`^[A-Z_]+=`).MatchString(words[0]) {
			words = words[1:]
		}
		if len(words) < 2 || words[0] != "bagen-data" {
			continue
		}
		out = append(out, readmeLine{file: file, line: start, text: text, args: words[1:]})
	}
	return out
}

// shellWords splits a command line as a shell would for these lines:
// quotes group, "#" after a space starts a comment, ~/ is $HOME.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == '#' && !inWord:
			return words
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	for i, w := range words {
		if strings.HasPrefix(w, "~/") {
			words[i] = filepath.Join(os.Getenv("HOME"), w[2:])
		}
	}
	return words
}

// readmeNotRun are command lines of the README and docs/ that the test
// checks for syntax but does not run, each with the reason; keyed by a
// prefix of the line.
var readmeNotRun = map[string]string{
	"bagen-data convert -i runs/":                               "illustrative: the reader's own agent runs and harness report",
	"bagen-data validate --max-examples 3 leaky/":               "illustrative: a dataset made leaky by hand to show the findings (exits 1 by design)",
	"bagen-data validate --max-examples 2 edited":               "illustrative: make run's dataset edited with DuckDB to show a finding (exits 1 by design; TestValidateCatchesBreakages makes it)",
	"bagen-data eval --endpoint http://127.0.0.1:8788/v1":       "needs grpo serve, which needs a running Ollama (TestGRPOServeEqualsEval runs it)",
	"bagen-data validate handmade/":                             "illustrative: a hand-made file with wrong labels to show the findings (exits 1 by design)",
	"bagen-data eval --data out/eval/test.parquet --endpoint":   "needs a Chat Completions server (vLLM, OpenAI)",
	"bagen-data eval --compare --report compare.html qwen.json": "compares the outputs of the two endpoint runs above",
	"bagen-data eval --data small/test.parquet --ollama":        "needs a running Ollama serving the tiny model (TestGRPOEndToEnd runs eval --ollama)",
	"bagen-data grpo ": "needs a running Ollama (TestGRPOEndToEnd runs grpo train and grpo eval)",
	"bagen-data eval --compare zero/eval.json run/eval.json":          "compares the outputs of the grpo runs above",
	"bagen-data reward serve":                                         "a server: TestRewardServeSecondSignal and the reward/server tests run it",
	"bagen-data baseline serve":                                       "a server: TestBaselineServeEqualsEval runs it",
	"bagen-data guard --upstream https://":                            "a proxy in front of a hosted model API, serving until stopped (the guard tests run it with the real CLIs)",
	"bagen-data guard --upstream http://127.0.0.1:8000":               "a proxy in front of a local model server, serving until stopped (the guard tests run it with the real CLIs)",
	"bagen-data build --input runs/":                                  "illustrative: the reader's own guarded runs (TestGuardTrainServeLoop runs this loop)",
	"bagen-data probes --task swebench --input runs":                  "illustrative: the reader's own guarded runs (TestEvalGuardEstimates runs this chain)",
	"bagen-data eval --data runs.parquet --predictions runs/":         "scores the probes of the reader's own ledger above (TestEvalGuardEstimates)",
	"bagen-data eval --data live.parquet --predictions runs2/":        "scores the probes of the reader's own ledger above (TestGuardTrainServeLoop)",
	"bagen-data baseline train --data out --data sk-train --features": "an ablation row: the benchmark's training with fewer feature groups",
	"bagen-data baseline eval --model ab-numeric.json":                "scores the ablation row above",
	"bagen-data baseline train --data out --data sk-train --coverage": "the benchmark's training at another coverage",
	"bagen-data baseline eval --model sokoban-70.json":                "scores the model above",
	"bagen-data build -i sk-train-6a.jsonl.zst -i sk-train-6b.jsonl.zst -i sk-train-6c.jsonl.zst -i sk-train-8a.jsonl.zst -i sk-train-8b.jsonl.zst -i sk-train-8c.jsonl.zst --success-file": "needs coin-train.json, which a python line writes (TestBaselineIndependentSuccess runs the same check)",
	"bagen-data build -i sk-test-7a.jsonl.zst -i sk-test-7b.jsonl.zst -i sk-test-6.jsonl.zst -i sk-test-8.jsonl.zst -i sk-test-9.jsonl.zst --success-file":                                  "needs coin-test.json, which a python line writes",
	"bagen-data baseline train --data coin-train": "trains on the coin-toss build above",
	"bagen-data baseline eval --model coin.json":  "scores the coin-toss model above",
}

// isSynopsis reports whether a line is a usage form ([optional],
// alternatives, …) rather than a command to run.
func isSynopsis(args []string) bool {
	for _, a := range args {
		if strings.ContainsAny(a, "[]()|") || strings.Contains(a, "...") || strings.Contains(a, "…") {
			return true
		}
	}
	return false
}

// synopsisArgs turns a usage form into one command line that must parse:
// brackets and parentheses dropped, the first of a|b alternatives taken,
// "..." and "[options]" dropped, and placeholder values (FILE, N, MODEL)
// replaced by a value of the flag's type.
func synopsisArgs(app *ucli.Command, args []string) []string {
	var out []string
	for _, a := range args {
		a = strings.Trim(a, "[]()")
		a = strings.TrimSuffix(strings.TrimSuffix(a, "..."), "…")
		if i := strings.IndexByte(a, '|'); i >= 0 {
			a = a[:i]
		}
		if a == "" || a == "options" {
			continue
		}
		out = append(out, a)
	}
	var path []*ucli.Command
	cmds := app.Commands
	for i, a := range out {
		if c := find(cmds, a); c != nil && len(path) == i {
			path, cmds = append(path, c), c.Commands
			continue
		}
		if i == 0 || !isFlag(out[i-1]) || !regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`).MatchString(a) || len(path) == 0 {
			continue
		}
		for _, f := range path[len(path)-1].Flags {
			if hasName(f, strings.TrimLeft(out[i-1], "-")) {
				out[i] = sampleValue(f)
			}
		}
	}
	return out
}

// sampleValue is a value that a flag of f's type accepts.
func sampleValue(f ucli.Flag) string {
	switch valueClass(f) {
	case "integer", "number":
		return "1"
	case "duration":
		return "1s"
	}
	return "x"
}

// parses reports whether args parse as the command line they are: every
// command and flag known, every value of its flag's type, the required
// flags given. It runs nothing.
func parses(args []string) error {
	var leaf *ucli.Command
	var help bytes.Buffer
	app := dryApp(&leaf)
	app.Writer, app.ErrWriter = &help, io.Discard
	if err := app.Run(context.Background(), append([]string{"bagen-data"}, args...)); err != nil {
		return err
	}
	if leaf == nil && help.Len() == 0 {
		return fmt.Errorf("no command")
	}
	return nil
}

// Every command line of the README and of the docs/ pages parses; the
// usage forms too; and every line that needs no network service runs
// against the fixtures and exits 0. All files share one sandbox, as a
// reader's clone would: the commands that write (build, probes, fixtures,
// convert) run first, in the README and then in the pages' name order,
// then those that read.
func TestREADMECommands(t *testing.T) {
	lines := readmeCommands(t, "README.md")
	if len(lines) < 12 {
		t.Fatalf("found %d command lines in the README, want at least 12 (a quickstart per job)", len(lines))
	}
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		lines = append(lines, readmeCommands(t, "docs/"+filepath.Base(p))...)
	}
	if len(lines) < 100 {
		t.Fatalf("found %d command lines in the README and docs/, want at least 100", len(lines))
	}
	var run []readmeLine
	for _, l := range lines {
		args := l.args
		if isSynopsis(args) {
			args = synopsisArgs(App(), args)
		}
		if err := parses(args); err != nil {
			t.Errorf("%s:%d: %s\ndoes not parse: %v", l.file, l.line, l.text, err)
			continue
		}
		if !isSynopsis(l.args) && notRun("bagen-data "+strings.Join(l.args, " ")) == "" {
			run = append(run, l)
		}
	}
	dir := readmeSandbox(t)
	haveTokenizer := fileExists(tokenizer.DefaultPath())
	for _, writes := range []bool{true, false} {
		for _, l := range run {
			if writesOutputs(l.args) != writes {
				continue
			}
			if needsTokenizer(l.args) && !haveTokenizer {
				t.Logf("%s:%d: skipped: needs the tokenizer (make tokenizer)", l.file, l.line)
				continue
			}
			makePredictions(t, dir, l.args)
			if r := bagen(t, dir, l.args...); r.code != 0 {
				t.Errorf("%s:%d: %s\nexit %d: %s", l.file, l.line, l.text, r.code, r.stderr)
			}
		}
	}
}

func notRun(text string) string {
	for prefix, why := range readmeNotRun {
		if strings.HasPrefix(text, prefix) {
			return why
		}
	}
	return ""
}

func writesOutputs(args []string) bool {
	switch args[0] {
	case "build", "probes", "fixtures", "convert":
		return true
	}
	return false
}

func needsTokenizer(args []string) bool {
	for _, a := range args {
		if a == "fixtures" || strings.Contains(a, "tokenizer") {
			return true
		}
	}
	return false
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// readmeSandbox is a directory holding what the README's commands read:
// rollouts.jsonl (an embedded Sokoban fixture), the tokenizer as
// qwen-tokenizer.json, the repository's probes/, rollout/ and fixtures/
// (the README's commands run from a clone's top directory) and ./out, the
// build of the embedded fixtures (make run).
func readmeSandbox(t *testing.T) string {
	dir := t.TempDir()
	p := fixtureFile(t, dir, "rollouts/sokoban/6x6_noise0.30.jsonl.zst")
	if err := os.Rename(p, filepath.Join(dir, "rollouts.jsonl")); err != nil {
		t.Fatal(err)
	}
	if fileExists(tokenizer.DefaultPath()) {
		os.Symlink(tokenizer.DefaultPath(), filepath.Join(dir, "qwen-tokenizer.json"))
	}
	// The README's commands run from a clone's top directory.
	for _, d := range []string{"probes", "rollout", "fixtures"} {
		abs, _ := filepath.Abs(filepath.Join("..", d))
		os.Symlink(abs, filepath.Join(dir, d))
	}
	if r := bagen(t, dir, "build", "-q"); r.code != 0 {
		t.Fatalf("make run's build: %s", r.stderr)
	}
	return dir
}

// makePredictions writes the --predictions file a command reads when it
// is not there: every probe of its --data answered "impossible".
func makePredictions(t *testing.T, dir string, args []string) {
	var data, preds string
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--data":
			data = args[i+1]
		case "--predictions":
			preds = args[i+1]
		}
	}
	if preds == "" || fileExists(filepath.Join(dir, preds)) {
		return
	}
	rows, err := dataset.ReadRL(dataFile(filepath.Join(dir, data)))
	if err != nil {
		t.Fatalf("predictions for %v: %v", args, err)
	}
	f, err := os.Create(filepath.Join(dir, preds))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, r := range rows {
		enc.Encode(map[string]string{"custom_id": r.ExtraInfo.CustomID, "response": "<answer>impossible</answer>"})
	}
	w.Flush()
	f.Close()
}

// The usage forms every command's help shows parse as written, in every
// command, commands added later included: "--max-body 64MiB" in a help
// that the flag then refuses is a failure.
func TestHelpUsageParses(t *testing.T) {
	var walk func(cmds []*ucli.Command)
	n := 0
	walk = func(cmds []*ucli.Command) {
		for _, c := range cmds {
			for _, line := range strings.Split(c.UsageText, "\n") {
				words := shellWords(strings.TrimSpace(line))
				if len(words) < 2 || words[0] != "bagen-data" {
					continue
				}
				n++
				if err := parses(synopsisArgs(App(), words[1:])); err != nil {
					t.Errorf("%s: usage %q does not parse: %v", c.Name, line, err)
				}
			}
			walk(c.Commands)
		}
	}
	walk(App().Commands)
	if n < 10 {
		t.Errorf("checked %d usage lines, want at least 10", n)
	}
}

// The flag table of build's page (docs/build.md) names every visible flag
// of build, and only those.
func TestREADMEBuildFlagTable(t *testing.T) {
	b, err := os.ReadFile("../docs/build.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "| flag | default | meaning |")
	if start < 0 {
		t.Fatal("no build flag table in docs/build.md")
	}
	documented := map[string]bool{}
	for _, row := range strings.Split(text[start:], "\n")[2:] {
		if !strings.HasPrefix(row, "| ") {
			break
		}
		first := strings.Split(row, "|")[1]
		for _, m := range regexp.MustCompile("`(-{1,2}[a-z0-9-]+)").FindAllStringSubmatch(first, -1) {
			documented[strings.TrimLeft(m[1], "-")] = true
		}
	}
	flags := map[string]bool{}
	for _, f := range append(App().Flags, Build.Flags...) { // the tool's flags (--cpuprofile) are build's too
		if visible(f) {
			for _, n := range f.Names() {
				flags[n] = true
			}
		}
	}
	delete(flags, "help")
	delete(flags, "h")
	for n := range flags {
		if !documented[n] {
			t.Errorf("build %s is not in the flag table of docs/build.md", dashed(n))
		}
	}
	for n := range documented {
		if !flags[n] {
			t.Errorf("the flag table of docs/build.md names %s, which build does not have", dashed(n))
		}
	}
}

// find is the command of cmds named name, if any.
func find(cmds []*ucli.Command, name string) *ucli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// isFlag reports whether a command-line word is a flag ("-" alone is a
// value: standard input or output).
func isFlag(a string) bool { return len(a) > 1 && a[0] == '-' }
