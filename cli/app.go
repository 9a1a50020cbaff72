// Package cli holds the bagen-data commands, one file per verb. Each file
// exports one *ucli.Command; App assembles them. urfave/cli v3 parses the
// command line, flags after arguments included; cmdline.go restates its
// errors as one line and checks the outputs before any work.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"reflect"
	"strings"
	"sync/atomic"
	"syscall"

	ucli "github.com/urfave/cli/v3"

	"bagen-data/dataset"
	"bagen-data/grpo"
	"bagen-data/probes"
	"bagen-data/rollout"
)

// Version is the tool version recorded in manifests; set with -ldflags.
var Version = "0.1.0-dev"

// App returns the bagen-data command line: the tool's command with every
// command registered. urfave/cli keeps what it parses in the commands and
// flags themselves, so each call builds a tree of its own, for one run.
func App() *ucli.Command {
	app, _ := newApp()
	return app
}

// newApp is App and the line its run reads, known once parsed.
func newApp() (*ucli.Command, *line) {
	l := &line{}
	app := &ucli.Command{
		Name:                  "bagen-data",
		Usage:                 "turn LLM-agent rollout logs into budget-estimation training data and rewards",
		UsageText:             "bagen-data [global options] command [command options]",
		Version:               Version,
		EnableShellCompletion: true,
		HideHelpCommand:       true,
		Flags:                 []ucli.Flag{fresh(cpuProfileFlag)},
		Before:                startProfile,
		After:                 stopProfile,
		ArgValidator:          l.check,
		ExitErrHandler:        func(context.Context, *ucli.Command, error) {}, // Main prints and exits
		Commands: []*ucli.Command{
			Build,
			Convert,
			Reward,
			Validate,
			Eval,
			Fixtures,
			GRPO,
			Probes,
			Guard,
			Baseline,
			helpCommand,
		},
	}
	app.Commands = prepareCommands(app.Commands)
	app.OnUsageError, app.Action = usageError, noCommand
	return app, l
}

// prepareCommands returns copies of cmds (see fresh) in which a command
// line that does not parse is one line naming the flag, instead of the
// help and then the error, a text flag does not take a flag for its value,
// and a command that only lists others names the one the line asks for
// and it lacks.
func prepareCommands(cmds []*ucli.Command) []*ucli.Command {
	out := make([]*ucli.Command, len(cmds))
	for i, c := range cmds {
		cp := *c
		cp.Flags = make([]ucli.Flag, len(c.Flags))
		for j, f := range c.Flags {
			cp.Flags[j] = fresh(f)
			refuseFlagValues(cp.Flags[j])
		}
		cp.Commands = prepareCommands(c.Commands)
		if cp.OnUsageError == nil {
			cp.OnUsageError = usageError
		}
		if cp.Action == nil && len(cp.Commands) > 0 {
			cp.Action = noCommand
		}
		out[i] = &cp
	}
	return out
}

// fresh is a copy of the flag f as declared: its exported fields, none of
// what a parse keeps in it. The commands are package values; each run
// parses into copies of their flags.
func fresh(f ucli.Flag) ucli.Flag {
	v := reflect.ValueOf(f).Elem()
	cp := reflect.New(v.Type())
	for i := range v.NumField() {
		if v.Type().Field(i).IsExported() {
			cp.Elem().Field(i).Set(v.Field(i))
		}
	}
	return cp.Interface().(ucli.Flag)
}

// helpName names the help command.
const helpName = "help"

// helpCommand is `help [COMMAND...]`, listed once, after the tool's
// commands.
var helpCommand = &ucli.Command{
	Name:      helpName,
	Usage:     "show the commands, or a command's help (help reward serve)",
	ArgsUsage: "[COMMAND...]",
	Action:    runHelp,
}

func runHelp(ctx context.Context, c *ucli.Command) error {
	target := c.Root()
	for _, name := range c.Args().Slice() {
		sub := target.Command(name)
		if sub == nil || sub.Name == helpName {
			return unknownCommand(target, name)
		}
		target = sub
	}
	return showHelp(ctx, target)
}

