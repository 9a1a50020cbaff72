package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v3"

	"bagen-data/eval"
	predict "bagen-data/eval/prediction"
	"bagen-data/eval/report"
	"bagen-data/internal/atomicfile"
	"bagen-data/probes"
)

// Eval is the `bagen-data eval` command.
var Eval = &ucli.Command{
	Name:  "eval",
	Usage: "score budget estimates on eval probes the way the paper does",
	UsageText: "bagen-data eval --data eval/test.parquet (--predictions preds.jsonl | --ollama MODEL | --endpoint URL --model NAME) [--strict] [--json FILE] [--report FILE.html]\n" +
		"bagen-data eval --compare [--report FILE.html] a.json b.json ...",
	Description: `Joins predictions ({"custom_id", "response"} JSONL) to the probes of --data,
or asks a model to answer every probe — served by Ollama ($OLLAMA_HOST, its
native API) or by any OpenAI-compatible Chat Completions endpoint (vLLM,
SGLang, llama.cpp, Ollama's /v1, hosted APIs) — and prints the paper's
metrics: accuracy, recalls, F1@All, F1@1 (the probes at the set's first
position: p = 0 in build's sets, k = 1 in replay sets; n says how many),
Fail-F1, Cover, MRE P50/P90 (linear-interpolation percentiles), R and S with
bootstrap 95% intervals, optimism and failure timing by rollout progress,
and early stop. Warehouse probes (a label column with time_weeks,
warehouse_item_weeks and cumulative_cost_usd) are scored on all three
dimensions, with Cover and MRE also per dimension.

A probe without a prediction is scored as an unparseable answer and counted
on stderr; when no probe has one (an empty or foreign predictions file) eval
fails, and --strict makes any probe without a prediction, or prediction
without a probe, an error.

Answers are appended to --predictions-out as they arrive; a rerun asks only
the probes without an answer there. A probe whose retries run out is
recorded as a failure, not an answer, and the run exits non-zero.

The early stop is reported gross, as the paper does (tokens saved on failed
runs), and net of the estimator's tokens up to each run's stop, on every
run; in dollars with the agent's prices (--price-*) and the estimator's
(--estimator-price-*). Predictions without usage leave the net unknown. It is
replayed again without the probes before the first turn (no live guard can
act on them), and under stricter rules for the savings-versus-abort curve.

--json and --report replace the files they name (written whole, then
renamed into place); --predictions-out is appended to, never replaced.
--quiet prints nothing but errors and warnings.

With --compare, prints saved --json runs side by side in the layouts of the
paper's SFT/RL sweep table and overall table and the early stop's; --report
writes them as one HTML page (flags go before the file arguments).`,
	Flags: []ucli.Flag{
		dataFlag("eval probes"),
		&ucli.StringFlag{Name: "predictions", Usage: "predictions `FILE` (JSONL {\"custom_id\", \"response\"}), or a guard --ledger directory: its live estimates"},
		&ucli.StringFlag{Name: "ollama", Usage: "ask `MODEL` served by Ollama (OLLAMA_HOST, native API) to answer every probe"},
		&ucli.StringFlag{Name: "endpoint", Usage: "ask an OpenAI-compatible Chat Completions server at `URL` (with or without /v1)"},
		&ucli.StringFlag{Name: "model", Usage: "`MODEL` to ask at --endpoint"},
		&ucli.StringFlag{Name: "api-key-env", Value: "OPENAI_API_KEY", Usage: "environment `VARIABLE` holding the --endpoint API key (unset or empty: no key)"},
		&ucli.StringSliceFlag{Name: "header", Usage: "extra --endpoint request header `K=V` (repeatable)"},
		&ucli.Float64Flag{Name: "temperature", Usage: "sampling temperature (0: greedy)"},
		&ucli.IntFlag{Name: "max-tokens", Aliases: []string{"num-predict"}, Value: predict.DefaultMaxTokens, Usage: "answer cap in `TOKENS`"},
		&ucli.StringFlag{Name: "extra-body", Usage: "`JSON` object merged into every --endpoint request (reasoning_effort, chat_template_kwargs, …)"},
		&ucli.StringFlag{Name: "predictions-out", Usage: "append answers to `FILE` as they arrive; a rerun skips ids answered there (default: predictions-MODEL.jsonl)"},
		&ucli.IntFlag{Name: "concurrency", Value: predict.DefaultConcurrency, Usage: "`N` requests in flight"},
		&ucli.Float64Flag{Name: "rate", Usage: "cap on `REQUESTS` started per second, retries included (0: none)"},
		&ucli.DurationFlag{Name: "timeout", Value: predict.DefaultTimeout, Usage: "limit on one request"},
		&ucli.IntFlag{Name: "attempts", Value: predict.DefaultAttempts, Usage: "requests per probe at most, on 429, 5xx, timeouts and connection errors"},
		&ucli.Float64Flag{Name: "price-in", Usage: "the agent's model: dollars per million prompt `TOKENS`, for the early stop's net savings"},
		&ucli.Float64Flag{Name: "price-cached", Usage: "the agent's model: dollars per million cached prompt `TOKENS` (default: --price-in)"},
		&ucli.Float64Flag{Name: "price-out", Usage: "the agent's model: dollars per million completion `TOKENS`"},
		&ucli.Float64Flag{Name: "estimator-price-in", Usage: "the estimator's (the model answering): dollars per million prompt `TOKENS`, for the spend and the net savings"},
		&ucli.Float64Flag{Name: "estimator-price-cached", Usage: "the estimator's: dollars per million cached prompt `TOKENS` (default: --estimator-price-in)"},
		&ucli.Float64Flag{Name: "estimator-price-out", Usage: "the estimator's: dollars per million completion `TOKENS`"},
		&ucli.IntFlag{Name: "bootstrap", Value: eval.DefaultBootstrap, Usage: "bootstrap resamples for the 95% intervals (0: none)"},
		seedFlag("of the bootstrap and of the model's sampling (sent to --endpoint only when given)"),
		&ucli.StringFlag{Name: "name", Usage: "run `NAME` in --json and comparisons (default: the predictions file or model)"},
		&ucli.StringFlag{Name: "json", Usage: "write every number to `FILE`, replacing it (- for standard output)"},
		&ucli.StringFlag{Name: "report", Usage: "write a self-contained HTML report with plots to `FILE`, replacing it"},
		&ucli.BoolFlag{Name: "compare", Usage: "print the --json files given as arguments side by side"},
		&ucli.BoolFlag{Name: "strict", Usage: "fail when predictions and probes do not match one to one"},
		newCompatFlag("also compute `CODE`'s summary: bagen-v1 is the eval_checkpoint.py summary of mll-lab-nu/BAGEN at 58bef4c " +
			"(cover_rate_possible, mean/median_relative_error, … their way), printed and in --json as bagen_v1"),
		quietFlag,
	},
	Action: runEval,
}

