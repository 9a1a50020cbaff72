package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	ucli "github.com/urfave/cli/v3"

	"bagen-data/dataset"
	"bagen-data/fixtures"
	"bagen-data/grpo"
	"bagen-data/probes"
	"bagen-data/rollout"
	"bagen-data/tokenizer"
)

// Build is the `bagen-data build` command.
var Build = &ucli.Command{
	Name:      "build",
	Usage:     "turn rollout logs into SFT, RL and eval probe parquet",
	UsageText: "bagen-data build [--input FILE|DIR ...] [--task sokoban] [--width pct30] [--out DIR] [options]",
	Description: `Reads rollout logs (rollout JSONL, estimation-dialogue JSON or canonical JSONL,
each optionally .gz or .zst), places a budget probe before every turn, labels
it with the true remaining tokens or "impossible", splits trajectories
40/50/10 into SFT/RL/eval, balances the training splits and writes
DIR/sft/train.parquet, DIR/rl/train.parquet, DIR/eval/test.parquet and
DIR/manifest.json. Without --input it runs on the embedded fixtures of --task.`,
	Flags: append([]ucli.Flag{
		&ucli.StringSliceFlag{Name: "input", Aliases: []string{"i"}, Usage: "rollout `FILE` or directory (repeatable; formats: see convert --help); default: the embedded fixtures of --task"},
		&ucli.StringFlag{Name: "out", Aliases: []string{"o"}, Value: "out", Usage: "output `DIR`"},
		taskFlag,
		&ucli.Int64Flag{Name: "budget", Usage: "token `BUDGET` for every trajectory", DefaultText: "the trajectory's own, else the task's: sokoban 2500, searchr1 3500"},
		&ucli.StringFlag{Name: "width", Value: dataset.DefaultWidth, Usage: "target interval `WIDTH`: pctN (±N% of r), fixN (±N tokens) or point"},
		tokenizerFlag,
		&ucli.StringFlag{Name: "accounting", Value: string(probes.AccountingMessage), Usage: "token `ACCOUNTING` of the numbers: message (the paper's rule: each message counted, the task's system prompt apart) " +
			"or replay (the API's own usage, the system prompt inside turn 1's input: as probes and the guard count); recorded in the manifest and every row"},
		&ucli.StringFlag{Name: "labels", Value: "paper", Usage: "labelling `RULE`: paper, or bagen-v1 (the reference script's)"},
		compatFlag,
		&ucli.IntFlag{Name: "probe-every", Value: 1, Usage: "place a probe every `N` turns"},
		&ucli.Int64Flag{Name: "min-remaining", Value: probes.DefaultMinRemaining, Usage: "drop probes with fewer than `N` remaining tokens"},
		&ucli.BoolFlag{Name: "think", Usage: "add a templated <think> to SFT answers and ask for one in the probe"},
		&ucli.StringFlag{Name: "split", Value: "40/50/10", Usage: "trajectory split `SFT/RL/EVAL` in percent"},
		&ucli.StringFlag{Name: "split-by", Value: "instance", Usage: "split `UNIT`: instance (trajectories with the same first user message share a split, so no eval prompt repeats a training prompt) or trajectory"},
		seedFlag("of the split, balancing and shuffles"),
		&ucli.IntFlag{Name: "oversample-possible", Value: dataset.DefaultOversample, Usage: "`N` copies of each possible probe in the SFT and RL splits"},
		&ucli.Float64Flag{Name: "balance-ratio", Value: dataset.DefaultBalanceRatio, Usage: "keep at most `R` × possible impossible probes in the SFT and RL splits (0: no cap)"},
		&ucli.BoolFlag{Name: "balance-eval", Usage: "balance the eval split too (default: its natural class ratio)"},
		&ucli.BoolFlag{Name: "prefix-ids", Usage: "prefix every trajectory id with its file's base name"},
		&ucli.BoolFlag{Name: "skip-invalid", Usage: "skip malformed trajectories (counted in the summary and manifest) instead of failing"},
		&ucli.StringFlag{Name: "system-prompt", Usage: "system `TEXT` replacing the task preset's"},
		&ucli.StringFlag{Name: "system-prompt-file", Usage: "read the system prompt from `FILE`"},
		&ucli.IntFlag{Name: "workers", Usage: "`N` parallel workers; the output does not depend on it", DefaultText: "all cores"},
		quietFlag,
	}, readFlags...),
	Action: runBuild,
}

