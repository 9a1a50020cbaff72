package cli

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	ucli "github.com/urfave/cli/v3"

	"bagen-data/dataset"
	"bagen-data/grpo"
	"bagen-data/probes"
)

// Out-of-range numbers are refused before any work, every one named by its
// flag: no output directory appears.
func TestBuildFlagBounds(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	_, err := run(t, "build", "-q", "--out", out, "--balance-ratio", "Inf", "--oversample-possible", "1000000000",
		"--workers", "100000", "--probe-every", "-1", "--min-remaining", "-5", "--budget", "99999999999999999",
		"--split", "9223372036854775807/9223372036854775807/102", "--width", "fix9223372036854775807")
	want := `build: split "9223372036854775807/9223372036854775807/102": "9223372036854775807" is not an integer percentage 0 to 100
--budget: got 99999999999999999, want 0 (the trajectory's or the task's) to 9007199254740992 tokens
--width: got fix9223372036854775808, want a half-width of 0 to 9007199254740992 tokens
--probe-every: got -1, want 0 (every turn) to 1048576 turns
--min-remaining: got -5, want 0 to 9007199254740992 tokens
--oversample-possible: got 1000000000, want 1 to 100 copies
--balance-ratio: got +Inf, want 0 (no cap) to 1e+06
--workers: got 100000, want 0 (all cores) to 1024`
	if err == nil || err.Error() != want {
		t.Fatalf("got error\n%v\nwant\n%s", err, want)
	}
	var fe *dataset.FieldError
	if !errors.As(err, &fe) || fe.Field != "Budget" {
		t.Errorf("errors.As: %+v, want the library's FieldError for Budget", fe)
	}
	for _, tc := range []struct{ value, want string }{
		{"NaN", "build: --balance-ratio: got NaN, want 0 (no cap) to 1e+06"},
		{"1e19", "build: --balance-ratio: got 1e+19, want 0 (no cap) to 1e+06"},
		{"-0.5", "build: --balance-ratio: got -0.5, want 0 (no cap) to 1e+06"},
	} {
		if _, err := run(t, "build", "-q", "--out", out, "--balance-ratio", tc.value); err == nil || err.Error() != tc.want {
			t.Errorf("--balance-ratio %s: got %v, want %s", tc.value, err, tc.want)
		}
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused build created %s (stat: %v)", out, err)
	}
}

