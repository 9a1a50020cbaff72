// Package cli holds the bagen-data commands, one file per verb. Each file
// exports one *ucli.Command; App assembles them.
package cli

import (
	"bagen-data/dataset"
	"bagen-data/probes"
	"bagen-data/rollout"
	"errors"
	"fmt"
	"strings"
	"sync"

	ucli "github.com/urfave/cli/v2"
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
	return &ucli.App{
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
		},
	}
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
