package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ollama/ollama/api"
	ucli "github.com/urfave/cli/v3"

	"bagen-data/eval"
	"bagen-data/grpo"
	"bagen-data/internal/atomicfile"
	"bagen-data/internal/cache"
)

// GRPO is the `bagen-data grpo` command: train and evaluate a policy head
// over a frozen LLM served by Ollama.
var GRPO = &ucli.Command{
	Name:  "grpo",
	Usage: "train a small policy head over a frozen Ollama model with SFT and GRPO, evaluate it and serve it",
	Description: `A laptop-scale reproduction of the paper's estimation training: the data
files of build, the rule reward, GRPO (group advantages, clipped surrogate,
k3 KL to the reference head), but the policy is a small MLP on the
embeddings of a frozen model served by Ollama ($OLLAMA_HOST).`,
	Commands: []*ucli.Command{grpoTrain, grpoEval, grpoServe},
}

var (
	modelFlag = &ucli.StringFlag{Name: "model", Value: "qwen2.5:7b-instruct", Usage: "Ollama `MODEL` whose embeddings the head reads"}
	cacheFlag = &ucli.StringFlag{Name: "cache", Usage: "embedding cache `DIR` (default: $BAGEN_DATA_CACHE/embeddings, else ~/.cache/bagen-data/embeddings)"}
	numCtx    = &ucli.IntFlag{Name: "num-ctx", Value: 8192, Usage: "context length the model embeds with, in `TOKENS` (longer prompts are truncated)"}
	embedConc = &ucli.IntFlag{Name: "concurrency", Value: 2, Usage: "`N` embedding requests in flight"}
)

var grpoTrain = &ucli.Command{
	Name:      "train",
	Usage:     "SFT warm start (or --init random), then GRPO, with a checkpoint and an eval after every epoch",
	UsageText: "bagen-data grpo train --data DIR --out DIR [--model MODEL] [--init sft|random] [--resume] ...",
	Flags: []ucli.Flag{
		&ucli.StringFlag{Name: "data", Usage: "dataset `PATH`: the directory build wrote (sft/, rl/, eval/)"},
		&ucli.StringFlag{Name: "out", Usage: "output `DIR`: checkpoints, train.jsonl, plot.html, eval.json"},
		modelFlag,
		&ucli.StringFlag{Name: "init", Value: grpo.InitSFT, Usage: "sft (warm start) or random (zero-RL)"},
		&ucli.IntFlag{Name: "sft-epochs", Value: grpo.DefaultSFTEpochs, Usage: "SFT epochs, at least 1 (0 is refused: --init random is GRPO without SFT, and ignores this flag)"},
		&ucli.IntFlag{Name: "sft-batch", Value: grpo.DefaultSFTBatch, Usage: "SFT rows per step"},
		&ucli.Float64Flag{Name: "sft-lr", Value: grpo.DefaultSFTLR, Usage: "SFT Adam learning rate"},
		&ucli.IntFlag{Name: "epochs", Value: grpo.DefaultEpochs, Usage: "GRPO epochs (0: SFT only; refused with --init random)"},
		&ucli.IntFlag{Name: "batch", Value: grpo.DefaultBatch, Usage: "prompts per GRPO step"},
		&ucli.IntFlag{Name: "group", Value: grpo.DefaultGroup, Usage: "sampled answers per prompt"},
		&ucli.IntFlag{Name: "updates", Value: grpo.DefaultUpdates, Usage: "Adam updates (mini-batches) per GRPO step"},
		&ucli.Float64Flag{Name: "lr", Value: grpo.DefaultLR, Usage: "GRPO Adam learning rate"},
		&ucli.Float64Flag{Name: "kl", Value: grpo.DefaultKL, Usage: "KL coefficient β of the k3 loss term (0: no KL term)"},
		&ucli.Float64Flag{Name: "clip", Value: grpo.DefaultClip, Usage: "surrogate clip ε, in [0, 1) (0: no clipping, dual clip included)"},
		&ucli.BoolFlag{Name: "drop-uniform-groups", Usage: "leave groups whose rewards are all equal out of the loss, KL term included (DAPO-style; default: kept with advantage 0, as verl)"},
		&ucli.BoolFlag{Name: "center-only", Usage: "advantages r − mean, not divided by the group's std (verl's norm_adv_by_std_in_grpo=false, Dr. GRPO)"},
		&ucli.IntFlag{Name: "hidden", Value: grpo.DefaultHidden, Usage: "head MLP width"},
		&ucli.IntFlag{Name: "bins", Value: grpo.DefaultBins, Usage: "log-spaced interval centre bins"},
		seedFlag("of the weights, shuffles and sampling (0 is a seed like any other)"),
		&ucli.BoolFlag{Name: "resume", Usage: "continue from the latest checkpoint in --out (only --epochs may change)"},
		&ucli.StringFlag{Name: "name", Usage: "run `NAME` in eval.json (default: the --out directory's name)"},
		cacheFlag, numCtx, embedConc, quietFlag,
	},
	Action: runGRPOTrain,
}

