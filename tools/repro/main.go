// Command repro runs the paper's SFT/RL sweep rows (appendix "Additional
// Data for RL") with the local GRPO harness on the Sokoban fixtures with
// pct30 targets — Zero RL, SFT, SFT → GRPO with KL 0.05 and 0.1 — and
// prints them in the appendix's table layout.
//
//	go run ./tools/repro [-model tiny|MODEL] [-out out/repro] [-sft-epochs 5] [-epochs 5]
//
// With -model qwen2.5:7b-instruct (served by the Ollama at $OLLAMA_HOST)
// this is the reproduction; with the default -model tiny it starts the
// Ollama server `make ollama` builds, serves the tiny random-weight Qwen2
// test model on it and runs the same pipeline end to end.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"bagen-data/dataset"
	"bagen-data/eval"
	"bagen-data/fixtures"
	"bagen-data/grpo"
	"bagen-data/internal/cache"
	"bagen-data/internal/ollamatest"
	"bagen-data/probes"
	"bagen-data/tokenizer"

	"github.com/ollama/ollama/api"
)

// row is one line of the sweep: a training run, or an evaluation of one.
type row struct {
	name string
	dir  string // run directory under -out
	cfg  grpo.Config
}

func main() {
	model := flag.String("model", "tiny", `Ollama model, or "tiny" for the test model on a private server`)
	out := flag.String("out", "out/repro", "output directory")
	sftEpochs := flag.Int("sft-epochs", 5, "SFT epochs (the paper's e5)")
	epochs := flag.Int("epochs", 5, "GRPO epochs")
	seed := flag.Uint64("seed", 1, "training seed")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *model, *out, *sftEpochs, *epochs, *seed)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "repro: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, model, out string, sftEpochs, epochs int, seed uint64) error {
	if model == "tiny" {
		srv, err := tinyServer(out)
		if err != nil {
			return err
		}
		defer srv.Stop()
		model = srv.Model
		os.Setenv("OLLAMA_HOST", strings.TrimPrefix(srv.Host, "http://"))
	}
	data := filepath.Join(out, "data")
	if err := buildData(ctx, data); err != nil {
		return err
	}
	enc, err := encoder(model)
	if err != nil {
		return err
	}
	base := grpo.Config{SFTEpochs: grpo.Int(sftEpochs), Epochs: grpo.Int(epochs), Seed: seed}
	with := func(init string, kl float64) grpo.Config {
		c := base
		c.Init, c.KL = init, grpo.Float(kl)
		return c
	}
	sft := fmt.Sprintf("SFT pct30 e%d", sftEpochs)
	rows := []row{
		{"Zero RL", "zero-rl", with(grpo.InitRandom, 0.05)},
		{sft + " → RL KL 0.05", "sft-rl-kl0.05", with(grpo.InitSFT, 0.05)},
		{sft + " → RL KL 0.1", "sft-rl-kl0.1", with(grpo.InitSFT, 0.1)},
	}
	runs := make([]eval.Run, 0, len(rows)+1)
	for _, r := range rows {
		dir := filepath.Join(out, r.dir)
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "+ grpo train %s (%s)\n", r.name, dir)
		if _, _, err := grpo.TrainDir(ctx, enc, data, r.cfg, grpo.Options{Out: dir, Name: r.name, Progress: os.Stderr}); err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		run, err := eval.ReadRun(filepath.Join(dir, grpo.EvalFile))
		if err != nil {
			return err
		}
		runs = append(runs, run)
	}
	// The SFT row is the KL 0.05 run's last SFT checkpoint.
	ckpt := filepath.Join(out, rows[1].dir, grpo.CheckpointDir, fmt.Sprintf("sft-%02d", sftEpochs))
	st, err := grpo.LoadState(ckpt)
	if err != nil {
		return err
	}
	evalPath := filepath.Join(data, dataset.EvalFile)
	m, _, err := grpo.EvaluateFile(ctx, enc, st, evalPath)
	if err != nil {
		return fmt.Errorf("%s: %w", sft, err)
	}
	runs = slices.Insert(runs, 1, eval.Run{Name: sft, Data: evalPath, Model: model, Metrics: m})
	fmt.Printf("\nSokoban budget probes, %s, local GRPO head (appendix sweep layout):\n\n", model)
	return eval.WriteCompare(os.Stdout, runs)
}

// buildData builds the Sokoban fixtures' probes with pct30 targets and
// every other setting at build's defaults, counting with Qwen's tokenizer.
func buildData(ctx context.Context, dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	tok, err := tokenizer.Load(tokenizer.DefaultPath())
	if err != nil {
		return fmt.Errorf("tokenizer (run make tokenizer): %w", err)
	}
	width, err := probes.ParseWidth("pct30")
	if err != nil {
		return err
	}
	names, err := fixtures.Files("sokoban")
	if err != nil {
		return err
	}
	srcs := make([]probes.Source, len(names))
	for i, n := range names {
		srcs[i] = probes.FSSource(fixtures.Rollouts, n)
	}
	cfg := dataset.Config{
		Task: probes.Tasks["sokoban"], Width: width, Seed: 42, Counter: tok, Tokenizer: "qwen (cached tokenizer.json)",
		Probes:  probes.Options{MinRemaining: 1},
		Balance: dataset.Balance{Oversample: 2, Ratio: 1},
	}
	fmt.Fprintf(os.Stderr, "+ build sokoban pct30 (%s)\n", dir)
	_, err = dataset.Build(ctx, srcs, dir, cfg)
	return err
}

// encoder embeds with model on the Ollama at $OLLAMA_HOST, caching in the
// default embedding cache.
func encoder(model string) (*grpo.Encoder, error) {
	client, err := api.ClientFromEnvironment()
	if err != nil {
		return nil, err
	}
	cacheDir, err := cache.Path("embeddings")
	if err != nil {
		return nil, err
	}
	return &grpo.Encoder{Client: client, Model: model, Cache: cacheDir}, nil
}

// tinyServer starts the Ollama server `make ollama` built, with its model
// store under out, and creates the tiny test model on it.
func tinyServer(out string) (*ollamatest.Server, error) {
	if err := ollamatest.Available(); err != nil {
		return nil, err
	}
	models := filepath.Join(out, "ollama-models")
	if err := os.MkdirAll(models, 0o755); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(models)
	if err != nil {
		return nil, err
	}
	srv, err := ollamatest.Launch(abs)
	if err != nil {
		return nil, err
	}
	if err := srv.Create(); err != nil {
		srv.Stop()
		return nil, err
	}
	return srv, nil
}
