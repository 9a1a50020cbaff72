package dataset

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"bagen-data/probes"
)

func ExampleBuild() {
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "rollouts.jsonl")
	os.WriteFile(in, canonical(40, 0), 0o644) // canonical JSONL with recorded counts

	width, _ := probes.ParseWidth("pct30")
	m, err := Build(context.Background(), []probes.Source{probes.FileSource(in)}, filepath.Join(dir, "out"), Config{
		Task: probes.Tasks["sokoban"], Width: width, Seed: 42,
		Probes:  probes.Options{MinRemaining: 1},
		Balance: Balance{Oversample: 2, Ratio: 1},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range []SplitStats{m.Splits.SFT, m.Splits.RL, m.Splits.Eval} {
		fmt.Printf("%-17s %2d trajectories, rows %d possible / %d impossible\n", s.File, s.Trajectories.Total(), s.Rows.Possible, s.Rows.Impossible)
	}
	// Output:
	// sft/train.parquet 16 trajectories, rows 54 possible / 14 impossible
	// rl/train.parquet  20 trajectories, rows 70 possible / 12 impossible
	// eval/test.parquet  4 trajectories, rows 3 possible / 9 impossible
}
