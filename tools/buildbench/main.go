// Command buildbench measures `bagen-data build` as a whole process on a
// large synthetic rollout log: it writes the log, runs the binary, and
// prints probes/s, input and output MB/s, CPU time and peak RSS. With
// -base it alternates two binaries on the same input for -rounds rounds,
// reports each side's best and checks that their output files are
// identical, or when their bytes differ (other compression settings), that
// they hold the same rows. Then, unless -duckdb=false, it times DuckDB
// (its Node.js client from the cache) re-encoding the same rows from JSON
// lines to zstd parquet on 2 threads: the cost of merely writing the
// output, as a peer.
//
//	go run ./tools/buildbench -bin bin/bagen-data -n 100000
//	go run ./tools/buildbench -base /tmp/bagen-base -bin bin/bagen-data -n 20000 -dir /tmp/bb
package main

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"time"

	"bagen-data/dataset"
	"bagen-data/internal/cache"
	"bagen-data/rollout"
)

func main() {
	bin := flag.String("bin", "bin/bagen-data", "bagen-data binary")
	base := flag.String("base", "", "a second binary (an earlier build) to alternate with -bin on the same input")
	rounds := flag.Int("rounds", 0, "builds per binary, alternating (default 3 with -base, else 1)")
	n := flag.Int("n", 100000, "trajectories")
	dir := flag.String("dir", "", "work directory (default: a temporary one, removed after); its rollouts.jsonl is reused when it was written for the same -n")
	tokenizer := flag.String("tokenizer", "", "--tokenizer for the build (default: the cached Qwen tokenizer)")
	peer := flag.Bool("duckdb", true, "also time DuckDB re-encoding the build's rows from JSON lines to zstd parquet on 2 threads (when its Node.js client is in the cache)")
	flag.Parse()
	if *rounds <= 0 {
		*rounds = 1
		if *base != "" {
			*rounds = 3
		}
	}
	if err := run(*bin, *base, *rounds, *n, *dir, *tokenizer, *peer); err != nil {
		fmt.Fprintln(os.Stderr, "buildbench:", err)
		os.Exit(1)
	}
}

// measured is one build: its wall time, CPU time (user + system, every
// thread), peak RSS and manifest.
type measured struct {
	wall, cpu time.Duration
	rss       int64
	m         *dataset.Manifest
}

func run(bin, base string, rounds, n int, dir, tok string, peer bool) error {
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
	size, err := input(in, n)
	if err != nil {
		return err
	}
	bins := []string{bin}
	if base != "" {
		bins = []string{base, bin}
	}
	runs := make([][]measured, len(bins))
	for r := range rounds {
		for i, b := range bins {
			out := filepath.Join(dir, fmt.Sprintf("out-%d", i))
			ms, err := build(b, in, out, tok)
			if err != nil {
				return err
			}
			runs[i] = append(runs[i], ms)
			fmt.Fprintf(os.Stderr, "round %d %s: wall %.1f s, cpu %.1f s, peak RSS %.0f MiB\n", r+1, b, ms.wall.Seconds(), ms.cpu.Seconds(), float64(ms.rss)/(1<<20))
		}
	}
	mb := func(b int64) float64 { return float64(b) / 1e6 }
	fmt.Printf("| binary | trajectories | input MB | probes | rows | wall s | cpu s | probes/s | input MB/s | output MB (zstd) | output MB/s | peak RSS MiB |\n")
	fmt.Printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	best := make([]measured, len(bins))
	for i, b := range bins {
		// Each side's best of its rounds: the machine's other load only
		// ever adds time.
		best[i] = runs[i][0]
		for _, ms := range runs[i][1:] {
			if ms.wall < best[i].wall {
				best[i].wall = ms.wall
			}
			best[i].cpu = min(best[i].cpu, ms.cpu)
			best[i].rss = max(best[i].rss, ms.rss)
		}
		m := best[i].m
		probes := m.Splits.SFT.Probes.Total() + m.Splits.RL.Probes.Total() + m.Splits.Eval.Probes.Total()
		rows := m.Splits.SFT.Rows.Total() + m.Splits.RL.Rows.Total() + m.Splits.Eval.Rows.Total()
		var outBytes int64
		for _, f := range m.Outputs {
			outBytes += f.Bytes
		}
		wall := best[i].wall.Seconds()
		fmt.Printf("| %s | %d | %.0f | %d | %d | %.1f | %.1f | %.0f | %.1f | %.0f | %.1f | %.0f |\n",
			filepath.Base(b), m.Trajectories, mb(size), probes, rows, wall, best[i].cpu.Seconds(), float64(probes)/wall,
			mb(size)/wall, mb(outBytes), mb(outBytes)/wall, float64(best[i].rss)/(1<<20))
	}
	if base != "" {
		same := fmt.Sprint(best[0].m.Outputs) == fmt.Sprint(best[1].m.Outputs)
		rows := "rows identical: true (the files are)"
		if !same {
			// Files written with other compression settings differ in
			// their bytes: compare what they hold.
			equal, err := sameRows(filepath.Join(dir, "out-0"), filepath.Join(dir, "out-1"))
			if err != nil {
				return err
			}
			rows = fmt.Sprintf("rows identical: %v", equal)
		}
		fmt.Printf("\n%s against %s, best of %d alternating rounds: %.2f× the speed (wall), %.2f× less CPU; output files identical: %v; %s\n",
			filepath.Base(bin), filepath.Base(base), rounds, best[0].wall.Seconds()/best[1].wall.Seconds(),
			best[0].cpu.Seconds()/best[1].cpu.Seconds(), same, rows)
	}
	if peer {
		return duckdb(filepath.Join(dir, fmt.Sprintf("out-%d", len(bins)-1)), dir, rounds, best[len(bins)-1].wall)
	}
	return nil
}