// grpoConfig reads the training flags and checks them, and the encoder's,
// naming each bad flag; it does no I/O. Every numeric flag's zero is
// either a value (--epochs, --kl, --clip, --seed) or refused: grpo.Config
// reads a zero batch, group, width or rate as its default, which a flag
// that shows its default must not do silently.
func grpoConfig(c *ucli.Command) (grpo.Config, error) {
	var errs []error
	cfg := grpo.Config{
		Init: c.String("init"), SFTEpochs: new(c.Int("sft-epochs")), Epochs: new(c.Int("epochs")),
		KL: new(c.Float64("kl")), Clip: new(c.Float64("clip")), Seed: c.Uint64("seed"),
		DropUniformGroups: c.Bool("drop-uniform-groups"), CenterOnly: c.Bool("center-only"),
	}
	ints := []struct {
		flag     string
		min, max int
		into     *int
	}{
		{"sft-batch", 1, grpo.MaxBatch, &cfg.SFTBatch}, {"batch", 1, grpo.MaxBatch, &cfg.Batch},
		{"group", 2, grpo.MaxGroup, &cfg.Group}, {"updates", 1, grpo.MaxUpdates, &cfg.Updates},
		{"hidden", 1, grpo.MaxHidden, &cfg.Hidden}, {"bins", 2, grpo.MaxBins, &cfg.Space.Bins},
	}
	for _, f := range ints {
		if v := c.Int(f.flag); v >= f.min && v <= f.max {
			*f.into = v
		} else {
			errs = append(errs, &flagError{flag: f.flag, err: fmt.Errorf("got %d, want %d to %d", v, f.min, f.max), orig: grpo.ErrConfig})
		}
	}
	for _, f := range []struct {
		flag string
		into *float64
	}{{"sft-lr", &cfg.SFTLR}, {"lr", &cfg.LR}} {
		if v := c.Float64(f.flag); v > 0 && v <= grpo.MaxLR {
			*f.into = v
		} else {
			errs = append(errs, &flagError{flag: f.flag, err: fmt.Errorf("got %v, want more than 0, at most %v", v, grpo.MaxLR), orig: grpo.ErrConfig})
		}
	}
	errs = append(errs, flagErrors(cfg.Validate(), grpoFlags), encoderFlagErrors(c))
	return cfg, errors.Join(errs...)
}

// grpoFlags names the flag of each grpo.Config field.
var grpoFlags = map[string]string{
	"Init": "init", "SFTEpochs": "sft-epochs", "SFTBatch": "sft-batch", "SFTLR": "sft-lr", "Epochs": "epochs",
	"Batch": "batch", "Group": "group", "Updates": "updates", "LR": "lr", "KL": "kl", "Clip": "clip",
	"Hidden": "hidden", "Space.Bins": "bins",
}

// Bounds of the encoder's flags.
const (
	maxNumCtx      = 1 << 20
	maxConcurrency = 64
)