func runEval(ctx context.Context, c *ucli.Command) error {
	if c.Bool("compare") {
		return runCompare(c, c.Args().Slice())
	}
	run, failed, err := evalRun(ctx, c)
	if err != nil {
		return err
	}
	if err := printRun(c, run); err != nil {
		return err
	}
	if err := writeEvalOutputs(c, run); err != nil {
		return err
	}
	if failed != nil {
		return fmt.Errorf("eval: %w; scored as unanswered; rerun the same command to ask them again", failed)
	}
	return nil
}

// printRun prints a scored run's summary (writeSummary) unless --quiet.
func printRun(c *ucli.Command, run eval.Run) error {
	if c.Bool("quiet") {
		return nil
	}
	return writeSummary(c.Root().Writer, run)
}

// writeSummary prints the run's metrics, its authors'-summary and its
// spend.
func writeSummary(w io.Writer, run eval.Run) error {
	fmt.Fprintf(w, "%s: %s\n", run.Name, run.Data)
	if err := eval.WriteText(w, run.Metrics); err != nil {
		return err
	}
	if s := run.Metrics.BagenV1; s != nil {
		if err := s.WriteText(w); err != nil {
			return err
		}
	}
	if run.Spend == nil {
		return nil
	}
	fmt.Fprintln(w)
	return eval.WriteSpend(w, *run.Spend)
}

