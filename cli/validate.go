package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"bagen-data/internal/atomicfile"
	"bagen-data/tokenizer"
	"bagen-data/validate"
)

// Validate is the `bagen-data validate` command.
var Validate = &ucli.Command{
	Name:      "validate",
	Usage:     "check SFT, RL and eval parquet before training: schema, labels, leakage, shape, balance",
	UsageText: "bagen-data validate [--json FILE] [--strict] [--max-examples N] [--tokenizer SPEC [--max-prompt-tokens N]] PATH...",
	Description: `PATH is a dataset directory written by build (sft/train.parquet,
rl/train.parquet, eval/test.parquet and manifest.json) or parquet files.
A file outside sft/, rl/ and eval/ whose rows say split "probes" (written by
bagen-data probes) is checked as a benchmark probe set: schema, shape and the
replay label rules (Warehouse rows against their label column), without the
split-leakage checks.
Every problem is reported with the file, the 0-based row and the custom_id of
its first offenders and a count. The exit status is 1 when any error-level
check fails; warnings fail only with --strict, information never.

` + validate.CatalogueText(),
	Flags: []ucli.Flag{
		&ucli.StringSliceFlag{Name: "input", Aliases: []string{"i"}, Usage: "dataset directory or parquet `FILE` to check (repeatable; or give them as arguments)"},
		&ucli.StringFlag{Name: "json", Usage: "write the report as JSON to `FILE` (- for standard output) instead of printing it as text"},
		&ucli.BoolFlag{Name: "strict", Usage: "make every warning an error (exit status 1), for CI"},
		&ucli.IntFlag{Name: "max-examples", Value: validate.DefaultMaxExamples, Usage: "`N` offending rows listed per finding"},
		&ucli.StringFlag{Name: "tokenizer", Usage: "count prompt tokens with `SPEC` (a tokenizer.json path, ollama:MODEL or hf:REPO) , warn about long prompts and check tokens_used and per_turn_tokens against the counted system and user messages"},
		&ucli.IntFlag{Name: "max-prompt-tokens", Value: validate.DefaultMaxPromptTokens, Usage: "warn about prompts longer than `N` tokens (verl's max_prompt_length)"},
	},
	Action: runValidate,
}

func runValidate(ctx context.Context, c *ucli.Command) error {
	paths := append(c.StringSlice("input"), c.Args().Slice()...)
	if len(paths) == 0 {
		return usage("validate", errors.New("give a dataset directory or parquet files"))
	}
	for _, name := range []string{"max-examples", "max-prompt-tokens"} {
		if c.Int(name) < 0 {
			return usage("validate", fmt.Errorf("--%s: want ≥ 0, got %d", name, c.Int(name)))
		}
	}
	if j := c.String("json"); strings.HasSuffix(j, ".parquet") {
		return usage("validate", fmt.Errorf("--json %s: --json takes the report's output FILE (- for standard output); the parquet to check goes after the flags", j))
	}
	cfg := validate.Config{MaxExamples: c.Int("max-examples"), MaxPromptTokens: c.Int("max-prompt-tokens"), Strict: c.Bool("strict")}
	if spec := c.String("tokenizer"); spec != "" {
		t, err := tokenizer.Open(ctx, spec)
		if err != nil {
			return fmt.Errorf("validate: %w", err)
		}
		cfg.Counter = t
	}
	r, err := validate.Run(ctx, paths, cfg)
	if err != nil {
		return err
	}
	if path := c.String("json"); path != "" {
		err = atomicfile.Write(path, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			return enc.Encode(r)
		})
	} else {
		err = r.WriteText(c.Root().Writer)
	}
	if err != nil {
		return err
	}
	if !r.OK() {
		return fmt.Errorf("validate: %s: %w", validate.Plural(r.Errors, "error finding"), validate.ErrInvalid)
	}
	return nil
}
