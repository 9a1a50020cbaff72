// Command repro runs the paper's SFT/RL sweep rows (appendix "Additional
// Data for RL") with the local GRPO harness on the Sokoban fixtures with
// pct30 targets — Zero RL, SFT, SFT → GRPO with KL 0.05 and 0.1 — once per
// seed, and prints each metric's mean over the seeds with its 95% Student-t
// interval beside the paper's value, then each RL row's change from SFT
// paired by seed beside the paper's change.
//
//	go run ./tools/repro [-model tiny|MODEL] [-out out/repro] [-seeds 5] [-seed 1]
//	                     [-sft-epochs 5] [-epochs 5] [-drop-uniform-groups]
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
	"time"

	"bagen-data/dataset"
	"bagen-data/eval"
	"bagen-data/fixtures"
	"bagen-data/grpo"
	"bagen-data/internal/cache"
	"bagen-data/internal/ollamatest"
	"bagen-data/probes"
	"bagen-data/rollout"
	"bagen-data/tokenizer"

	"github.com/ollama/ollama/api"
)

// row is one configuration of the sweep, trained once per seed.
type row struct {
	name  string
	dir   string // run directory under -out/seed-N
	cfg   grpo.Config
	paper *paperRow
}

// options are the command's flags.
type options struct {
	model, out        string
	sftEpochs, epochs int
	seeds             []uint64
	drop, center      bool
	lr                float64 // GRPO learning rate; 0 means grpo's default
	batch             int     // prompts per GRPO step; 0 means grpo's default
}

