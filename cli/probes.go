package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"

	ucli "github.com/urfave/cli/v3"

	"bagen-data/dataset"
	"bagen-data/probes"
)

// Probes is the `bagen-data probes` command.
var Probes = &ucli.Command{
	Name:  "probes",
	Usage: "build a rollout-replay benchmark probe set (the paper's evaluation sets)",
	UsageText: "bagen-data probes --task TASK [--input FILE|DIR ...] [--out probes.parquet] [--budget N|median]\n" +
		"    [--tokenizer SPEC] [--max-samples 512 --length-bins 8 --seed 42] [--preset half_reachable|bagen-v1]",
	Description: `For every rollout of T turns, one probe per non-terminal prefix k = 1 … T−1:
the logged turns 1 … k replayed as history, then the task's estimation prompt
(with the <think> output specification) and the per-turn usage of those turns,
input tokens excluding the replayed history. A token probe is feasible iff the
rollout succeeded and its total fits the budget; remaining = total − used
through k. Warehouse rollouts are paired with sampled challenges (target cash,
time, warehouse and cost budgets; --preset) and ask for three intervals.
SWE-bench families are capped at --max-samples prefixes by a length-bucketed
round-robin. Writes one parquet in the eval schema (extra_info.split =
"probes") that bagen-data eval and bagen-data reward score read. Without
--input it runs on the embedded fixtures of --task.`,
	Flags: append([]ucli.Flag{
		&ucli.StringSliceFlag{Name: "input", Aliases: []string{"i"}, Usage: "rollout `FILE` or directory (repeatable; formats: see convert --help); default: the embedded fixtures of --task"},
		&ucli.StringFlag{Name: "out", Aliases: []string{"o"}, Value: "probes.parquet", Usage: "output parquet `FILE`"},
		taskFlag,
		&ucli.StringFlag{Name: "budget", Usage: "token `BUDGET`: N tokens, or median (the family's lower median total)", DefaultText: "the trajectory's own, else the task's: sokoban 2500, searchr1 3500"},
		tokenizerFlag,
		&ucli.IntFlag{Name: "max-samples", Usage: "cap the probes at `N` by length-bucketed round-robin; 0: no cap", DefaultText: "512 for swebench, else 0"},
		&ucli.IntFlag{Name: "length-bins", Value: 8, Usage: "`N` rollout-length buckets of the subsampling"},
		seedFlag("of the subsampling and of the Warehouse challenges"),
		&ucli.StringFlag{Name: "preset", Value: "half_reachable", Usage: "Warehouse challenges `PRESET`: half_reachable (the paper's text) or bagen-v1 (the authors' shipped variant)"},
		&ucli.StringFlag{Name: "width", Value: "pct30", Usage: "target interval `WIDTH` of token probes' reward_model.ground_truth: pctN, fixN or point"},
		&ucli.BoolFlag{Name: "prefix-ids", Usage: "prefix every trajectory id with its file's base name"},
		newCompatFlag("build the benchmark as `CODE` does: bagen-v1 is mll-lab-nu/BAGEN at 58bef4c (the rollout's own or the shipped estimation " +
			"system prompt, the shipped estimation prompt, history as logged, estimation dialogues read as their env reads them, their median budget and SWE-bench sample, Warehouse preset bagen-v1)"),
		&ucli.StringFlag{Name: "system-prompt-file", Usage: "show the system prompt of `FILE` (white space around it stripped) instead of the task's"},
		&ucli.StringFlag{Name: "probe-prompt-file", Usage: "ask with the estimation prompt of `FILE`, output specification included: {completed_turns}, {turn_token_usage_text} and {max_context_window_tokens} are filled"},
		quietFlag,
	}, readFlags...),
	Action: runProbes,
}

// probesConfig is the checked flags of one run.
type probesConfig struct {
	set   probes.SetConfig
	width probes.Width
}

func runProbes(ctx context.Context, c *ucli.Command) error {
	if c.NArg() > 0 {
		return usage("probes", fmt.Errorf("unexpected argument %q (inputs go in --input)", c.Args().First()))
	}
	cfg, err := probesFlags(ctx, c, c.String("task"))
	if err != nil {
		return err
	}
	srcs, err := buildSources(c, cfg.set.Task.Name)
	if err != nil {
		return err
	}
	task, err := recordsTask(ctx, c, srcs)
	if err != nil {
		return fmt.Errorf("probes: %w", err)
	}
	if task != cfg.set.Task.Name {
		if cfg, err = probesFlags(ctx, c, task); err != nil {
			return err
		}
	}
	rs, err := probes.ReadReplays(ctx, srcs, cfg.set.Replay)
	if err != nil {
		return withSkipped(withFlagHints(err, ""), srcs)
	}
	set, err := probes.NewSet(rs, cfg.set)
	if err != nil {
		return withFlagHints(err, "pass --budget N or --budget median")
	}
	rows := dataset.BenchRows(cfg.set.Task.Name, cfg.width, set.IDs, set.Bench)
	if err := dataset.WriteFile(ctx, c.String("out"), rows); err != nil {
		return fmt.Errorf("probes: %w", err)
	}
	if !c.Bool("quiet") {
		printSet(c.Root().Writer, cfg.set, set.Stats, c.String("out"))
		printSkipped(c.Root().Writer, srcs[0].Options)
	}
	return nil
}