func TestGRPOFlagBounds(t *testing.T) {
	dir := t.TempDir()
	_, err := run(t, "grpo", "train", "--data", filepath.Join(dir, "missing"), "--out", filepath.Join(dir, "run"),
		"--epochs", "1000000000", "--hidden", "1000000000", "--bins", "1", "--lr", "NaN", "--kl", "-Inf",
		"--clip", "1", "--group", "1", "--num-ctx", "0", "--concurrency", "100000")
	want := `grpo train: --group: got 1, want 2 to 1024
--hidden: got 1000000000, want 1 to 4096
--bins: got 1, want 2 to 10000
--lr: got NaN, want more than 0, at most 10
--epochs: got 1000000000, want 0 (SFT only) to 10000
--kl: got -Inf, want 0 (no KL term) to 1000
--clip: got 1, want in [0, 1)
--num-ctx: got 0, want 1 to 1048576 tokens
--concurrency: got 100000, want 1 to 64 requests`
	if err == nil || err.Error() != want {
		t.Fatalf("got error\n%v\nwant\n%s", err, want)
	}
	if !errors.Is(err, grpo.ErrConfig) {
		t.Errorf("%v does not wrap grpo.ErrConfig", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "run")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused run created its output directory (stat: %v)", err)
	}
	_, err = run(t, "grpo", "eval", "--checkpoint", dir, "--data", "x.parquet", "--concurrency", "0")
	if want := "grpo eval: --concurrency: got 0, want 1 to 64 requests"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// parseOnly is an app whose only command has cmd's flags and runs action
// instead of cmd's: the command line's own parse-and-check path, no work.
func parseOnly(cmd *ucli.Command, action ucli.ActionFunc) *ucli.Command {
	c := prepareCommands([]*ucli.Command{cmd})[0]
	c.Action = action
	return &ucli.Command{Name: "bagen-data", Commands: []*ucli.Command{c}, Writer: io.Discard, ErrWriter: io.Discard,
		ExitErrHandler: func(context.Context, *ucli.Command, error) {}}
}

// FuzzBuildFlags feeds arbitrary values to build's numeric flags through
// the command line's parsing and checks: an error, or a config that
// validates and that the planning code takes without panicking.
func FuzzBuildFlags(f *testing.F) {
	f.Add("1.0", "2", "0", "1", "1", "0", "40/50/10", "pct30", "42")
	f.Add("Inf", "1000000000", "-1", "0", "-5", "99999999999999999", "9223372036854775807/9223372036854775807/102", "fix9223372036854775807", "18446744073709551615")
	f.Add("NaN", "100", "1024", "1048576", "9007199254740992", "9007199254740992", "100/0/0", "pct99.9999", "0")
	f.Add("1e6", "1", "1", "2", "0", "1", "0/0/100", "point", "1")
	f.Fuzz(func(t *testing.T, ratio, oversample, workers, every, minRemaining, budget, split, width, seed string) {
		var cfg dataset.Config
		var cfgErr error
		ran := false
		app := parseOnly(Build, func(_ context.Context, c *ucli.Command) error {
			ran = true
			cfg, cfgErr = buildConfig(c, c.String("task"))
			return cfgErr
		})
		app.Run(context.Background(), []string{"bagen-data", "build", "--balance-ratio=" + ratio, "--oversample-possible=" + oversample,
			"--workers=" + workers, "--probe-every=" + every, "--min-remaining=" + minRemaining, "--budget=" + budget,
			"--split=" + split, "--width=" + width, "--seed=" + seed})
		if !ran || cfgErr != nil {
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("accepted a config that does not validate: %v", err)
		}
		if r := *cfg.Balance.Ratio; math.IsNaN(r) || math.IsInf(r, 0) {
			t.Fatalf("accepted balance ratio %v", r)
		}
		entries := make([]dataset.Entry, 50)
		for i := range entries {
			entries[i] = dataset.Entry{Traj: int32(i)}
		}
		got, _ := dataset.Balanced(entries, func(e dataset.Entry) bool { return e.Traj%7 == 0 }, cfg.Balance, cfg.Seed, "rl")
		if len(got) > 50*max(cfg.Balance.Oversample, 1) {
			t.Fatalf("%d rows from 50 entries with oversample %d", len(got), cfg.Balance.Oversample)
		}
		lo, hi := cfg.Width.Interval(probes.MaxTokens)
		if lo < 1 || hi < lo {
			t.Fatalf("width %s: interval [%d, %d] for r = 2^53", cfg.Width.Text, lo, hi)
		}
	})
}

// FuzzGRPOFlags does the same for grpo train's flags.
func FuzzGRPOFlags(f *testing.F) {
	f.Add("5", "16", "0.01", "5", "16", "16", "2", "0.003", "0.05", "0.2", "64", "40", "8192", "2")
	f.Add("1000000000", "-1", "NaN", "-5", "0", "1", "99999", "Inf", "-Inf", "1", "1000000000", "1", "0", "100000")
	f.Fuzz(func(t *testing.T, sftEpochs, sftBatch, sftLR, epochs, batch, group, updates, lr, kl, clip, hidden, bins, numCtx, conc string) {
		var cfg grpo.Config
		var cfgErr error
		ran := false
		app := parseOnly(grpoTrain, func(_ context.Context, c *ucli.Command) error {
			ran = true
			cfg, cfgErr = grpoConfig(c)
			return cfgErr
		})
		args := []string{"bagen-data", "train"}
		for _, kv := range [][2]string{{"sft-epochs", sftEpochs}, {"sft-batch", sftBatch}, {"sft-lr", sftLR},
			{"epochs", epochs}, {"batch", batch}, {"group", group}, {"updates", updates}, {"lr", lr}, {"kl", kl},
			{"clip", clip}, {"hidden", hidden}, {"bins", bins}, {"num-ctx", numCtx}, {"concurrency", conc}} {
			args = append(args, "--"+kv[0]+"="+kv[1])
		}
		app.Run(context.Background(), args)
		if !ran || cfgErr != nil {
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("accepted a config that does not validate: %v", err)
		}
		for _, v := range []float64{cfg.SFTLR, cfg.LR, *cfg.KL, *cfg.Clip} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("accepted %v in %+v", v, cfg)
			}
		}
	})
}
