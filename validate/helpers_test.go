package validate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"bagen-data/dataset"
	"bagen-data/probes"
	"bagen-data/rollout"
)

// words counts whitespace-separated words: a stand-in tokenizer that keeps
// the tests independent of tokenizer.json.
type words struct{}

func (words) Count(s string) int { return len(strings.Fields(s)) }

// rollouts writes n synthetic Sokoban rollouts in the canonical JSONL
// format: 2–6 turns each, about two thirds successful, every budget fits.
func rollouts(t *testing.T, n int, seed uint64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	text := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = []string{"push", "left", "up", "box", "wall", "target", "grid", "#", "_", "P", "X"}[rng.IntN(11)]
		}
		return strings.Join(w, " ")
	}
	var b strings.Builder
	for i := range n {
		turns := 2 + rng.IntN(5)
		var msgs []map[string]any
		for range turns {
			msgs = append(msgs,
				map[string]any{"role": "user", "content": "Grid:\n" + text(5+rng.IntN(40))},
				map[string]any{"role": "assistant", "content": "<answer>" + text(3+rng.IntN(30)) + "</answer>"})
		}
		rec := map[string]any{"custom_id": fmt.Sprintf("traj_%d", i), "messages": msgs,
			"metadata": map[string]any{"success": rng.IntN(3) > 0}}
		line, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "rollouts.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// buildDataset runs the real build on synthetic rollouts and returns the
// output directory.
func buildDataset(t *testing.T, mutate func(*dataset.Config)) string {
	t.Helper()
	task, err := probes.LookupTask("sokoban")
	if err != nil {
		t.Fatal(err)
	}
	width, err := probes.ParseWidth("pct30")
	if err != nil {
		t.Fatal(err)
	}
	cfg := dataset.Config{
		Task: task, Width: width,
		Seed: 42, Balance: dataset.Balance{Oversample: 2, Ratio: new(1.0)}, Counter: words{}, Tokenizer: "words",
		Version: "test",
	}
	if mutate != nil {
		mutate(&cfg)
	}
	dir := filepath.Join(t.TempDir(), "data")
	if _, err := dataset.Build(context.Background(), []rollout.Source{rollout.FileSource(rollouts(t, 60, 7))}, dir, cfg); err != nil {
		t.Fatal(err)
	}
	return dir
}

// readRows reads a parquet file of T.
func readRows[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := parquet.NewGenericReader[T](f)
	defer r.Close()
	rows := make([]T, r.NumRows())
	if n, err := r.Read(rows); n != len(rows) || (err != nil && err != io.EOF) {
		t.Fatalf("%s: read %d of %d rows: %v", path, n, len(rows), err)
	}
	return rows
}

// writeRows writes rows of T to path with parquet-go's generic writer.
func writeRows[T any](t *testing.T, path string, rows []T) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[T](f)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// editRL rewrites an RL or eval file after applying edit to its rows.
func editRL(t *testing.T, path string, edit func([]dataset.RLRow) []dataset.RLRow) {
	t.Helper()
	writeRows(t, path, edit(readRows[dataset.RLRow](t, path)))
}

// editSFT rewrites an SFT file after applying edit to its rows.
func editSFT(t *testing.T, path string, edit func([]dataset.SFTRow) []dataset.SFTRow) {
	t.Helper()
	writeRows(t, path, edit(readRows[dataset.SFTRow](t, path)))
}

func run(t *testing.T, cfg Config, paths ...string) *Report {
	t.Helper()
	r, err := Run(context.Background(), paths, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