// encoderFlagErrors checks --num-ctx and --concurrency.
func encoderFlagErrors(c *ucli.Command) error {
	var errs []error
	if n := c.Int("num-ctx"); n < 1 || n > maxNumCtx {
		errs = append(errs, fmt.Errorf("--num-ctx: got %d, want 1 to %d tokens", n, maxNumCtx))
	}
	if n := c.Int("concurrency"); n < 1 || n > maxConcurrency {
		errs = append(errs, fmt.Errorf("--concurrency: got %d, want 1 to %d requests", n, maxConcurrency))
	}
	return errors.Join(errs...)
}

func runGRPOTrain(ctx context.Context, c *ucli.Command) error {
	data, out := c.String("data"), c.String("out")
	switch {
	case c.NArg() > 0:
		return usage("grpo train", fmt.Errorf("unexpected argument %q", c.Args().First()))
	case data == "" || out == "":
		return errors.New("grpo train: --data DIR and --out DIR are required")
	}
	if fi, err := os.Stat(data); err == nil && !fi.IsDir() {
		return fmt.Errorf("grpo train: --data %s: want the directory build wrote (sft/, rl/, eval/), not a file", data)
	}
	cfg, err := grpoConfig(c)
	if err != nil {
		return fmt.Errorf("grpo train: %w", err)
	}
	opt := grpo.Options{Out: out, Resume: c.Bool("resume"), Name: c.String("name")}
	if err := opt.Check(); err != nil {
		return usage("grpo train", fmt.Errorf("--out %w: pass --resume to continue it, or give a new directory", err))
	}
	enc, err := grpoEncoder(ctx, c)
	if err != nil {
		return err
	}
	var progress io.Writer
	if !c.Bool("quiet") {
		progress = c.Root().ErrWriter
	}
	opt.Progress = progress
	res, st, err := grpo.TrainDir(ctx, enc, data, cfg, opt)
	if err != nil {
		return fmt.Errorf("grpo train: %w", withOllamaHint(err))
	}
	fmt.Fprintf(c.Root().Writer, "grpo: %s: train reward expected %s (untrained %s), greedy %s (untrained %s); eval R %s, Acc %s, Cover %s\n",
		out, res.Train.Expected.Fixed(3), res.Initial.Expected.Fixed(3), res.Train.Reward.Fixed(3), res.Initial.Reward.Fixed(3),
		res.Eval.Reward.Fixed(3), res.Eval.Accuracy.Pct(), res.Eval.Coverage.Pct())
	if !c.Bool("quiet") {
		fmt.Fprintln(c.Root().ErrWriter, speedSummary(res, st))
	}
	return nil
}

// speedSummary reports policy steps/s and the head's share of the wall
// time, with the embedding time of this run standing for Ollama's.
func speedSummary(res *grpo.Result, st grpo.Stats) string {
	head := res.Policy.Seconds()
	share := head / (head + st.Elapsed.Seconds())
	return fmt.Sprintf("grpo: %d policy steps in %.2fs (%.1f steps/s); head %.1f%% of wall time, embedding %.1f%%",
		res.Steps, head, float64(res.Steps)/max(head, 1e-9), 100*share, 100*(1-share))
}

func grpoEncoder(ctx context.Context, c *ucli.Command) (*grpo.Encoder, error) {
	client, err := api.ClientFromEnvironment()
	if err != nil {
		return nil, fmt.Errorf("grpo: ollama: %w", err)
	}
	if err := checkOllama(ctx); err != nil {
		return nil, fmt.Errorf("grpo: %w", err)
	}
	cache := c.String("cache")
	if cache == "" {
		cache, err = defaultEmbeddingCache()
		if err != nil {
			return nil, err
		}
	}
	bar := newProgress(c.Bool("quiet"))
	model := c.String("model")
	return &grpo.Encoder{
		Client: client, Model: model, Cache: cache, Concurrency: c.Int("concurrency"), NumCtx: c.Int("num-ctx"),
		Progress: func(done, total int) {
			bar.updateNote("embed "+model, int64(done), int64(total), bar.rate(int64(done), int64(total), "prompts"))
			if done == total {
				bar.done()
			}
		},
	}, nil
}

