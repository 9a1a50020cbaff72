// Command buildbench measures `bagen-data build` as a whole process on a
// large synthetic rollout log: it writes the log, runs the binary, and
// prints probes/s, input and output MB/s and peak RSS.
//
//	go run ./tools/buildbench -bin bin/bagen-data -n 100000
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"bagen-data/dataset"
)

func main() {
	bin := flag.String("bin", "bin/bagen-data", "bagen-data binary")
	n := flag.Int("n", 100000, "trajectories")
	dir := flag.String("dir", "", "work directory (default: a temporary one, removed after)")
	tokenizer := flag.String("tokenizer", "", "--tokenizer for the build (default: the cached Qwen tokenizer)")
	flag.Parse()
	if err := run(*bin, *n, *dir, *tokenizer); err != nil {
		fmt.Fprintln(os.Stderr, "buildbench:", err)
		os.Exit(1)
	}
}

func run(bin string, n int, dir, tok string) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "buildbench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	in := filepath.Join(dir, "rollouts.jsonl")
	size, err := generate(in, n)
	if err != nil {
		return err
	}
	out := filepath.Join(dir, "out")
	// The synthetic rollouts run longer than Sokoban's 2500 tokens; a
	// larger budget keeps both classes in the output.
	args := []string{"build", "--quiet", "--input", in, "--out", out, "--budget", "4000"}
	if tok != "" {
		args = append(args, "--tokenizer", tok)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
	}
	wall := time.Since(start)
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
	b, err := os.ReadFile(filepath.Join(out, dataset.ManifestFile))
	if err != nil {
		return err
	}
	m, err := dataset.ReadManifest(b)
	if err != nil {
		return err
	}
	probes := m.Splits.SFT.Probes.Total() + m.Splits.RL.Probes.Total() + m.Splits.Eval.Probes.Total()
	var outBytes int64
	for _, f := range m.Outputs {
		outBytes += f.Bytes
	}
	mb := func(b int64) float64 { return float64(b) / 1e6 }
	fmt.Printf("| trajectories | input MB | probes | rows | wall s | probes/s | input MB/s | output MB (zstd) | output MB/s | peak RSS MiB |\n")
	fmt.Printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	rows := m.Splits.SFT.Rows.Total() + m.Splits.RL.Rows.Total() + m.Splits.Eval.Rows.Total()
	fmt.Printf("| %d | %.0f | %d | %d | %.1f | %.0f | %.1f | %.0f | %.1f | %.0f |\n",
		m.Trajectories, mb(size), probes, rows, wall.Seconds(), float64(probes)/wall.Seconds(),
		mb(size)/wall.Seconds(), mb(outBytes), mb(outBytes)/wall.Seconds(), float64(rss)/(1<<20))
	return nil
}

// generate writes n rollout-JSONL trajectories shaped like Sokoban logs:
// 2–14 turns of grid observations with reward annotations and assistant
// replies with reasoning, no recorded counts (so every message is
// tokenized), about half successful.
func generate(path string, n int) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the box is left of the target so I should move up then push it right while avoiding the wall corner below and keep the player free to walk around it next turn")
	type msg struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	for i := range n {
		turns := 2 + r.IntN(13)
		msgs := make([]msg, 0, 2*turns)
		for k := range turns {
			var g strings.Builder
			fmt.Fprintf(&g, "Turn %d. State:\n", k+1)
			for row := range 8 {
				for col := range 8 {
					g.WriteByte("#___XOP_"[(row*7+col*3+k+i)%8])
				}
				g.WriteByte('\n')
			}
			fmt.Fprintf(&g, "Player (%d, %d); boxes [(%d, %d), (%d, %d)]; targets [(%d, %d), (%d, %d)]. %s",
				r.IntN(8), r.IntN(8), r.IntN(8), r.IntN(8), r.IntN(8), r.IntN(8), r.IntN(8), r.IntN(8), r.IntN(8), r.IntN(8),
				strings.Repeat("You can push but not pull boxes, and cannot push a box through a wall. ", 8))
			if k > 0 {
				g.WriteString(" (reward: -0.1)")
			}
			var a strings.Builder
			a.WriteString("<think>")
			for range 60 + r.IntN(200) {
				a.WriteString(words[r.IntN(len(words))])
				a.WriteByte(' ')
			}
			a.WriteString("</think><answer>Up || Right || Down</answer>")
			msgs = append(msgs, msg{"user", g.String()}, msg{"assistant", a.String()})
		}
		line, err := json.Marshal(map[string]any{
			"custom_id": fmt.Sprintf("bench_%07d", i), "messages": msgs,
			"metadata": map[string]any{"success": r.IntN(2) == 0},
		})
		if err != nil {
			return 0, err
		}
		w.Write(line)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), f.Close()
}
