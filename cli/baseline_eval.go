package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"bagen-data/baseline"
	"bagen-data/dataset"
	"bagen-data/eval"
	predict "bagen-data/eval/prediction"
	"bagen-data/internal/atomicfile"
)

var baselineEval = &ucli.Command{
	Name:      "eval",
	Usage:     "answer eval probes with a baseline model and print the paper's metrics",
	UsageText: "bagen-data baseline eval --model MODEL.json --data FILE.parquet [--predictions-out PREDS.jsonl] [--json OUT.json]",
	Description: `Answers every probe of --data from its text alone, writes the answers as
predictions JSONL (0 tokens of usage each) and scores them with eval's own
code: "bagen-data eval --data FILE --predictions PREDS.jsonl --json X"
prints and writes the same numbers. A probe of another task than the
model's is refused; a budget other than the model's is warned about.`,
	Flags: []ucli.Flag{
		&ucli.StringFlag{Name: "model", Usage: "baseline `MODEL` file (baseline train --out)"},
		dataFlag("eval probes"),
		&ucli.StringFlag{Name: "predictions-out", Usage: "write the answers as predictions JSONL to `FILE`"},
		&ucli.StringFlag{Name: "json", Usage: "write every number to `FILE`, as eval --json"},
		&ucli.StringFlag{Name: "report", Usage: "write a self-contained HTML report with plots to `FILE`"},
		&ucli.IntFlag{Name: "bootstrap", Value: eval.DefaultBootstrap, Usage: "bootstrap resamples for the 95% intervals (0: none)"},
		seedFlag("of the bootstrap"),
		&ucli.StringFlag{Name: "name", Usage: "run `NAME` in --json (default: the predictions file or the model file)"},
		quietFlag,
	},
	Action: runBaselineEval,
}

func runBaselineEval(ctx context.Context, c *ucli.Command) error {
	if c.NArg() > 0 {
		return fmt.Errorf("baseline eval: unexpected argument %q", c.Args().First())
	}
	if err := c.Set("data", dataFile(c.String("data"))); err != nil {
		return err
	}
	data, path := c.String("data"), c.String("model")
	if data == "" || path == "" {
		return errors.New("baseline eval: --model MODEL.json and --data FILE are required")
	}
	est, err := loadBaseline(c, path)
	if err != nil {
		return fmt.Errorf("baseline eval: %w", err)
	}
	rows, err := dataset.ReadRL(data)
	if err != nil {
		return fmt.Errorf("baseline eval: %w", err)
	}
	preds, err := est.Predict(ctx, data, rows)
	if err != nil {
		return fmt.Errorf("baseline eval: %w", err)
	}
	set, name, err := baselinePredictions(c, preds, path)
	if err != nil {
		return err
	}
	o, err := eval.Job{Data: data, Predictions: name, Name: c.String("name"), Bootstrap: new(c.Int("bootstrap")), Seed: c.Uint64("seed")}.Score(rows, set)
	if err != nil {
		return evalError(err)
	}
	evalNotes(c, o)
	run := o.Run
	if err := printRun(c, run); err != nil {
		return err
	}
	if !c.Bool("quiet") {
		printStopIntervals(c, eval.Score(rows, set).Rows)
	}
	return writeEvalOutputs(c, run)
}

// loadBaseline loads a model file as an estimator named after the file,
// warnings to stderr.
func loadBaseline(c *ucli.Command, path string) (*baseline.Estimator, error) {
	m, err := baseline.Load(path)
	if err != nil {
		return nil, err
	}
	est := baseline.NewEstimator(m, baselineName(path))
	est.Warn = func(msg string) { fmt.Fprintf(c.Root().ErrWriter, "baseline: %s: %s\n", path, msg) }
	return est, nil
}

// baselineName is the model name a model file answers as: its base name
// without the extension.
func baselineName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

// baselinePredictions writes the answers to --predictions-out, when given,
// and reads them back as eval --predictions does; it returns them with the
// name eval would give the run.
func baselinePredictions(c *ucli.Command, preds []predict.Prediction, model string) (*predict.Set, string, error) {
	out := c.String("predictions-out")
	if out == "" {
		if !c.IsSet("name") {
			if err := c.Set("name", baselineName(model)); err != nil {
				return nil, "", err
			}
		}
		set, err := predict.NewSet(preds, "answers")
		if err != nil {
			return nil, "", fmt.Errorf("baseline eval: %w", err)
		}
		return set, "", nil
	}
	if err := atomicfile.Write(out, func(w io.Writer) error { return predict.Write(w, preds) }); err != nil {
		return nil, "", fmt.Errorf("baseline eval: %w", err)
	}
	set, err := predict.ReadFile(out)
	if err != nil {
		return nil, "", fmt.Errorf("baseline eval: %w", err)
	}
	return set, out, nil
}

// printStopIntervals says on stderr what the early stop costs and saves,
// run by run, with --bootstrap resamples' 95% intervals: eval's report
// gives the share of all runs aborted; the guard's user asks for the
// share of successful ones.
func printStopIntervals(c *ucli.Command, rows []eval.Scored) {
	e := eval.EarlyStopOf(rows)
	aborted := func(s []eval.Scored) eval.Num {
		e := eval.EarlyStopOf(s)
		if e.Successful == 0 {
			return eval.NaN
		}
		return eval.Num(float64(e.AbortedSuccessful) / float64(e.Successful))
	}
	saved := func(s []eval.Scored) eval.Num { return eval.EarlyStopOf(s).SavedShare }
	n, seed := c.Int("bootstrap"), c.Uint64("seed")
	a, sv := eval.BootstrapOf(rows, n, seed, aborted), eval.BootstrapOf(rows, n, seed, saved)
	fmt.Fprintf(c.Root().ErrWriter, "baseline eval: early stop: %d of %d successful runs aborted (%s, 95%% CI %s–%s); %s of failed runs' tokens saved (95%% CI %s–%s), at 0 estimator tokens\n",
		e.AbortedSuccessful, e.Successful, pct(aborted(rows)), pct(a.Low), pct(a.High), pct(e.SavedShare), pct(sv.Low), pct(sv.High))
}

// pct writes a share as a percentage with one decimal, "n/a" when
// undefined.
func pct(v eval.Num) string {
	if !v.Defined() {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(v))
}