// evalRun checks the flags, gets the answers and scores them (eval.Do).
// failed lists probes a model was asked and could not answer.
func evalRun(ctx context.Context, c *ucli.Command) (eval.Run, *predict.FailedError, error) {
	if err := c.Set("data", dataFile(c.String("data"))); err != nil {
		return eval.Run{}, nil, err
	}
	if err := evalLine(c); err != nil {
		return eval.Run{}, nil, err
	}
	compat, err := probes.ParseCompat(c.String("compat"))
	if err != nil {
		return eval.Run{}, nil, fmt.Errorf("eval: %w", err)
	}
	job := eval.Job{Data: c.String("data"), Predictions: c.String("predictions"), Ollama: c.String("ollama"),
		Ready: checkOllama, Endpoint: c.String("endpoint"), Model: c.String("model"), APIKey: os.Getenv(c.String("api-key-env")),
		Temperature: c.Float64("temperature"),
		MaxTokens:   c.Int("max-tokens"), Seed: c.Uint64("seed"), SendSeed: c.IsSet("seed"), Out: c.String("predictions-out"),
		Ask: predict.Options{Concurrency: c.Int("concurrency"), Rate: c.Float64("rate"),
			Retry: predict.Retry{Attempts: c.Int("attempts"), Timeout: c.Duration("timeout")}},
		Agent: prices(c, ""), Estimator: prices(c, "estimator-"),
		Name: c.String("name"), Bootstrap: new(c.Int("bootstrap")), BagenV1: compat.Name != "", Strict: c.Bool("strict")}
	if err := endpointFlags(c, &job); err != nil {
		return eval.Run{}, nil, fmt.Errorf("eval: %w", err)
	}
	bar := newProgress(c.Bool("quiet"))
	job.Ask.Progress = func(p predict.Progress) {
		note := fmt.Sprintf("%.1f/s ETA %v", p.Rate(), p.ETA().Round(time.Second))
		if p.Failed > 0 {
			note += fmt.Sprintf(", %d failed", p.Failed)
		}
		bar.updateNote("ask "+cmp.Or(job.Model, job.Ollama), int64(p.Done+p.Failed), int64(p.Total), note)
	}
	o, err := eval.Do(ctx, job)
	bar.done()
	if err != nil {
		return eval.Run{}, nil, evalError(err)
	}
	evalNotes(c, o)
	return o.Run, o.Failed, nil
}

// endpointFlags reads --header and --extra-body into job and reports
// them and every other bad field of its endpoint client at once.
func endpointFlags(c *ucli.Command, job *eval.Job) error {
	var errs []error
	job.Header = http.Header{}
	for _, h := range c.StringSlice("header") {
		k, v, ok := strings.Cut(h, "=")
		if !ok || strings.TrimSpace(k) == "" {
			errs = append(errs, fmt.Errorf("--header %q: want K=V", h))
			continue
		}
		job.Header.Add(strings.TrimSpace(k), v)
	}
	if extra := c.String("extra-body"); extra != "" {
		if err := json.Unmarshal([]byte(extra), &job.Extra); err != nil || job.Extra == nil {
			errs = append(errs, fmt.Errorf("--extra-body: want a JSON object, got %q", extra))
		}
	}
	return errors.Join(append(errs, job.Validate())...)
}

// evalError restates eval.Do's error for the command line.
func evalError(err error) error {
	var join *eval.JoinError
	switch {
	case errors.Is(err, predict.ErrModel):
		return fmt.Errorf("eval: %w (use another --predictions-out)", err)
	case errors.As(err, &join) && join.Strict:
		return fmt.Errorf("eval: --strict: %w", err)
	}
	return fmt.Errorf("eval: %w", err)
}

// evalNotes prints on stderr what eval.Do reports beside the run: the
// answers asked (unless --quiet), those cut off, a join that is not one
// to one and prices given for one side only.
func evalNotes(c *ucli.Command, o eval.Outcome) {
	w := c.Root().ErrWriter
	if a := o.Asked; a != nil && !c.Bool("quiet") {
		again := ""
		if a.Stats.Stale > 0 {
			again = fmt.Sprintf("; %d asked again: their saved answers were to another prompt or sampling", a.Stats.Stale)
		}
		fmt.Fprintf(w, "eval: %d answers in %s (%d asked now, %d from before%s)\n",
			a.Before+a.Stats.Answered, a.Log, a.Stats.Probes, a.Before, again)
	}
	if o.Cut > 0 {
		fmt.Fprintf(w, "eval: %d answers in %s were cut off (token cap, or no done flag); scored as they are\n", o.Cut, o.Run.Predictions)
	}
	if !o.Scores.OneToOne() {
		fmt.Fprintf(w, "eval: %s\n", o.Scores.Summary())
	}
	if o.HalfPriced {
		fmt.Fprintln(w, "eval: the net savings in dollars need the agent's prices (--price-in, --price-out) and the estimator's (--estimator-price-in, --estimator-price-out)")
	}
}