// probesFlags checks every flag and reports all problems at once.
func probesFlags(ctx context.Context, c *ucli.Command, taskName string) (probesConfig, error) {
	var errs []error
	compat, err := probes.ParseCompat(c.String("compat"))
	errs = append(errs, err)
	task, err := compat.Bench(taskName)
	errs = append(errs, err)
	task, err = promptFiles(c, task)
	errs = append(errs, err)
	budget, err := probes.ParseBudget(c.String("budget"))
	errs = append(errs, err)
	presetName := c.String("preset")
	if !c.IsSet("preset") && compat.Name != "" {
		presetName = compat.Name // the authors' shipped Warehouse scheme
	}
	preset, err := probes.ParsePreset(presetName)
	errs = append(errs, err)
	width, err := probes.ParseWidth(c.String("width"))
	errs = append(errs, err)
	warehouse := task.Ledger()
	switch {
	case warehouse && c.IsSet("budget"):
		errs = append(errs, errors.New("budget: the warehouse task has no token budget; its budgets come from --preset"))
	case !warehouse && c.IsSet("preset"):
		errs = append(errs, fmt.Errorf("preset: applies to the warehouse task only, not %s", task.Name))
	}
	maxSamples := c.Int("max-samples")
	if !c.IsSet("max-samples") && task.Name == "swebench" {
		maxSamples = 512
	}
	if maxSamples < 0 {
		errs = append(errs, fmt.Errorf("max-samples: want 0 (no cap) or more, got %d", maxSamples))
	}
	if c.Int("length-bins") < 1 {
		errs = append(errs, fmt.Errorf("length-bins: want at least 1, got %d", c.Int("length-bins")))
	}
	var counter probes.Counter
	if !warehouse {
		t, _, err := openCounter(ctx, c)
		errs = append(errs, err)
		if t != nil {
			counter = t
		}
	}
	cfg := probesConfig{width: width, set: probes.SetConfig{
		Compat: compat, Task: task, Budget: budget, Preset: preset,
		Sampling: probes.Sampling{MaxSamples: maxSamples, LengthBins: c.Int("length-bins"), Seed: c.Uint64("seed")},
		Replay:   probes.ReplayOptions{System: task.System, Counter: counter, PrefixIDs: c.Bool("prefix-ids"), Ledger: warehouse, Compat: compat},
	}}
	return cfg, errors.Join(errs...)
}

// promptFiles applies --system-prompt-file and --probe-prompt-file.
func promptFiles(c *ucli.Command, task probes.Task) (probes.Task, error) {
	var errs []error
	if path := c.String("system-prompt-file"); path != "" {
		text, err := probes.ReadSystemFile(path)
		errs = append(errs, err)
		task = task.WithSystem(text)
	}
	if path := c.String("probe-prompt-file"); path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("probe prompt: %w", err))
		}
		task = task.WithProbePrompt(string(b))
	}
	return task, errors.Join(errs...)
}

// printBases says how many turns did not take their input from the log's
// numbers, and why; nothing when every turn did.
func printBases(w io.Writer, compat string, b map[probes.Basis]int) {
	if est := b[probes.BasisEstimated]; est > 0 {
		fmt.Fprintf(w, "\n%d turn(s) after an output with hidden reasoning the log does not record (the next request grew by less than it): its visible part estimated as the tokenizer's count of the replayed text", est)
	}
	if cut := b[probes.BasisHistoryCut]; cut > 0 && compat != "" {
		fmt.Fprintf(w, "\n%d turn(s) with a cut history (the request grew by less than the previous visible output): input 0, as the authors' env clamps it", cut)
		b = maps.Clone(b)
		b[probes.BasisHistoryCut] = 0
	}
	fell := b[probes.BasisNoUsage] + b[probes.BasisAfterGap] + b[probes.BasisHistoryCut]
	if fell > 0 {
		fmt.Fprintf(w, "\n%d turn(s) fell back to message counts: %d without usage, %d after a turn without usage, %d with a cut history (the request grew by less than the previous visible output)",
			fell, b[probes.BasisNoUsage], b[probes.BasisAfterGap], b[probes.BasisHistoryCut])
	}
}

// printSet is a run's summary of the set written to out.
func printSet(w io.Writer, cfg probes.SetConfig, s probes.SetStats, out string) {
	fmt.Fprintf(w, "%s: %d rollouts (%d succeeded, %d feasible); %s", cfg.Task.Name, s.Rollouts, s.Succeeded, s.Feasible, s.Setting)
	if cfg.Compat.Name != "" {
		fmt.Fprintf(w, "; compat %s", cfg.Compat.Name)
	}
	if s.Reachable+s.Unreachable > 0 {
		fmt.Fprintf(w, " (%d unreachable, %d reachable challenges)", s.Unreachable, s.Reachable)
	} else {
		fmt.Fprintf(w, "; input tokens from messages %d, api %d, api-deltas %d",
			s.Inputs[probes.InputMessages], s.Inputs[probes.InputAPI], s.Inputs[probes.InputAPIDeltas])
		printBases(w, cfg.Compat.Name, s.Bases)
	}
	fmt.Fprintf(w, "\n%d candidate prefixes, %d probes (%d possible, %d impossible) -> %s\n",
		s.Candidates, s.Possible+s.Impossible, s.Possible, s.Impossible, out)
}