var taskFlag = &ucli.StringFlag{Name: "task", Value: dataset.DefaultTask, DefaultText: "the task the records name (metadata.task), else " + dataset.DefaultTask,
	Usage: "task `NAME`: sokoban, searchr1, swebench or warehouse; overrides the records' metadata.task, with a warning where they differ"}

var compatFlag = newCompatFlag("reproduce `CODE`'s shipped behaviour: bagen-v1 is mll-lab-nu/BAGEN at 58bef4c (its splits, balancing, " +
	"row order, prompts and <think> texts; implies --labels bagen-v1 and --split-by trajectory); see the README for every difference")

// newCompatFlag is --compat with a command's own usage.
func newCompatFlag(usage string) *ucli.StringFlag {
	return &ucli.StringFlag{Name: "compat", Usage: usage, DefaultText: "none"}
}

var tokenizerFlag = &ucli.StringFlag{
	Name:        "tokenizer",
	Usage:       "token counter `SPEC` for counts the logs do not record: a tokenizer.json path, ollama:MODEL or hf:REPO",
	DefaultText: "Qwen's, cached by make tokenizer, when present",
}

// DefaultSeed is the default --seed of every command.
const DefaultSeed = 42

// seedFlag is --seed with what it seeds.
func seedFlag(what string) *ucli.Uint64Flag {
	return &ucli.Uint64Flag{Name: "seed", Value: DefaultSeed, Usage: "`SEED` " + what}
}

var quietFlag = &ucli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar or summary"}

func runBuild(ctx context.Context, c *ucli.Command) error {
	if c.NArg() > 0 {
		return usage("build", fmt.Errorf("unexpected argument %q (inputs go in --input)", c.Args().First()))
	}
	cfg, err := buildConfig(c, c.String("task"))
	if err != nil {
		return usage("build", err)
	}
	srcs, err := buildSources(c, cfg.Task.Name)
	if err != nil {
		return err
	}
	task, err := recordsTask(ctx, c, srcs)
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	if task != cfg.Task.Name {
		if cfg, err = buildConfig(c, task); err != nil {
			return usage("build", err)
		}
	}
	counter, name, err := openCounter(ctx, c)
	if err != nil {
		return err
	}
	if counter != nil {
		cfg.Counter = counter
	}
	cfg.Tokenizer = name
	bar := newProgress(c.Bool("quiet"))
	cfg.Progress = bar.update
	m, err := dataset.Build(ctx, srcs, c.String("out"), cfg)
	bar.done()
	if err != nil {
		return withSkipped(withFlagHints(err, "pass --budget N"), srcs)
	}
	if !c.Bool("quiet") {
		printSummary(c.Root().Writer, c.String("out"), m)
		printSkipped(c.Root().Writer, srcs[0].Options)
	}
	warnOneClass(c.Root().ErrWriter, m)
	return nil
}

// buildConfig reads and checks every flag that shapes the build of task,
// without I/O beyond --system-prompt-file; the tokenizer is opened
// afterwards.
func buildConfig(c *ucli.Command, taskName string) (dataset.Config, error) {
	var errs []error
	compat, err := compatFlags(c)
	errs = append(errs, err)
	// A task or width that does not parse is reported once, by its parser:
	// its name stands in so that Validate does not add "not set".
	task, err := compat.Preset(taskName)
	if err != nil {
		task.Name = taskName
	}
	errs = append(errs, err)
	switch {
	case c.IsSet("system-prompt") && c.IsSet("system-prompt-file"):
		errs = append(errs, errors.New("system-prompt: give --system-prompt or --system-prompt-file, not both"))
	case c.IsSet("system-prompt"):
		task = task.WithSystem(c.String("system-prompt"))
	case c.IsSet("system-prompt-file"):
		text, err := probes.ReadSystemFile(c.String("system-prompt-file"))
		errs = append(errs, err)
		task = task.WithSystem(text)
	}
	width, err := probes.ParseWidth(c.String("width"))
	if err != nil {
		width = probes.Width{Text: c.String("width")}
	}
	errs = append(errs, err)
	labels, err := probes.ParseLabels(c.String("labels"))
	errs = append(errs, err)
	accounting, err := probes.ParseAccountingKind(c.String("accounting"))
	errs = append(errs, err)
	ratio, err := dataset.ParseRatio(c.String("split"))
	errs = append(errs, err)
	switch c.String("split-by") {
	case "instance", "trajectory":
	default:
		errs = append(errs, fmt.Errorf("split-by: want instance or trajectory, got %q", c.String("split-by")))
	}
	// The library reads 0 as 1; on the command line 0 is a mistake.
	for _, name := range []string{"probe-every", "oversample-possible"} {
		if c.Int(name) == 0 {
			errs = append(errs, fmt.Errorf("--%s: got 0, want at least 1", name))
		}
	}
	cfg := dataset.Config{
		Task: task, Compat: compat, Budget: c.Int64("budget"), Width: width, Accounting: accounting,
		Probes:            probes.Options{Labels: labels, Every: c.Int("probe-every"), MinRemaining: new(c.Int64("min-remaining"))},
		Think:             c.Bool("think"),
		Ratio:             ratio,
		Seed:              c.Uint64("seed"),
		SplitByTrajectory: c.String("split-by") == "trajectory",
		Balance:           dataset.Balance{Oversample: c.Int("oversample-possible"), Ratio: new(c.Float64("balance-ratio"))},
		BalanceEval:       c.Bool("balance-eval"), PrefixIDs: c.Bool("prefix-ids"), SkipInvalid: c.Bool("skip-invalid"),
		Workers: c.Int("workers"), Version: Version,
	}
	errs = append(errs, flagErrors(cfg.Validate(), buildFlags))
	return cfg, errors.Join(errs...)
}