// prices reads the --PREFIXprice-* flags; the cached price is the prompt
// price unless given.
func prices(c *ucli.Command, prefix string) predict.Prices {
	p := predict.Prices{In: c.Float64(prefix + "price-in"), Cached: c.Float64(prefix + "price-in"), Out: c.Float64(prefix + "price-out")}
	if c.IsSet(prefix + "price-cached") {
		p.Cached = c.Float64(prefix + "price-cached")
	}
	return p
}

// evalLine checks what the command line asks for before any input is
// read: one source of answers, --data, no stray argument, numbers in
// range. Its errors are usage errors (exit 2).
func evalLine(c *ucli.Command) error {
	preds, model, endpoint := c.String("predictions"), c.String("ollama"), c.String("endpoint")
	sources := 0
	for _, s := range []string{preds, model, endpoint} {
		if s != "" {
			sources++
		}
	}
	var msg string
	switch {
	case c.NArg() > 0:
		msg = fmt.Sprintf("unexpected argument %q (files given as arguments need --compare)", c.Args().First())
	case c.String("data") == "":
		msg = "--data is required (the eval/test.parquet to score)"
	case sources != 1:
		msg = "give exactly one of --predictions FILE, --ollama MODEL and --endpoint URL"
	case endpoint != "" && c.String("model") == "":
		msg = "--endpoint needs --model NAME"
	case endpoint == "" && c.String("model") != "":
		msg = "--model names the model at --endpoint; with Ollama use --ollama MODEL"
	}
	if msg == "" {
		if err := evalNumbers(c); err != nil {
			msg = err.Error()
		}
	}
	if msg != "" {
		return &UsageError{Command: "eval", Msg: msg}
	}
	return nil
}

// evalNumbers reports every negative (or not finite) number among the
// flags (zero means the default, none or, for the rate, no cap).
func evalNumbers(c *ucli.Command) error {
	var errs []error
	for _, name := range []string{"concurrency", "attempts", "max-tokens", "bootstrap"} {
		if v := c.Int(name); v < 0 {
			errs = append(errs, fmt.Errorf("--%s: want ≥ 0, got %d", name, v))
		}
	}
	for _, name := range []string{"rate", "temperature", "price-in", "price-cached", "price-out",
		"estimator-price-in", "estimator-price-cached", "estimator-price-out"} {
		if v := c.Float64(name); v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("--%s: want a number ≥ 0, got %g", name, v))
		}
	}
	if v := c.Duration("timeout"); v < 0 {
		errs = append(errs, fmt.Errorf("--timeout: want ≥ 0, got %v", v))
	}
	return errors.Join(errs...)
}

func writeEvalOutputs(c *ucli.Command, run eval.Run) error {
	if path := c.String("json"); path != "" {
		if err := eval.WriteRun(path, run); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
	}
	if path := c.String("report"); path != "" {
		if err := atomicfile.Write(path, func(w io.Writer) error { return report.Write(w, run) }); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
	}
	return nil
}

// runCompare prints saved runs side by side and, with --report, writes
// them as one page.
func runCompare(c *ucli.Command, paths []string) error {
	if len(paths) == 0 {
		return errors.New("eval: --compare needs the --json files of the runs to compare")
	}
	runs := make([]eval.Run, len(paths))
	for i, p := range paths {
		var err error
		if runs[i], err = eval.ReadRun(p); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
	}
	if err := eval.WriteCompare(c.Root().Writer, runs); err != nil {
		return err
	}
	if path := c.String("report"); path != "" {
		if err := atomicfile.Write(path, func(w io.Writer) error { return report.WriteCompare(w, runs) }); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
	}
	return nil
}
