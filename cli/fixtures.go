package cli

import (
	"context"
	"fmt"
	"sync/atomic"

	ucli "github.com/urfave/cli/v3"

	"bagen-data/fixtures"
	"bagen-data/tokenizer"
)

// Fixtures is the `bagen-data fixtures` command.
var Fixtures = &ucli.Command{
	Name:      "fixtures",
	Usage:     "generate realistic rollout logs (canonical JSONL) for sokoban, searchr1 or warehouse",
	UsageText: "bagen-data fixtures sokoban|searchr1|warehouse --out FILE [options]",
	Description: `Plays scripted agents of tunable skill and writes their rollouts, one
trajectory per line, with each message's Qwen token count. The output is
compressed by extension (.gz, .zst) and is byte-identical for the same flags.`,
	Commands: []*ucli.Command{
		{
			Name:  "sokoban",
			Usage: "an optimal Sokoban solver whose actions turn random or misleading with probability --noise",
			Flags: append(fixtureFlags(128, 0.3),
				&ucli.IntFlag{Name: "size", Value: 6, Usage: "room side `N`, walls included"},
				&ucli.IntFlag{Name: "boxes", Value: 1, Usage: "number of boxes"},
				&ucli.IntFlag{Name: "budget", Value: 2500, Usage: "token `BUDGET`; a rollout that spends more fails"},
				&ucli.IntFlag{Name: "max-turns", Usage: "turn limit", DefaultText: "10 up to 6x6, else 15"},
				&ucli.IntFlag{Name: "max-actions", Value: 3, Usage: "most actions per turn, 1 to 3"},
				&ucli.IntFlag{Name: "search-depth", Value: 30, Usage: "room generator's reverse-play depth"},
				&ucli.IntFlag{Name: "min-solution", Usage: "skip rooms solvable in fewer `MOVES`"},
			),
			Action: runFixtures(sokobanGen),
		},
		{
			Name:  "searchr1",
			Usage: "a multi-hop search agent over a toy corpus: search[query] ... finish[answer]",
			Flags: append(fixtureFlags(64, 0.5),
				&ucli.IntFlag{Name: "budget", Value: 3500, Usage: "token `BUDGET`; a rollout that spends more fails"},
				&ucli.IntFlag{Name: "max-turns", Value: 15, Usage: "turn limit"},
				&ucli.IntFlag{Name: "top-k", Value: 3, Usage: "passages per search"},
			),
			Action: runFixtures(searchGen),
		},
		{
			Name:   "warehouse",
			Usage:  "a heuristic ordering policy in a 12-turn supply-chain simulation",
			Flags:  fixtureFlags(64, 0.2),
			Action: runFixtures(warehouseGen),
		},
	},
}

// fixtureFlags are the flags every generator takes.
func fixtureFlags(n int, noise float64) []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "out", Aliases: []string{"o"}, Required: true, Usage: "output `FILE` (.jsonl, .jsonl.gz or .jsonl.zst)"},
		&ucli.IntFlag{Name: "n", Value: n, Usage: "`N` trajectories"},
		&ucli.Float64Flag{Name: "noise", Value: noise, Usage: "probability of a random or misleading move, 0 to 1"},
		&ucli.Int64Flag{Name: "seed", Value: DefaultSeed, Usage: "`SEED` of the environments and the agent"},
		&ucli.StringFlag{Name: "tokenizer", Usage: "Qwen token counter `SPEC`: a tokenizer.json path, ollama:MODEL or hf:REPO", DefaultText: "Qwen's, cached by make tokenizer"},
		&ucli.IntFlag{Name: "workers", Usage: "`N` parallel workers; the output does not depend on it", DefaultText: "all cores"},
		quietFlag,
	}
}

type fixtureGen func(c *ucli.Command, tok fixtures.Counter) (fixtures.Generate, error)

func runFixtures(newGen fixtureGen) ucli.ActionFunc {
	return func(ctx context.Context, c *ucli.Command) error {
		name := "fixtures " + c.Name
		if c.NArg() > 0 {
			return usage(name, fmt.Errorf("unexpected argument %q", c.Args().First()))
		}
		if n := c.Int("n"); n < 1 {
			return fmt.Errorf("%s: -n: got %d, want at least 1", name, n)
		}
		tok, err := tokenizer.Open(ctx, c.String("tokenizer"))
		if err != nil && c.String("tokenizer") == "" {
			err = fmt.Errorf("%w (run `make tokenizer` to cache Qwen's tokenizer.json, or pass --tokenizer PATH)", err)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		gen, err := newGen(c, tok)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		bar, n := newProgress(c.Bool("quiet")), c.Int("n")
		var done atomic.Int64
		counted := func(i int) (fixtures.Trajectory, error) {
			t, err := gen(i)
			bar.update(name, done.Add(1), int64(n))
			return t, err
		}
		st, err := fixtures.WriteFile(ctx, c.String("out"), n, c.Int("workers"), counted)
		bar.done()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if !c.Bool("quiet") {
			fmt.Fprintf(c.Root().Writer, "%s: %s\n", c.String("out"), st)
		}
		return nil
	}
}

func sokobanGen(c *ucli.Command, tok fixtures.Counter) (fixtures.Generate, error) {
	return fixtures.SokobanRollouts(fixtures.SokobanConfig{
		Size: c.Int("size"), Boxes: c.Int("boxes"), Noise: c.Float64("noise"), Seed: c.Int64("seed"),
		Budget: c.Int("budget"), MaxTurns: c.Int("max-turns"), MaxActions: c.Int("max-actions"),
		SearchDepth: c.Int("search-depth"), MinSolution: c.Int("min-solution"), Tokens: tok,
	})
}

func searchGen(c *ucli.Command, tok fixtures.Counter) (fixtures.Generate, error) {
	return fixtures.SearchRollouts(fixtures.SearchConfig{
		Noise: c.Float64("noise"), Seed: c.Int64("seed"), Budget: c.Int("budget"),
		MaxTurns: c.Int("max-turns"), TopK: c.Int("top-k"), Tokens: tok,
	})
}

func warehouseGen(c *ucli.Command, tok fixtures.Counter) (fixtures.Generate, error) {
	return fixtures.WarehouseRollouts(fixtures.WarehouseConfig{Noise: c.Float64("noise"), Seed: c.Int64("seed"), Tokens: tok})
}
