package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/ollama/ollama/api"
	ucli "github.com/urfave/cli/v3"

	"bagen-data/grpo"
	"bagen-data/grpo/server"
)

var grpoServe = &ucli.Command{
	Name:      "serve",
	Usage:     "serve a trained head as an OpenAI-compatible budget estimator",
	UsageText: "bagen-data grpo serve --checkpoint DIR [--listen 127.0.0.1:8788] [--model MODEL] [--name NAME]",
	Description: `Routes: POST /v1/chat/completions (streaming and not), GET /v1/models,
GET /healthz, GET /metrics (Prometheus).

A request's messages are a budget probe as build, probes and eval render it.
The server embeds the prompt with the checkpoint's Ollama model ($OLLAMA_HOST)
exactly as grpo train and grpo eval do (same template, --num-ctx and
embedding --cache), reads the probe's turns and budget from its text, runs
the head and answers with the text grpo eval writes, e.g.
"<answer>[120, 180]</answer>", with usage counted by the model's tokenizer.
temperature 0 (the default) answers greedily; above 0 the answer is drawn
from the head's distribution, reproducibly with "seed". A request that is
not a budget probe of a known task gets 400 naming what is missing; Ollama
unreachable gets 503 with the reason (eval retries it).

  bagen-data grpo serve --checkpoint run/ --name my-head &
  bagen-data eval --endpoint http://127.0.0.1:8788/v1 --model my-head --data DS/eval/test.parquet

` + drainHelp,
	Flags: append([]ucli.Flag{
		&ucli.StringFlag{Name: "checkpoint", Usage: "a checkpoint `DIR`, or a grpo train --out directory (its latest checkpoint)"},
		&ucli.StringFlag{Name: "listen", Aliases: []string{"addr"}, Value: "127.0.0.1:8788", Usage: "listen `ADDRESS`"},
		&ucli.StringFlag{Name: "model", Usage: "Ollama `MODEL` (default: the one the checkpoint was trained on)"},
		&ucli.StringFlag{Name: "name", Usage: "model `NAME` clients ask for and /v1/models lists (default: the run's name)"},
		&ucli.Int64Flag{Name: "max-body", Value: server.DefaultMaxBody, Usage: "largest request body in `BYTES`"},
		seedFlag("of the sampled answers (temperature > 0) that bring no seed of their own"),
		cacheFlag, numCtx,
	}, serveFlags...),
	Action: runGRPOServe,
}

func runGRPOServe(ctx context.Context, c *ucli.Command) error {
	if c.NArg() > 0 {
		return usage("grpo serve", fmt.Errorf("unexpected argument %q", c.Args().First()))
	}
	cfg, est, err := grpoServeConfig(c)
	if err != nil {
		return fmt.Errorf("grpo serve: %w", err)
	}
	if err := setServeGC(c); err != nil {
		return fmt.Errorf("grpo serve: %w", err)
	}
	prep, cancel := context.WithTimeout(ctx, 30*time.Second)
	err = est.Prepare(prep)
	cancel()
	switch {
	case errors.Is(err, grpo.ErrUnavailable):
		fmt.Fprintf(c.Root().ErrWriter, "grpo serve: %v; answering 503 until it is reachable\n", err)
	case err != nil:
		return fmt.Errorf("grpo serve: %w", err)
	}
	ln, err := net.Listen("tcp", c.String("listen"))
	if err != nil {
		return fmt.Errorf("grpo serve: %w", err)
	}
	fmt.Fprintf(c.Root().ErrWriter, "grpo serve: %s (%s over %s) on http://%s/v1\n", cfg.Name, c.String("checkpoint"), est.Model(), ln.Addr())
	defer announceDrain(ctx, c, "grpo serve", c.Duration("drain-grace"), c.Duration("drain-timeout"))()
	if err := server.Serve(ctx, ln, cfg); err != nil {
		return fmt.Errorf("grpo serve: %w", err)
	}
	fmt.Fprintln(c.Root().ErrWriter, "grpo serve: drained, bye")
	return nil
}

// grpoServeConfig loads the checkpoint and builds the server's config,
// checking every flag; it does not talk to Ollama.
func grpoServeConfig(c *ucli.Command) (server.Config, *grpo.Estimator, error) {
	ckpt := c.String("checkpoint")
	if ckpt == "" {
		return server.Config{}, nil, errors.New("--checkpoint DIR is required")
	}
	if n := c.Int("num-ctx"); n < 1 || n > maxNumCtx {
		return server.Config{}, nil, fmt.Errorf("--num-ctx: got %d, want 1 to %d tokens", n, maxNumCtx)
	}
	st, err := grpo.LoadState(ckpt)
	if err != nil {
		return server.Config{}, nil, err
	}
	model := c.String("model")
	if model == "" {
		model = st.Model
	}
	if model == "" {
		return server.Config{}, nil, errors.New("the checkpoint names no model; give --model")
	}
	enc, err := grpoServeEncoder(c, model)
	if err != nil {
		return server.Config{}, nil, err
	}
	est, err := grpo.NewEstimator(enc, st, c.Uint64("seed"))
	if err != nil {
		return server.Config{}, nil, fmt.Errorf("%s: %w", ckpt, err)
	}
	name := c.String("name")
	if name == "" {
		name = grpo.RunName(ckpt)
	}
	cfg := server.Config{
		Estimator: est, Name: name, Created: grpo.CheckpointTime(ckpt),
		Limits: serveLimits(c), Log: accessLog(c),
	}
	return cfg, est, cfg.Validate()
}

// grpoServeEncoder is grpo eval's encoder without the progress bar and
// without retries: a client that gets the 503 retries on its own clock.
func grpoServeEncoder(c *ucli.Command, model string) (*grpo.Encoder, error) {
	client, err := api.ClientFromEnvironment()
	if err != nil {
		return nil, fmt.Errorf("ollama: %w", err)
	}
	cache := c.String("cache")
	if cache == "" {
		if cache, err = defaultEmbeddingCache(); err != nil {
			return nil, err
		}
	}
	return &grpo.Encoder{Client: client, Model: model, Cache: cache, NumCtx: c.Int("num-ctx"), Retries: -1}, nil
}