// buildFlags names the flag of each dataset.Config field.
var buildFlags = map[string]string{
	"Task": "task", "Budget": "budget", "Width": "width", "Probes.Every": "probe-every",
	"Probes.MinRemaining": "min-remaining", "Ratio": "split", "Balance.Oversample": "oversample-possible",
	"Balance.Ratio": "balance-ratio", "Workers": "workers", "Accounting": "accounting",
}

// flagError is a library's field error restated for the command line.
type flagError struct {
	flag string
	err  error // the field's reason
	orig error // the library's error, for errors.Is/As
}

func (e *flagError) Error() string { return "--" + e.flag + ": " + e.err.Error() }

func (e *flagError) Unwrap() error { return e.orig }

// flagErrors restates the *dataset.FieldError and *grpo.FieldError values
// in err (one, or several joined) with the flag that sets each field, as
// flags names them; other errors pass through.
func flagErrors(err error, flags map[string]string) error {
	if err == nil {
		return nil
	}
	list := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	}
	for i, e := range list {
		var field string
		var reason error
		var de *dataset.FieldError
		var ge *grpo.FieldError
		switch {
		case errors.As(e, &de):
			field, reason = de.Field, de.Err
		case errors.As(e, &ge):
			field, reason = ge.Field, ge.Err
		default:
			continue
		}
		if flag, ok := flags[field]; ok {
			list[i] = &flagError{flag: flag, err: reason, orig: e}
		}
	}
	return errors.Join(list...)
}

// compatFlags reads --compat and refuses flags that contradict it.
func compatFlags(c *ucli.Command) (probes.Compat, error) {
	compat, err := probes.ParseCompat(c.String("compat"))
	if err != nil || compat.Name == "" {
		return compat, err
	}
	var errs []error
	if c.IsSet("labels") && c.String("labels") != compat.Labels.String() {
		errs = append(errs, fmt.Errorf("labels: --compat %s labels as %s, not %s", compat, compat.Labels, c.String("labels")))
	}
	if c.IsSet("split-by") && c.String("split-by") != "trajectory" {
		errs = append(errs, fmt.Errorf("split-by: --compat %s splits trajectory by trajectory, not by %s", compat, c.String("split-by")))
	}
	return compat, errors.Join(errs...)
}

// openCounter opens --tokenizer, or the cached Qwen tokenizer when the flag
// is absent and the cache holds one. It returns nil when there is none.
func openCounter(ctx context.Context, c *ucli.Command) (*tokenizer.Tokenizer, string, error) {
	spec := c.String("tokenizer")
	if spec == "" {
		path := tokenizer.DefaultPath()
		if _, err := os.Stat(path); err != nil {
			return nil, "", nil
		}
		t, err := tokenizer.Load(path)
		return t, "qwen (cached tokenizer.json)", err
	}
	t, err := tokenizer.Open(ctx, spec)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", c.FullName(), err)
	}
	return t, spec, nil
}

