package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"bagen-data/baseline"
	"bagen-data/dataset"
	predict "bagen-data/eval/prediction"
	"bagen-data/tokenizer"
)

// baselineData builds the embedded Sokoban (or task's) fixtures into a
// fresh directory once per task and test binary; each test copies it.
var baselineData = struct {
	sync.Mutex
	dirs map[string]string
}{dirs: map[string]string{}}

// buildFixtures returns a directory build wrote from task's embedded
// fixtures, built once and copied into the test's temporary directory.
func buildFixtures(t testing.TB, task string) string {
	t.Helper()
	if _, err := os.Stat(tokenizer.DefaultPath()); err != nil {
		t.Fatalf("%s is missing: run `make tokenizer` first", tokenizer.DefaultPath())
	}
	baselineData.Lock()
	defer baselineData.Unlock()
	src, ok := baselineData.dirs[task]
	if !ok {
		src = filepath.Join(os.TempDir(), fmt.Sprintf("bagen-baseline-%s-%d", task, os.Getpid()))
		os.RemoveAll(src)
		runBaselineApp(t, "build", "--task", task, "--out", src, "-q")
		baselineData.dirs[task] = src
	}
	dst := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// trainBaseline trains a model on dirs with extra flags and returns its
// path.
func trainBaseline(t testing.TB, out string, dirs []string, more ...string) string {
	t.Helper()
	args := []string{"baseline", "train", "--out", out, "-q"}
	for _, d := range dirs {
		args = append(args, "--data", d)
	}
	runBaselineApp(t, append(args, more...)...)
	return out
}

// runBaselineApp runs bagen-data with args and fails the test or
// benchmark on an error.
func runBaselineApp(t testing.TB, args ...string) {
	t.Helper()
	if _, stderr, err := runReward(context.Background(), args...); err != nil {
		t.Fatalf("bagen-data %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
}

// TestBaselineTrainDeterministicWithoutEval trains twice on the same data
// (the second time with the eval split removed, then with it replaced by
// garbage) and requires byte-identical model files: the same inputs and
// seed give the same model, and the eval split is never read.
func TestBaselineTrainDeterministicWithoutEval(t *testing.T) {
	data := buildFixtures(t, "sokoban")
	dir := t.TempDir()
	first := trainBaseline(t, filepath.Join(dir, "a.json"), []string{data})
	want, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	evalFile := filepath.Join(data, filepath.FromSlash(dataset.EvalFile))
	if err := os.Remove(evalFile); err != nil {
		t.Fatal(err)
	}
	second := trainBaseline(t, filepath.Join(dir, "b.json"), []string{data})
	if err := os.WriteFile(evalFile, []byte("not parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	third := trainBaseline(t, filepath.Join(dir, "c.json"), []string{data})
	for _, p := range []string{second, third} {
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s: the model depends on the eval split or on the run", p, first)
		}
	}
	other := trainBaseline(t, filepath.Join(dir, "d.json"), []string{data}, "--seed", "7")
	if got, _ := os.ReadFile(other); bytes.Equal(got, want) {
		t.Errorf("--seed 7 wrote the same model as --seed 42: the seed does not reach the split")
	}
	m, err := baseline.Load(first)
	if err != nil {
		t.Fatal(err)
	}
	man, err := os.ReadFile(filepath.Join(data, dataset.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if m.Task != "sokoban" || m.Budget != 2500 || m.Accounting != "message" || len(m.Data) != 1 ||
		len(m.Data[0].Files) != 2 || !strings.Contains(string(man), m.Data[0].Files[0].SHA256) {
		t.Errorf("model: task %q, budget %d, accounting %q, data %+v; want sokoban, 2500, default and the manifest's sft and rl digests",
			m.Task, m.Budget, m.Accounting, m.Data)
	}
}

// TestBaselineEvalEqualsEval scores baseline eval's answers with eval
// --predictions: the same JSON, byte for byte, and every answer has 0
// tokens of usage.
func TestBaselineEvalEqualsEval(t *testing.T) {
	data := buildFixtures(t, "sokoban")
	dir := t.TempDir()
	model := trainBaseline(t, filepath.Join(dir, "m.json"), []string{data})
	preds, a, b := filepath.Join(dir, "p.jsonl"), filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	outA, _ := runGRPOApp(t, "baseline", "eval", "--model", model, "--data", data, "--predictions-out", preds, "--json", a)
	outB, _ := runGRPOApp(t, "eval", "--data", data, "--predictions", preds, "--json", b)
	ja, _ := os.ReadFile(a)
	jb, _ := os.ReadFile(b)
	if len(ja) == 0 || !bytes.Equal(ja, jb) {
		t.Errorf("baseline eval --json and eval --predictions --json differ:\n%s\n%s", ja, jb)
	}
	if outA != outB {
		t.Errorf("printed reports differ:\n%s\n%s", outA, outB)
	}
	f, err := os.Open(preds)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ps, err := predict.Read(f, preds)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := dataset.ReadRL(filepath.Join(data, filepath.FromSlash(dataset.EvalFile)))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != len(rows) {
		t.Fatalf("%d predictions for %d probes", len(ps), len(rows))
	}
	for i, p := range ps {
		if p.CustomID != rows[i].ExtraInfo.CustomID || p.Usage == nil || p.Usage.PromptTokens != 0 || p.Usage.CompletionTokens != 0 {
			t.Errorf("prediction %d: %s usage %+v; want %s with 0 tokens", i, p.CustomID, p.Usage, rows[i].ExtraInfo.CustomID)
		}
	}
}

// TestBaselineBadInputs: a model of another version, a directory without
// the sft and rl splits and a task mismatch each fail with one line.
func TestBaselineBadInputs(t *testing.T) {
	data := buildFixtures(t, "sokoban")
	search := buildFixtures(t, "searchr1")
	dir := t.TempDir()
	model := trainBaseline(t, filepath.Join(dir, "m.json"), []string{data})
	raw, _ := os.ReadFile(model)
	old := filepath.Join(dir, "old.json")
	os.WriteFile(old, bytes.Replace(raw, []byte(`"version": 1`), []byte(`"version": 0`), 1), 0o644)
	noSplits := filepath.Join(dir, "nosplits")
	os.CopyFS(noSplits, os.DirFS(data))
	os.RemoveAll(filepath.Join(noSplits, "sft"))
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"version", []string{"baseline", "eval", "--model", old, "--data", data}, "not a baseline model of this version: format \"bagen-data baseline\" version 0, want"},
		{"no splits", []string{"baseline", "train", "--data", noSplits, "--out", filepath.Join(dir, "x.json")}, "no sft and rl splits: sft/train.parquet missing"},
		{"not a build", []string{"baseline", "train", "--data", dir, "--out", filepath.Join(dir, "x.json")}, "no sft and rl splits: no manifest.json"},
		{"mixed tasks", []string{"baseline", "train", "--data", data, "--data", search, "--out", filepath.Join(dir, "x.json")}, `task mismatch: task "searchr1"`},
		{"other task", []string{"baseline", "eval", "--model", model, "--data", search}, `task mismatch: a probe of task "searchr1"; the model was trained on "sokoban"`},
		{"shares", []string{"baseline", "train", "--data", data, "--coverage", "1.5", "--max-abort", "0", "--out", filepath.Join(dir, "x.json")},
			"baseline train: --coverage: want a share between 0 and 1, both excluded, got 1.5; --max-abort: want a share between 0 and 1, both excluded, got 0"},
	} {
		_, stderr, err := runReward(t.Context(), c.args...)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v (stderr %q); want one line containing %q", c.name, err, stderr, c.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "x.json")); err == nil {
			t.Errorf("%s: a model file was written", c.name)
		}
	}
}

// TestBaselineIndependentSuccess builds the Sokoban fixtures with
// outcomes drawn at random (and a budget no run reaches, so that the
// labels are the outcomes alone): no feature says anything about success,
// and the model must stop no run, not a random few.
func TestBaselineIndependentSuccess(t *testing.T) {
	data := buildFixtures(t, "sokoban")
	dir := t.TempDir()
	ids := map[string]bool{}
	for _, f := range []string{dataset.RLFile, dataset.EvalFile} {
		rows, err := dataset.ReadRL(filepath.Join(data, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			ids[r.ExtraInfo.TrajectoryID] = true
		}
	}
	sft, err := dataset.ReadSFT(filepath.Join(data, filepath.FromSlash(dataset.SFTFile)))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sft {
		ids[dataset.TrajectoryOf(r.CustomID)] = true
	}
	sorted := slices.Sorted(maps.Keys(ids))
	rng := rand.New(rand.NewPCG(7, 7))
	outcomes := map[string]bool{}
	for _, id := range sorted {
		outcomes[id] = rng.Float64() < 0.55
	}
	b, _ := json.Marshal(outcomes)
	success := filepath.Join(dir, "success.json")
	os.WriteFile(success, b, 0o644)
	random := filepath.Join(dir, "random")
	runBaselineApp(t, "build", "--success-file", success, "--budget", "100000", "--split-by", "trajectory", "--out", random, "-q")
	model := trainBaseline(t, filepath.Join(dir, "m.json"), []string{random})
	m, err := baseline.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	if m.Gate.On {
		t.Errorf("the gate is on (%+v) on outcomes drawn at random", m.Gate)
	}
	preds := filepath.Join(dir, "p.jsonl")
	runBaselineApp(t, "baseline", "eval", "--model", model, "--data", random, "--predictions-out", preds, "--bootstrap", "0")
	texts, _ := readAnswers(t, preds)
	for id, a := range texts {
		if strings.Contains(a, "impossible") {
			t.Errorf("%s: %q on outcomes drawn at random", id, a)
		}
	}
	if len(texts) == 0 {
		t.Error("no answers")
	}
}