// noCommand is the action of a command that only lists others: it names
// the command the line asks for and it lacks, or shows its help.
func noCommand(ctx context.Context, c *ucli.Command) error {
	if c.Args().Present() {
		return unknownCommand(c, c.Args().First())
	}
	return showHelp(ctx, c)
}

// showHelp shows c's help as `c --help` does.
func showHelp(ctx context.Context, c *ucli.Command) error {
	lineage := c.Lineage()
	if len(lineage) == 1 {
		return ucli.ShowRootCommandHelp(c)
	}
	return ucli.ShowCommandHelp(ctx, lineage[1], c.Name)
}

// Exit statuses of Main.
const (
	ExitError       = 1   // the command failed
	ExitUsage       = 2   // the command line does not parse
	ExitInterrupted = 130 // SIGINT or SIGTERM stopped the work (128 + SIGINT, as shells report)
)

// Main runs the command line args (program name first) with standard
// output and error and returns the exit status. The first SIGINT or
// SIGTERM cancels the work: outputs are left as they were and the status
// is ExitInterrupted (a server drains and exits 0). A second signal stops
// the process at once.
func Main(args []string) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var interrupted atomic.Bool
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	go func() {
		<-sig
		interrupted.Store(true)
		cancel()
		<-sig
		fmt.Fprintln(os.Stderr, "bagen-data: stopped at once")
		os.Exit(ExitInterrupted)
	}()
	app, l := newApp()
	err := app.Run(ctx, args)
	switch {
	case err == nil:
		return 0
	case interrupted.Load() && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		fmt.Fprintf(os.Stderr, "bagen-data: %s\n", l.interruptedNote())
		return ExitInterrupted
	}
	fmt.Fprintf(os.Stderr, "bagen-data: %v\n", err)
	var ue *UsageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	return ExitError
}

// resumable says what an interrupted command leaves behind when its
// outputs grow as it works.
var resumable = map[string]string{
	"eval":       "the answers so far stay in --predictions-out; rerun the same command to resume",
	"grpo train": "--out keeps the checkpoints so far; rerun with --resume to continue",
}

// interruptedNote is the line an interrupted run ends with.
func (l *line) interruptedNote() string {
	name := ""
	if l.leaf != nil {
		name = commandPath(l.leaf)
	}
	if name == "grpo train" && l.leaf.IsSet("out") && !grpo.HasRun(l.leaf.String("out")) {
		return "interrupted; nothing was written to --out"
	}
	if note, ok := resumable[name]; ok {
		return "interrupted; " + note
	}
	var paths []string
	for _, o := range l.outs {
		if o.kind != outLog && o.path != "-" && o.flag != "cpuprofile" {
			paths = append(paths, o.path)
		}
	}
	if len(paths) == 0 {
		return "interrupted"
	}
	return "interrupted; " + strings.Join(paths, ", ") + " unchanged"
}

// withFlagHints adds to a library error the flag that fixes it, for the
// errors a user fixes on the command line. budgetHint is the command's
// way to give a budget.
func withFlagHints(err error, budgetHint string) error {
	var split *dataset.EmptySplitError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, probes.ErrNoTokenizer):
		return fmt.Errorf("%w: pass --tokenizer PATH/tokenizer.json (run `make tokenizer` for Qwen's), ollama:MODEL or hf:REPO", err)
	case errors.Is(err, probes.ErrDuplicateID):
		return fmt.Errorf("%w (use --prefix-ids to prefix ids with their file name)", err)
	case errors.Is(err, rollout.ErrTooLarge):
		return fmt.Errorf("%w (raise --max-message-bytes if the logs need it)", err)
	case errors.Is(err, probes.ErrNoBudget):
		return fmt.Errorf("%w; %s", err, budgetHint)
	case errors.As(err, &split) && split.Groups > 0 && split.Trajectories == 0:
		return fmt.Errorf("%w (--split-by trajectory)", err)
	}
	return err
}