// recordsTask is the task of the run: the one the inputs' records name
// (metadata.task), unless --task is given, which overrides them with a
// warning where they disagree. Inputs naming two tasks are an error; inputs
// naming none, and the embedded fixtures, take --task.
func recordsTask(ctx context.Context, c *ucli.Command, srcs []rollout.Source) (string, error) {
	flag := c.String("task")
	if len(c.StringSlice("input")) == 0 {
		return flag, nil
	}
	seen, err := rollout.Tasks(ctx, srcs)
	switch {
	case err != nil:
		return "", err
	case len(seen) == 0:
		return flag, nil
	case c.IsSet("task"):
		for _, s := range seen {
			if s.Task != flag {
				fmt.Fprintf(c.Root().ErrWriter, "warning: --task %s overrides task %s, which %s names\n", flag, s.Task, s.At)
			}
		}
		return flag, nil
	case len(seen) > 1:
		return "", &rollout.MixedTasksError{Seen: seen}
	}
	return seen[0].Task, nil
}

// buildSources are the --input files read with the read flags, else the
// embedded fixtures of task.
func buildSources(c *ucli.Command, task string) ([]rollout.Source, error) {
	o, err := readOptions(c)
	if err != nil {
		return nil, err
	}
	if inputs := c.StringSlice("input"); len(inputs) > 0 {
		return o.Expand(inputs)
	}
	names, err := fixtures.Files(task)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no embedded fixtures for task %s: pass --input", task)
	}
	srcs := make([]rollout.Source, len(names))
	for i, n := range names {
		srcs[i] = rollout.FSSource(fixtures.Rollouts, n)
		srcs[i].Options = o
	}
	return srcs, nil
}

// warnOneClass warns, as validate does, about splits with probes of one
// class only: F1 and the recall of the absent class are undefined there.
func warnOneClass(w io.Writer, m *dataset.Manifest) {
	for _, s := range []struct {
		name string
		st   dataset.SplitStats
	}{{dataset.SplitSFT, m.Splits.SFT}, {dataset.SplitRL, m.Splits.RL}, {dataset.SplitEval, m.Splits.Eval}} {
		p := s.st.Probes
		if p.Possible+p.Impossible > 0 && (p.Possible == 0 || p.Impossible == 0) {
			fmt.Fprintf(w, "warning: the %s split has %d possible and %d impossible probes: F1 and the recall of the absent class are undefined (logs with failed or over-budget rollouts, or a smaller --budget)\n",
				s.name, p.Possible, p.Impossible)
		}
	}
}

func printSummary(w io.Writer, dir string, m *dataset.Manifest) {
	fmt.Fprintf(w, "%d trajectories from %d input file(s)", m.Trajectories, len(m.Inputs))
	if m.Invalid.Count > 0 {
		fmt.Fprintf(w, ", %d invalid skipped (first: %s)", m.Invalid.Count, m.Invalid.Examples[0].Err)
	}
	fmt.Fprintf(w, "; task %s, width %s, labels %s, accounting %s", m.Config.Task, m.Config.Width, m.Config.Labels, m.Config.Accounting)
	if m.Config.Compat != "" {
		fmt.Fprintf(w, ", compat %s", m.Config.Compat)
	}
	fmt.Fprintln(w)
	printReadCounts(w, m.Outcomes, m.ReplacedUTF8)
	if g := m.Groups; g.By != "trajectory" {
		fmt.Fprintf(w, "split by instance: %d groups, largest %d trajectories\n", g.Count, g.Largest)
		if g.Largest > 1 && 10*g.Largest > m.Trajectories {
			fmt.Fprintf(w, "warning: one first user message starts %d of %d trajectories; if it is a generic instruction rather than the task instance, use --split-by trajectory\n", g.Largest, m.Trajectories)
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "split\ttrajectories\tprobes pos/imp\trows pos/imp\tduplicates\tdownsampled\tfile\t")
	for _, s := range []struct {
		name string
		st   dataset.SplitStats
	}{{dataset.SplitSFT, m.Splits.SFT}, {dataset.SplitRL, m.Splits.RL}, {dataset.SplitEval, m.Splits.Eval}} {
		fmt.Fprintf(tw, "%s\t%d\t%d/%d\t%d/%d\t%d\t%d\t%s\t\n", s.name, s.st.Trajectories.Total(),
			s.st.Probes.Possible, s.st.Probes.Impossible, s.st.Rows.Possible, s.st.Rows.Impossible,
			s.st.Duplicates, s.st.Downsampled, filepath.Join(dir, filepath.FromSlash(s.st.File)))
	}
	tw.Flush()
}
