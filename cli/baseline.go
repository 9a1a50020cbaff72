package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"bagen-data/baseline"
)

// Baseline is the `bagen-data baseline` command: a zero-token budget
// estimator fitted on build's splits.
var Baseline = &ucli.Command{
	Name:  "baseline",
	Usage: "fit, evaluate and serve a zero-token statistical budget estimator",
	Description: `A budget estimator that asks no model: it reads the probe's numbers (turns,
tokens used, budget, per-turn usage) and signals in the probe's own text
(repeated observations and actions, error results, a cross-fitted
naive-Bayes score over the last observation's and answer's words, and the
task's own state where a task's text has structure: Sokoban's room,
Search-R1's queries). Intervals are split-conformal; "impossible" is
answered when the estimated chance of failure passes a threshold calibrated
so that at most --max-abort of the successful held-out runs are stopped.`,
	Commands: []*ucli.Command{baselineTrain, baselineEval, baselineServe},
}

var baselineTrain = &ucli.Command{
	Name:      "train",
	Usage:     "fit a model on the sft and rl splits of build output directories",
	UsageText: "bagen-data baseline train --data DIR [--data DIR ...] --out MODEL.json [--coverage 0.9] [--max-abort 0.02] [--seed 42]",
	Description: `Reads DIR/sft/train.parquet, DIR/rl/train.parquet and DIR/manifest.json of
each --data (never DIR/eval), holds out --calibration of the trajectories
(successful and failed alike), fits the features' regressions on the rest,
and calibrates on the held-out part: the intervals to --coverage, the
impossible gate so that at most --max-abort of the successful held-out runs
would be stopped at any turn. The model file is JSON with the features, the
weights, the calibration figures and the training data's digests; the same
data, flags and --seed write the same bytes.

  bagen-data build --task sokoban --out ds
  bagen-data baseline train --data ds --out sokoban.json
  bagen-data baseline eval --model sokoban.json --data ds/eval/test.parquet`,
	Flags: []ucli.Flag{
		&ucli.StringSliceFlag{Name: "data", Usage: "build output `DIR` (repeatable; its sft and rl splits are read)"},
		&ucli.StringFlag{Name: "out", Usage: "model `FILE` to write (JSON)"},
		&ucli.Float64Flag{Name: "coverage", Value: baseline.DefaultCoverage, Usage: "target interval coverage `SHARE`, in (0, 1)"},
		&ucli.Float64Flag{Name: "max-abort", Value: baseline.DefaultMaxAbort, Usage: "largest `SHARE` of successful held-out runs the impossible answer may stop, in (0, 1)"},
		&ucli.Float64Flag{Name: "calibration", Value: baseline.DefaultCalibrationShare, Usage: "`SHARE` of trajectories held out for calibration, in (0, 1)"},
		&ucli.StringFlag{Name: "features", Value: "all", Usage: "feature `GROUPS`: a comma-separated list of numeric, repeat, words, task, or all"},
		seedFlag("of the calibration split and the word score's folds"),
		quietFlag,
	},
	Action: runBaselineTrain,
}

func runBaselineTrain(ctx context.Context, c *ucli.Command) error {
	if c.NArg() > 0 {
		return fmt.Errorf("baseline train: unexpected argument %q (directories go in --data)", c.Args().First())
	}
	dirs, out := c.StringSlice("data"), c.String("out")
	if len(dirs) == 0 || out == "" {
		return errors.New("baseline train: --data DIR and --out MODEL.json are required")
	}
	groups, err := baseline.ParseGroups(c.String("features"))
	if err != nil {
		return fmt.Errorf("baseline train: --features: %w", err)
	}
	if err := baselineFlagErrors(c); err != nil {
		return fmt.Errorf("baseline train: %w", err)
	}
	m, err := baseline.Train(ctx, baseline.Config{Dirs: dirs, Coverage: c.Float64("coverage"), MaxAbort: c.Float64("max-abort"),
		Seed: c.Uint64("seed"), CalibrationShare: c.Float64("calibration"), Groups: groups})
	if err != nil {
		return fmt.Errorf("baseline train: %w", err)
	}
	if err := m.Save(out); err != nil {
		return fmt.Errorf("baseline train: %w", err)
	}
	if !c.Bool("quiet") {
		fmt.Fprintf(c.Root().ErrWriter, "baseline train: %s: %s\n", out, m.Summary())
	}
	return nil
}

// baselineFlagErrors reports every share flag out of its range, by name.
func baselineFlagErrors(c *ucli.Command) error {
	var bad []string
	for _, name := range []string{"coverage", "max-abort", "calibration"} {
		if v := c.Float64(name); !(v > 0 && v < 1) {
			bad = append(bad, fmt.Sprintf("--%s: want a share between 0 and 1, both excluded, got %g", name, v))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}