func main() {
	var o options
	flag.StringVar(&o.model, "model", "tiny", `Ollama model, or "tiny" for the test model on a private server`)
	flag.StringVar(&o.out, "out", "out/repro", "output directory")
	flag.IntVar(&o.sftEpochs, "sft-epochs", 5, "SFT epochs (the paper's e5)")
	flag.IntVar(&o.epochs, "epochs", 5, "GRPO epochs")
	first := flag.Uint64("seed", 1, "first training seed")
	n := flag.Int("seeds", 5, "number of seeds: seed, seed+1, …")
	flag.BoolVar(&o.drop, "drop-uniform-groups", false, "leave groups whose rewards are all equal out of the loss (default: verl's GRPO keeps them)")
	flag.BoolVar(&o.center, "center-only", false, "advantages r − mean without the std division (verl's norm_adv_by_std_in_grpo=false)")
	flag.Float64Var(&o.lr, "lr", 0, "GRPO learning rate (0: grpo's default, 3e-3)")
	flag.IntVar(&o.batch, "batch", 0, "prompts per GRPO step (0: grpo's default, 16)")
	flag.Parse()
	if *n < 2 || o.sftEpochs < 1 || o.epochs < 1 || o.lr < 0 || o.batch < 0 {
		fmt.Fprintln(os.Stderr, "repro: -seeds must be at least 2 (an interval needs two), -sft-epochs and -epochs at least 1, -lr and -batch not negative")
		os.Exit(2)
	}
	for i := range *n {
		o.seeds = append(o.seeds, *first+uint64(i))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "repro: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	start := time.Now()
	model := o.model
	if model == "tiny" {
		srv, err := tinyServer(o.out)
		if err != nil {
			return err
		}
		defer srv.Stop()
		model = srv.Model
		os.Setenv("OLLAMA_HOST", strings.TrimPrefix(srv.Host, "http://"))
	}
	data := filepath.Join(o.out, "data")
	if err := buildData(ctx, data); err != nil {
		return err
	}
	enc, err := encoder(model)
	if err != nil {
		return err
	}
	sft := fmt.Sprintf("SFT pct30 e%d", o.sftEpochs)
	rows := sweep(o, sft)
	configs := []config{{name: rows[0].name, paper: rows[0].paper}, {name: sft, paper: paperSFT}}
	for _, r := range rows[1:] {
		configs = append(configs, config{name: r.name, paper: r.paper})
	}
	for _, seed := range o.seeds {
		ms, err := runSeed(ctx, enc, o, data, rows, seed)
		if err != nil {
			return err
		}
		for i := range configs {
			configs[i].runs = append(configs[i].runs, ms[i])
		}
	}
	objective := "verl's GRPO (uniform groups kept with advantage 0)"
	if o.drop {
		objective = "uniform groups dropped (-drop-uniform-groups)"
	}
	if o.center {
		objective += ", advantages not divided by the std (-center-only)"
	}
	fmt.Printf("\nSokoban budget probes, %s, local GRPO head, %s; %d SFT and %d GRPO epochs, GRPO lr %s, batch %s; %s.\n",
		model, objective, o.sftEpochs, o.epochs, orDefault(o.lr, "3e-3"), orDefault(o.batch, "16"), time.Since(start).Round(time.Second))
	fmt.Println("Paper: the appendix's SFT/RL sweep table (Qwen2.5-7B-Instruct, full fine-tuning).")
	return writeSummary(os.Stdout, configs, 1, o.seeds)
}

// sweep is the appendix's rows: Zero RL and SFT → GRPO with KL 0.05 and
// 0.1 (the SFT row is the KL 0.05 run's last SFT checkpoint).
func sweep(o options, sft string) []row {
	with := func(init string, kl float64) grpo.Config {
		return grpo.Config{Init: init, KL: new(kl), SFTEpochs: new(o.sftEpochs), Epochs: new(o.epochs),
			DropUniformGroups: o.drop, CenterOnly: o.center, LR: o.lr, Batch: o.batch}
	}
	return []row{
		{"Zero RL", "zero-rl", with(grpo.InitRandom, 0.05), paperZeroRL},
		{sft + " → RL KL 0.05", "sft-rl-kl0.05", with(grpo.InitSFT, 0.05), paperRL005},
		{sft + " → RL KL 0.1", "sft-rl-kl0.1", with(grpo.InitSFT, 0.1), nil},
	}
}

// runSeed trains every row with seed and returns the eval metrics in the
// order Zero RL, SFT, then the RL rows.
func runSeed(ctx context.Context, enc *grpo.Encoder, o options, data string, rows []row, seed uint64) ([]eval.Metrics, error) {
	var out []eval.Metrics
	for _, r := range rows {
		dir := filepath.Join(o.out, fmt.Sprintf("seed-%d", seed), r.dir)
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "+ grpo train %s, seed %d (%s)\n", r.name, seed, dir)
		cfg := r.cfg
		cfg.Seed = seed
		if _, _, err := grpo.TrainDir(ctx, enc, data, cfg, grpo.Options{Out: dir, Name: r.name}); err != nil {
			return nil, fmt.Errorf("%s, seed %d: %w", r.name, seed, err)
		}
		run, err := eval.ReadRun(filepath.Join(dir, grpo.EvalFile))
		if err != nil {
			return nil, err
		}
		out = append(out, run.Metrics)
	}
	ckpt := filepath.Join(o.out, fmt.Sprintf("seed-%d", seed), rows[1].dir, grpo.CheckpointDir, fmt.Sprintf("sft-%02d", o.sftEpochs))
	st, err := grpo.LoadState(ckpt)
	if err != nil {
		return nil, err
	}
	ev, err := grpo.EvaluateFile(ctx, enc, st, filepath.Join(data, dataset.EvalFile))
	if err != nil {
		return nil, fmt.Errorf("SFT, seed %d: %w", seed, err)
	}
	return slices.Insert(out, 1, ev.Metrics), nil
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
	srcs := make([]rollout.Source, len(names))
	for i, n := range names {
		srcs[i] = rollout.FSSource(fixtures.Rollouts, n)
	}
	cfg := dataset.Config{
		Task: probes.Tasks["sokoban"], Width: width, Seed: 42, Counter: tok, Tokenizer: "qwen (cached tokenizer.json)",
		Balance: dataset.Balance{Oversample: 2, Ratio: new(1.0)},
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

// orDefault prints v, or def when v is zero (grpo's default).
func orDefault[T int | float64](v T, def string) string {
	if v == 0 {
		return def
	}
	return fmt.Sprint(v)
}