//go:embed duckdb.mjs
var duckdbScript []byte

// duckdb times DuckDB re-encoding the rows of the build in out from JSON
// lines to zstd parquet (best of rounds) and prints it beside the build's
// wall time.
func duckdb(out, dir string, rounds int, build time.Duration) error {
	modules, err := cache.Path("node", "node_modules")
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(modules, "@duckdb", "node-api")); err != nil {
		fmt.Println("DuckDB's Node.js client is not in the cache (make duckdb): the DuckDB comparison is skipped")
		return nil
	}
	script := filepath.Join(dir, "duckdb.mjs")
	if err := os.WriteFile(script, duckdbScript, 0o644); err != nil {
		return err
	}
	work := filepath.Join(dir, "duckdb")
	if err := os.RemoveAll(work); err != nil {
		return err
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(work)
	var best struct {
		Seconds float64 `json:"seconds"`
		Rows    int     `json:"rows"`
		Bytes   int64   `json:"bytes"`
	}
	for r := range rounds {
		cmd := exec.Command("node", script, modules, out, work, "2")
		cmd.Stderr = os.Stderr
		b, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("node %s: %w", script, err)
		}
		var got = best
		if err := json.Unmarshal(b, &got); err != nil {
			return fmt.Errorf("node %s: %q: %w", script, b, err)
		}
		fmt.Fprintf(os.Stderr, "round %d DuckDB: %.1f s\n", r+1, got.Seconds)
		if r == 0 || got.Seconds < best.Seconds {
			best = got
		}
	}
	fmt.Printf("\nDuckDB re-encoding the same %d rows from JSON lines to zstd parquet on 2 threads (best of %d): %.1f s, %.0f MB; the build took %.2f× its time\n",
		best.Rows, rounds, best.Seconds, float64(best.Bytes)/1e6, build.Seconds()/best.Seconds)
	return nil
}

// sameRows reports whether two builds' files hold the same rows in the
// same order.
func sameRows(a, b string) (bool, error) {
	sftA, err := dataset.ReadSFT(filepath.Join(a, dataset.SFTFile))
	if err != nil {
		return false, err
	}
	sftB, err := dataset.ReadSFT(filepath.Join(b, dataset.SFTFile))
	if err != nil {
		return false, err
	}
	if !reflect.DeepEqual(sftA, sftB) {
		return false, nil
	}
	for _, f := range []string{dataset.RLFile, dataset.EvalFile} {
		rlA, err := dataset.ReadRL(filepath.Join(a, f))
		if err != nil {
			return false, err
		}
		rlB, err := dataset.ReadRL(filepath.Join(b, f))
		if err != nil {
			return false, err
		}
		if !reflect.DeepEqual(rlA, rlB) {
			return false, nil
		}
	}
	return true, nil
}

// build runs one build of in into out and measures it.
func build(bin, in, out, tok string) (measured, error) {
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
		return measured{}, fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
	}
	wall := time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	b, err := os.ReadFile(filepath.Join(out, dataset.ManifestFile))
	if err != nil {
		return measured{}, err
	}
	m, err := dataset.ReadManifest(b)
	if err != nil {
		return measured{}, err
	}
	return measured{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), rss: ru.Maxrss * 1024, m: m}, nil
}

// input writes the synthetic log to path unless a previous run wrote it
// for the same n (recorded next to it), and returns its size.
func input(path string, n int) (int64, error) {
	stamp := path + ".n"
	if b, err := os.ReadFile(stamp); err == nil && string(b) == strconv.Itoa(n) {
		if st, err := os.Stat(path); err == nil {
			return st.Size(), nil
		}
	}
	os.Remove(stamp)
	size, err := generate(path, n)
	if err != nil {
		return 0, err
	}
	return size, os.WriteFile(stamp, []byte(strconv.Itoa(n)), 0o644)
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
	for i := range n {
		turns := 2 + r.IntN(13)
		msgs := make([]rollout.Message, 0, 2*turns)
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
			msgs = append(msgs, rollout.Message{Role: "user", Content: g.String()}, rollout.Message{Role: "assistant", Content: a.String()})
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
