package dataset

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"bagen-data/probes"
	"bagen-data/rollout"
)

func ExampleBuild() {
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "rollouts.jsonl")
	os.WriteFile(in, canonical(40, 0), 0o644) // canonical JSONL with recorded counts

	width, _ := probes.ParseWidth("pct30")
	m, err := Build(context.Background(), []rollout.Source{rollout.FileSource(in)}, filepath.Join(dir, "out"), Config{
		Task: probes.Tasks["sokoban"], Width: width, Seed: 42,
		Balance: Balance{Oversample: 2, Ratio: new(1.0)},
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

// AssignBagenV1 splits ten trajectories as the authors' pipeline:
// random.Random(42).shuffle of the ids, then int(0.4n) / int(0.5n) / rest
// (python3 gives sft t7 t3 t2 t8, rl t5 t6 t9 t4 t0, eval t1).
func ExampleAssignBagenV1() {
	split := AssignBagenV1(10, Ratio{SFT: 40, RL: 50, Eval: 10}, 42)
	names := []string{"sft", "rl", "eval"}
	for i, s := range split {
		fmt.Printf("t%d:%s ", i, names[s])
	}
	fmt.Println()
	// Output: t0:rl t1:eval t2:sft t3:sft t4:rl t5:rl t6:rl t7:sft t8:sft t9:rl
}
