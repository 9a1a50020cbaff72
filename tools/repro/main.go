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
	"strconv"
	"strings"
	"syscall"

	"bagen-data/cli"
	"bagen-data/internal/ollamatest"
)

// row is one line of the sweep: a training run, or an evaluation of one.
type row struct {
	name string
	dir  string   // run directory under -out
	args []string // grpo train flags
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
	if err := os.RemoveAll(data); err != nil {
		return err
	}
	if err := app(ctx, "build", "--task", "sokoban", "--width", "pct30", "--out", data, "-q"); err != nil {
		return err
	}
	common := []string{"--data", data, "--model", model, "--sft-epochs", strconv.Itoa(sftEpochs),
		"--epochs", strconv.Itoa(epochs), "--seed", strconv.FormatUint(seed, 10)}
	sft := fmt.Sprintf("SFT pct30 e%d", sftEpochs)
	rows := []row{
		{"Zero RL", "zero-rl", []string{"--init", "random", "--kl", "0.05"}},
		{sft + " → RL KL 0.05", "sft-rl-kl0.05", []string{"--kl", "0.05"}},
		{sft + " → RL KL 0.1", "sft-rl-kl0.1", []string{"--kl", "0.1"}},
	}
	for _, r := range rows {
		dir := filepath.Join(out, r.dir)
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		args := append(append([]string{"grpo", "train", "--out", dir, "--name", r.name}, common...), r.args...)
		if err := app(ctx, args...); err != nil {
			return err
		}
	}
	// The SFT row is the KL 0.05 run's last SFT checkpoint.
	sftJSON := filepath.Join(out, "sft.json")
	ckpt := filepath.Join(out, rows[1].dir, "checkpoints", fmt.Sprintf("sft-%02d", sftEpochs))
	if err := app(ctx, "grpo", "eval", "--checkpoint", ckpt, "--data", filepath.Join(data, "eval", "test.parquet"),
		"--model", model, "--name", sft, "--json", sftJSON, "-q"); err != nil {
		return err
	}
	fmt.Printf("\nSokoban budget probes, %s, local GRPO head (appendix sweep layout):\n\n", model)
	return app(ctx, "eval", "--compare", filepath.Join(out, rows[0].dir, "eval.json"), sftJSON,
		filepath.Join(out, rows[1].dir, "eval.json"), filepath.Join(out, rows[2].dir, "eval.json"))
}

// app runs one bagen-data command in this process.
func app(ctx context.Context, args ...string) error {
	fmt.Fprintf(os.Stderr, "+ bagen-data %s\n", strings.Join(args, " "))
	a := cli.App()
	a.Writer = os.Stdout
	if strings.HasPrefix(strings.Join(args, " "), "grpo eval") {
		a.Writer = os.Stderr // its full table is noise next to the sweep
	}
	return a.RunContext(ctx, append([]string{"bagen-data"}, args...))
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
