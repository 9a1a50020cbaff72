package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bagen-data/probes"
	"bagen-data/rollout"
)

// benchRollouts writes n Sokoban-shaped trajectories of 2–9 turns (grids,
// rules text, reasoning replies) with recorded counts, so a build spends
// its time reading, rendering and writing, not tokenizing.
func benchRollouts(n int) []byte {
	var b bytes.Buffer
	rules := strings.Repeat("You can push but not pull boxes, and cannot push a box through a wall. ", 8)
	think := strings.Repeat("the box is left of the target so I should move up then push it right ", 12)
	for i := range n {
		msgs := []map[string]any{{"role": "system", "content": probes.Tasks["sokoban"].System, "tokens": 90}}
		for k := range 2 + i%8 {
			var g strings.Builder
			fmt.Fprintf(&g, "Room %d, turn %d. State:\n", i, k+1)
			for row := range 8 {
				for col := range 8 {
					g.WriteByte("#___XOP_"[(row*7+col*3+k+i)%8])
				}
				g.WriteByte('\n')
			}
			g.WriteString(rules + " (reward: -0.1)")
			msgs = append(msgs,
				map[string]any{"role": "user", "content": g.String(), "tokens": 180 + i%7},
				map[string]any{"role": "assistant", "content": "<think>" + think + "</think><answer>Up</answer>", "tokens": 160 + k})
		}
		line, _ := json.Marshal(map[string]any{"custom_id": fmt.Sprintf("b%06d", i), "budget": 4000,
			"messages": msgs, "metadata": map[string]any{"success": i%2 == 0}})
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// BenchmarkBuild is a whole build of 2,000 trajectories (about 11 MB):
// decoding, planning, rendering, zstd parquet and the manifest.
func BenchmarkBuild(b *testing.B) {
	dir := b.TempDir()
	data := benchRollouts(2000)
	path := filepath.Join(dir, "r.jsonl")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	src := rollout.FileSource(path)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Build(context.Background(), []rollout.Source{src}, filepath.Join(dir, "out"), testConfig()); err != nil {
			b.Fatal(err)
		}
	}
}
