package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	ucli "github.com/urfave/cli/v3"

	"bagen-data/baseline"
	"bagen-data/grpo"
	"bagen-data/grpo/server"
	"bagen-data/guard"
	"bagen-data/probes"
)

var baselineServe = &ucli.Command{
	Name:      "serve",
	Usage:     "serve a baseline model as an OpenAI-compatible budget estimator",
	UsageText: "bagen-data baseline serve --model MODEL.json [--listen 127.0.0.1:8789] [--name NAME]",
	Description: `The server of grpo serve, answering with a baseline model: POST
/v1/chat/completions (streaming and not), GET /v1/models, GET /healthz,
GET /metrics. A request's messages are a budget probe as build, probes and
the guard render it; the answer is the text baseline eval gives for that
probe, with 0 tokens of usage. A request that is not a budget probe of the
model's task gets 400 naming what is wrong.

  bagen-data baseline serve --model sokoban.json &
  bagen-data eval --endpoint http://127.0.0.1:8789/v1 --model sokoban --data DS/eval/test.parquet

` + drainHelp,
	Flags: append([]ucli.Flag{
		&ucli.StringFlag{Name: "model", Usage: "baseline `MODEL` file (baseline train --out)"},
		&ucli.StringFlag{Name: "listen", Aliases: []string{"addr"}, Value: "127.0.0.1:8789", Usage: "listen `ADDRESS`"},
		&ucli.StringFlag{Name: "name", Usage: "model `NAME` clients ask for and /v1/models lists (default: the model file's base name)"},
		&ucli.Int64Flag{Name: "max-body", Value: server.DefaultMaxBody, Usage: "largest request body in `BYTES`"},
	}, serveFlags...),
	Action: runBaselineServe,
}

func runBaselineServe(ctx context.Context, c *ucli.Command) error {
	if c.NArg() > 0 {
		return fmt.Errorf("baseline serve: unexpected argument %q", c.Args().First())
	}
	path := c.String("model")
	if path == "" {
		return errors.New("baseline serve: --model MODEL.json is required")
	}
	est, err := loadBaseline(c, path)
	if err != nil {
		return fmt.Errorf("baseline serve: %w", err)
	}
	name := c.String("name")
	if name == "" {
		name = baselineName(path)
	}
	est.Name = name
	created := time.Time{}
	if fi, err := os.Stat(path); err == nil {
		created = fi.ModTime()
	}
	cfg := server.Config{
		Estimator: baselineAnswers{est}, Name: name, Created: created,
		Limits: serveLimits(c), Log: accessLog(c),
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("baseline serve: %w", err)
	}
	if err := setServeGC(c); err != nil {
		return fmt.Errorf("baseline serve: %w", err)
	}
	ln, err := net.Listen("tcp", c.String("listen"))
	if err != nil {
		return fmt.Errorf("baseline serve: %w", err)
	}
	fmt.Fprintf(c.Root().ErrWriter, "baseline serve: %s (%s, task %s) on http://%s/v1\n", name, path, est.Model().Task, ln.Addr())
	defer announceDrain(ctx, c, "baseline serve", c.Duration("drain-grace"), c.Duration("drain-timeout"))()
	if err := server.Serve(ctx, ln, cfg); err != nil {
		return fmt.Errorf("baseline serve: %w", err)
	}
	fmt.Fprintln(c.Root().ErrWriter, "baseline serve: drained, bye")
	return nil
}

// baselineAnswers answers the server's queries with a baseline estimator:
// the same text for every temperature and seed, 0 tokens.
type baselineAnswers struct{ est *baseline.Estimator }

// Accounting is the accounting of the model's training data, unknown
// when its build recorded none.
func (b baselineAnswers) Accounting() probes.AccountingKind {
	k, _ := probes.ParseAccountingKind(b.est.Model().Accounting)
	return k
}

// Answer answers q's messages; a probe of another task is a 400 naming
// the messages.
func (b baselineAnswers) Answer(ctx context.Context, q grpo.Query) (grpo.Estimate, error) {
	start := time.Now()
	a, err := b.est.Answer(q.Messages)
	if errors.Is(err, baseline.ErrTask) {
		return grpo.Estimate{}, &server.FieldError{Path: "messages", Err: err}
	}
	if err != nil {
		return grpo.Estimate{}, err
	}
	return grpo.Estimate{Answer: a.Text, Action: grpo.Action{Impossible: a.Impossible}, Stated: a.View.Stated, Head: time.Since(start)}, nil
}

// guardBaseline loads a model for the guard to answer with in-process,
// warning on stderr when the guard's task or budget is not the model's.
func guardBaseline(c *ucli.Command, path string, cfg guard.Config) (guard.Estimator, error) {
	est, err := loadBaseline(c, path)
	if err != nil {
		return nil, err
	}
	est.OtherTasks = true
	m := est.Model()
	if cfg.Task.Name != m.Task {
		fmt.Fprintf(c.Root().ErrWriter, "guard: warning: --task %s, but %s was trained on %s probes: its answers carry no calibration\n", cfg.Task.Name, path, m.Task)
	}
	budget := cfg.Budget
	if budget == 0 {
		budget = cfg.Task.Budget
	}
	if m.Budget > 0 && budget != m.Budget {
		fmt.Fprintf(c.Root().ErrWriter, "guard: warning: a budget of %d tokens, but %s was trained on %d\n", budget, path, m.Budget)
	}
	learned, _ := probes.ParseAccountingKind(m.Accounting)
	if note := guard.AccountingNote(learned); note != "" {
		fmt.Fprintf(c.Root().ErrWriter, "guard: %s\n", note)
	}
	return est, nil
}
