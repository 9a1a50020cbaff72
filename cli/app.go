// Package cli holds the bagen-data commands, one file per verb. Each file
// exports one *ucli.Command; App assembles them.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	ucli "github.com/urfave/cli/v2"

	"bagen-data/dataset"
	"bagen-data/grpo"
	"bagen-data/probes"
	"bagen-data/rollout"
)

var plainBoolHelp sync.Once

// Version is the tool version recorded in manifests; set with -ldflags.
var Version = "0.1.0-dev"

// App returns the bagen-data application with every command registered.
func App() *ucli.App {
	plainBoolHelp.Do(func() {
		// A switch that is off by default needs no "(default: false)".
		base := ucli.FlagStringer
		ucli.FlagStringer = func(f ucli.Flag) string { return strings.TrimSuffix(base(f), " (default: false)") }
	})
	app := &ucli.App{
		Name:                 "bagen-data",
		Usage:                "turn LLM-agent rollout logs into budget-estimation training data and rewards",
		Version:              Version,
		EnableBashCompletion: true,
		HideHelpCommand:      true,
		Flags:                []ucli.Flag{cpuProfileFlag},
		Before:               startProfile,
		After:                stopProfile,
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
		},
	}
	prepareCommands(app.Commands)
	// `help [COMMAND...]` is read by Main, not a command of urfave/cli's:
	// the list names it all the same.
	app.CustomAppHelpTemplate = strings.Replace(ucli.AppHelpTemplate,
		`COMMANDS:{{template "visibleCommandCategoryTemplate" .}}`,
		`COMMANDS:{{template "visibleCommandCategoryTemplate" .}}`+"\n   help      show the commands, or a command's help (help reward serve)", 1)
	return app
}

// prepareCommands makes a flag value that does not parse one line naming
// the flag, in every command, instead of the help and then the error, and
// keeps urfave/cli from adding a `help` subcommand to each (`help CMD`
// comes first, and Main reads it).
func prepareCommands(cmds []*ucli.Command) {
	for _, c := range cmds {
		if c.OnUsageError == nil {
			c.OnUsageError = usageError
		}
		c.HideHelpCommand = true
		prepareCommands(c.Subcommands)
	}
}

func usageError(c *ucli.Context, err error, _ bool) error {
	msg := err.Error()
	// The standard flag package says "flag -seed"; the help says --seed.
	if i := strings.Index(msg, "flag -"); i >= 0 {
		name := msg[i+len("flag -"):]
		if j := strings.IndexAny(name, ": "); j >= 0 {
			name = name[:j]
		}
		msg = msg[:i] + dashed(name) + msg[i+len("flag -")+len(name):]
	}
	return &UsageError{Command: commandPath(c), Msg: msg}
}

// commandPath names c's command with its parents ("reward serve"): when
// a flag does not parse, urfave/cli has not yet given the command its
// full name.
func commandPath(c *ucli.Context) string {
	var names []string
	for _, x := range c.Lineage() {
		if x.Command != nil && x.Command.Name != "" && (len(names) == 0 || names[0] != x.Command.Name) {
			names = append([]string{x.Command.Name}, names...)
		}
	}
	return strings.TrimPrefix(strings.Join(names, " "), c.App.Name+" ")
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
	app := App()
	inv, err := runLine(ctx, app, args)
	switch {
	case err == nil:
		return 0
	case interrupted.Load() && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		fmt.Fprintf(os.Stderr, "bagen-data: %s\n", inv.interruptedNote(app))
		return ExitInterrupted
	}
	fmt.Fprintf(os.Stderr, "bagen-data: %v\n", err)
	var ue *UsageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	return ExitError
}

// runLine checks the command line and every output path, then runs it.
func runLine(ctx context.Context, app *ucli.App, args []string) (*invocation, error) {
	argv, inv, err := normalize(app, args)
	if err != nil {
		return inv, err
	}
	if !inv.help {
		outs := inv.outputs(app)
		if err := checkOutputs(outs); err != nil {
			if name := inv.name(); name != "" {
				return inv, fmt.Errorf("%s: %w", name, err)
			}
			return inv, err
		}
		if toStdout(outs) {
			app.Writer = os.Stderr // the data has standard output
		}
	}
	return inv, app.RunContext(ctx, argv)
}

// resumable says what an interrupted command leaves behind when its
// outputs grow as it works.
var resumable = map[string]string{
	"eval":       "the answers so far stay in --predictions-out; rerun the same command to resume",
	"grpo train": "--out keeps the checkpoints so far; rerun with --resume to continue",
}

// interruptedNote is the line an interrupted run ends with.
func (inv *invocation) interruptedNote(app *ucli.App) string {
	if out := inv.given["out"]; inv.name() == "grpo train" && len(out) > 0 && !grpo.HasRun(out[len(out)-1]) {
		return "interrupted; nothing was written to --out"
	}
	if note, ok := resumable[inv.name()]; ok {
		return "interrupted; " + note
	}
	var paths []string
	for _, o := range inv.outputs(app) {
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
