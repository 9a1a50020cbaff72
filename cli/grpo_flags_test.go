package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	ucli "github.com/urfave/cli/v3"

	"bagen-data/grpo"
)

// parseGRPOTrain reads args with grpo train's flags into a grpo.Config,
// without training.
func parseGRPOTrain(t *testing.T, args ...string) (grpo.Config, error) {
	t.Helper()
	var cfg grpo.Config
	var err error
	app := parseOnly(grpoTrain, func(_ context.Context, c *ucli.Command) error { cfg, err = grpoConfig(c); return nil })
	if e := app.Run(context.Background(), append([]string{"bagen-data", "train"}, args...)); e != nil {
		t.Fatalf("parse %v: %v", args, e)
	}
	return cfg, err
}

// TestGRPOFlagZeros: every numeric flag of grpo train and grpo eval given
// 0 either means zero (the Config holds 0) or is refused with an error
// naming the flag; none falls back to a default.
func TestGRPOFlagZeros(t *testing.T) {
	type check func(grpo.Config) bool
	for _, tc := range []struct {
		cmd  string // "train" or "eval"
		flag string
		args []string // extra flags
		ok   check    // for a zero that means zero
		err  string   // for a refused zero: the whole error
	}{
		{cmd: "train", flag: "sft-epochs", err: `grpo train: --sft-epochs: got 0 with init "sft", want 1 to 10000 (init "random" is GRPO without SFT)`},
		{cmd: "train", flag: "sft-epochs", args: []string{"--init", "random"}, ok: func(c grpo.Config) bool { return *c.SFTEpochs == 0 && c.Init == grpo.InitRandom }},
		{cmd: "train", flag: "sft-batch", err: "grpo train: --sft-batch: got 0, want 1 to 65536"},
		{cmd: "train", flag: "sft-lr", err: "grpo train: --sft-lr: got 0, want more than 0, at most 10"},
		{cmd: "train", flag: "epochs", ok: func(c grpo.Config) bool { return *c.Epochs == 0 && *c.SFTEpochs == 5 }},
		{cmd: "train", flag: "epochs", args: []string{"--init", "random"}, err: `grpo train: --epochs: got 0 with init "random", which would train nothing; want 1 to 10000`},
		{cmd: "train", flag: "batch", err: "grpo train: --batch: got 0, want 1 to 65536"},
		{cmd: "train", flag: "group", err: "grpo train: --group: got 0, want 2 to 1024"},
		{cmd: "train", flag: "updates", err: "grpo train: --updates: got 0, want 1 to 1024"},
		{cmd: "train", flag: "lr", err: "grpo train: --lr: got 0, want more than 0, at most 10"},
		{cmd: "train", flag: "kl", ok: func(c grpo.Config) bool { return *c.KL == 0 }},
		{cmd: "train", flag: "clip", ok: func(c grpo.Config) bool { return *c.Clip == 0 }},
		{cmd: "train", flag: "hidden", err: "grpo train: --hidden: got 0, want 1 to 4096"},
		{cmd: "train", flag: "bins", err: "grpo train: --bins: got 0, want 2 to 10000"},
		{cmd: "train", flag: "seed", ok: func(c grpo.Config) bool { return c.Seed == 0 }},
		{cmd: "train", flag: "num-ctx", err: "grpo train: --num-ctx: got 0, want 1 to 1048576 tokens"},
		{cmd: "train", flag: "concurrency", err: "grpo train: --concurrency: got 0, want 1 to 64 requests"},
		{cmd: "eval", flag: "num-ctx", err: "grpo eval: --num-ctx: got 0, want 1 to 1048576 tokens"},
		{cmd: "eval", flag: "concurrency", err: "grpo eval: --concurrency: got 0, want 1 to 64 requests"},
	} {
		args := append([]string{"--" + tc.flag, "0"}, tc.args...)
		t.Run(tc.cmd+" "+tc.flag+" 0 "+fmtArgs(tc.args), func(t *testing.T) {
			if tc.ok != nil {
				cfg, err := parseGRPOTrain(t, args...)
				if err != nil || !tc.ok(cfg) {
					t.Errorf("%v: got %+v, %v; want the zero kept", args, cfg, err)
				}
				return
			}
			base := []string{"grpo", "train", "--data", t.TempDir(), "--out", t.TempDir()}
			if tc.cmd == "eval" {
				base = []string{"grpo", "eval", "--checkpoint", t.TempDir(), "--data", "x.parquet"}
			}
			_, err := runApp(t, append(base, args...)...)
			if err == nil || err.Error() != tc.err {
				t.Errorf("%v: got %v, want %q", args, err, tc.err)
			}
		})
	}
}

// TestGRPOFlagZerosCoverAll: the table above names every numeric flag.
func TestGRPOFlagZerosCoverAll(t *testing.T) {
	tested := map[string]bool{
		"train sft-epochs": true, "train sft-batch": true, "train sft-lr": true, "train epochs": true, "train batch": true,
		"train group": true, "train updates": true, "train lr": true, "train kl": true, "train clip": true, "train hidden": true,
		"train bins": true, "train seed": true, "train num-ctx": true, "train concurrency": true,
		"eval num-ctx": true, "eval concurrency": true,
	}
	for _, cmd := range []*ucli.Command{grpoTrain, grpoEval} {
		for _, f := range cmd.Flags {
			switch f.(type) {
			case *ucli.IntFlag, *ucli.Int64Flag, *ucli.UintFlag, *ucli.Uint64Flag, *ucli.Float64Flag, *ucli.DurationFlag:
				if name := cmd.Name + " " + f.Names()[0]; !tested[name] {
					t.Errorf("numeric flag %s has no zero case", name)
				}
			}
		}
	}
}

// TestGRPOFlagsAllBad: every refused value is reported at once.
func TestGRPOFlagsAllBad(t *testing.T) {
	_, err := parseGRPOTrain(t, "--batch", "0", "--lr", "-1", "--group", "1", "--clip", "1", "--epochs", "-1")
	want := "--batch: got 0, want 1 to 65536\n--group: got 1, want 2 to 1024\n--lr: got -1, want more than 0, at most 10\n" +
		"--epochs: got -1, want 0 (SFT only) to 10000\n--clip: got 1, want in [0, 1)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	var fe *grpo.FieldError
	if !errors.As(err, &fe) || fe.Field != "Epochs" {
		t.Errorf("errors.As FieldError: %v", fe)
	}
}

func fmtArgs(a []string) string {
	s := ""
	for _, x := range a {
		s += x + " "
	}
	return s
}

// TestGRPOTrainOutChecked: an --out that holds an earlier run is refused
// before Ollama is asked anything (OLLAMA_HOST points at a closed port).
func TestGRPOTrainOutChecked(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "run", grpo.CheckpointDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run", grpo.CheckpointDir, grpo.LatestFile), []byte("epoch-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	bagen(t, dir, "grpo", "train", "--data", dir, "--out", "run").oneLine(t, 2,
		"bagen-data: grpo train: --out run: holds the checkpoints of an earlier run: pass --resume to continue it, or give a new directory")
}