// defaultEmbeddingCache is the cache directory's embeddings.
func defaultEmbeddingCache() (string, error) {
	d, err := cache.Path("embeddings")
	if err != nil {
		return "", fmt.Errorf("grpo: embedding cache: %w (or pass --cache)", err)
	}
	return d, nil
}

var grpoEval = &ucli.Command{
	Name:      "eval",
	Usage:     "answer eval probes with a trained head and print the paper's metrics",
	UsageText: "bagen-data grpo eval --checkpoint DIR --data eval/test.parquet [--json FILE] [--predictions-out FILE]",
	Flags: []ucli.Flag{
		&ucli.StringFlag{Name: "checkpoint", Usage: "a checkpoint `DIR`, or a grpo train --out directory (its latest checkpoint)"},
		dataFlag("eval probes"),
		&ucli.StringFlag{Name: "model", Usage: "Ollama `MODEL` (default: the one the checkpoint was trained on)"},
		&ucli.StringFlag{Name: "json", Usage: "write the eval.Run (every number) to `FILE`"},
		&ucli.StringFlag{Name: "predictions-out", Usage: "write the answers as predictions JSONL to `FILE`"},
		&ucli.StringFlag{Name: "name", Usage: "run `NAME` in --json (default: the checkpoint directory's name)"},
		cacheFlag, numCtx, embedConc, quietFlag,
	},
	Action: runGRPOEval,
}

func runGRPOEval(ctx context.Context, c *ucli.Command) error {
	ckpt, data := c.String("checkpoint"), dataFile(c.String("data"))
	if ckpt == "" || data == "" {
		return errors.New("grpo eval: --checkpoint DIR and --data FILE are required")
	}
	if err := encoderFlagErrors(c); err != nil {
		return fmt.Errorf("grpo eval: %w", err)
	}
	st, err := grpo.LoadState(ckpt)
	if err != nil {
		return fmt.Errorf("grpo eval: %w", err)
	}
	if !c.IsSet("model") && st.Model != "" {
		if err := c.Set("model", st.Model); err != nil {
			return err
		}
	}
	if c.String("model") == "" {
		return errors.New("grpo eval: the checkpoint names no model; give --model")
	}
	run, preds, err := grpoEvalRun(ctx, c, st, data)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Root().Writer, "%s: %s\n", run.Name, run.Data)
	if err := eval.WriteText(c.Root().Writer, run.Metrics); err != nil {
		return err
	}
	return writeGRPOEvalOutputs(c, run, preds)
}

func grpoEvalRun(ctx context.Context, c *ucli.Command, st *grpo.State, data string) (eval.Run, []byte, error) {
	enc, err := grpoEncoder(ctx, c)
	if err != nil {
		return eval.Run{}, nil, err
	}
	ev, err := grpo.EvaluateFile(ctx, enc, st, data)
	if err != nil {
		return eval.Run{}, nil, fmt.Errorf("grpo eval: %w", withOllamaHint(err))
	}
	if ev.Mismatch != nil {
		fmt.Fprintf(c.Root().ErrWriter, "warning: grpo eval: %s: %v\n", data, ev.Mismatch)
	}
	name := c.String("name")
	if name == "" {
		name = filepath.Base(filepath.Clean(c.String("checkpoint")))
	}
	return eval.Run{Name: name, Data: data, Model: enc.Model, Metrics: ev.Metrics}, ev.Predictions, nil
}

func writeGRPOEvalOutputs(c *ucli.Command, run eval.Run, preds []byte) error {
	if path := c.String("json"); path != "" {
		if err := eval.WriteRun(path, run); err != nil {
			return fmt.Errorf("grpo eval: %w", err)
		}
	}
	if path := c.String("predictions-out"); path != "" {
		err := atomicfile.Write(path, func(w io.Writer) error { _, err := w.Write(preds); return err })
		if err != nil {
			return fmt.Errorf("grpo eval: %w", err)
		}
	}
	return nil
}
