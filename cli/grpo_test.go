package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bagen-data/eval"
	"bagen-data/fixtures"
	"bagen-data/grpo"
	"bagen-data/internal/ollamatest"
	"bagen-data/probes"
)

// runGRPOApp runs bagen-data with args and returns its stdout and stderr.
func runGRPOApp(t *testing.T, args ...string) (string, string) {
	t.Helper()
	app := App()
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	if err := app.Run(context.Background(), append([]string{"bagen-data"}, args...)); err != nil {
		t.Fatalf("bagen-data %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), errOut.String()
}

// grpoFixtures copies two embedded Sokoban rollout files (one mostly
// solved, one mostly failed) into a directory for build --input.
func grpoFixtures(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"6x6_noise0.30.jsonl.zst", "6x6_noise0.70.jsonl.zst"} {
		b, err := fixtures.Rollouts.ReadFile("rollouts/sokoban/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readGRPORun(t *testing.T, path string) eval.Run {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r eval.Run
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// TestGRPOEndToEnd runs the whole local pipeline against a real Ollama
// serving the tiny Qwen2 model: build on fixtures → grpo train (1 SFT + 1
// GRPO epoch) → grpo eval → eval --ollama.
func TestGRPOEndToEnd(t *testing.T) {
	srv := ollamatest.Start(t)
	t.Setenv("OLLAMA_HOST", strings.TrimPrefix(srv.Host, "http://"))
	tmp := t.TempDir()
	data, out, cache := filepath.Join(tmp, "data"), filepath.Join(tmp, "run"), filepath.Join(tmp, "cache")

	start := time.Now()
	runGRPOApp(t, "build", "--input", grpoFixtures(t), "--out", data, "--probe-every", "6", "-q")
	t.Logf("build: %v", time.Since(start))
	start = time.Now()
	stdout, _ := runGRPOApp(t, "grpo", "train", "--data", data, "--out", out, "--model", srv.Model,
		"--sft-epochs", "1", "--epochs", "1", "--sft-batch", "4", "--batch", "4", "--cache", cache, "--name", "e2e", "-q")
	t.Logf("grpo train: %v: %s", time.Since(start), strings.TrimSpace(stdout))

	st, err := grpo.LoadState(out)
	if err != nil {
		t.Fatal(err)
	}
	if st.Phase != "grpo" || st.Epoch != 1 || st.Model != srv.Model || st.Policy.In != 64+grpo.NumNumeric || st.Accounting != probes.AccountingMessage {
		t.Errorf("checkpoint: phase %s epoch %d model %q input %d accounting %q; want grpo 1 %q %d message",
			st.Phase, st.Epoch, st.Model, st.Policy.In, st.Accounting, srv.Model, 64+grpo.NumNumeric)
	}
	checkTrainLog(t, filepath.Join(out, grpo.LogFile))
	if page, err := os.ReadFile(filepath.Join(out, grpo.PlotFile)); err != nil || strings.Count(string(page), "<svg ") != 2 {
		t.Errorf("plot.html: %v, want two SVG charts", err)
	}
	trained := readGRPORun(t, filepath.Join(out, grpo.EvalFile))
	if trained.Name != "e2e" || trained.Model != srv.Model || trained.Metrics.Probes == 0 || !trained.Metrics.Accuracy.Defined() {
		t.Errorf("eval.json: name %q model %q probes %d accuracy %v", trained.Name, trained.Model, trained.Metrics.Probes, trained.Metrics.Accuracy)
	}

	// grpo eval re-embeds the eval probes (from the cache) and must agree
	// with the training run's last evaluation exactly.
	evalJSON, predsOut := filepath.Join(tmp, "grpo-eval.json"), filepath.Join(tmp, "grpo-preds.jsonl")
	testFile := filepath.Join(data, "eval", "test.parquet")
	start = time.Now()
	stdout, stderr := runGRPOApp(t, "grpo", "eval", "--checkpoint", out, "--data", testFile, "--cache", cache,
		"--name", "e2e", "--json", evalJSON, "--predictions-out", predsOut, "-q")
	if strings.Contains(stderr, "accounting") {
		t.Errorf("grpo eval of the data it learned on warns: %s", stderr)
	}
	if !strings.Contains(stdout, "accuracy") && !strings.Contains(stdout, "Acc") {
		t.Errorf("grpo eval printed no metrics table:\n%s", stdout)
	}
	t.Logf("grpo eval: %v", time.Since(start))
	again := readGRPORun(t, evalJSON)
	a, _ := json.Marshal(trained.Metrics)
	b, _ := json.Marshal(again.Metrics)
	if !bytes.Equal(a, b) {
		t.Errorf("grpo eval metrics differ from the training run's:\n%s\n%s", a, b)
	}
	p1, _ := os.ReadFile(filepath.Join(out, grpo.PredsFile))
	p2, _ := os.ReadFile(predsOut)
	if len(p1) == 0 || !bytes.Equal(p1, p2) {
		t.Errorf("grpo eval answers differ from the training run's (%d and %d bytes)", len(p1), len(p2))
	}

	// The same build by the replay: the fixtures record no per-call
	// inputs, so the numbers (and the embeddings) are the same, but the
	// head learned on message numbers and says so.
	replay := filepath.Join(tmp, "replay")
	runGRPOApp(t, "build", "--input", grpoFixtures(t), "--out", replay, "--probe-every", "6", "--accounting", "replay", "-q")
	_, stderr = runGRPOApp(t, "grpo", "eval", "--checkpoint", out, "--data", filepath.Join(replay, "eval", "test.parquet"), "--cache", cache, "-q")
	if want := "the estimator learned on message numbers and is asked with replay numbers"; !strings.Contains(stderr, want) {
		t.Errorf("grpo eval of replay rows: stderr %q, want a warning saying %q", stderr, want)
	}

	// The same probes answered by the tiny LLM itself through eval --ollama.
	llmJSON := filepath.Join(tmp, "llm.json")
	start = time.Now()
	runGRPOApp(t, "eval", "--data", testFile, "--ollama", srv.Model, "--num-predict", "8", "--bootstrap", "0",
		"--predictions-out", filepath.Join(tmp, "llm-preds.jsonl"), "--json", llmJSON, "-q")
	t.Logf("eval --ollama: %v", time.Since(start))
	llm := readGRPORun(t, llmJSON)
	if llm.Metrics.Probes != trained.Metrics.Probes || llm.Metrics.Missing != 0 || llm.Model != srv.Model {
		t.Errorf("eval --ollama: %d probes (%d missing), model %q; want %d, 0, %q", llm.Metrics.Probes, llm.Metrics.Missing, llm.Model, trained.Metrics.Probes, srv.Model)
	}
}

// checkTrainLog checks the log's shape and that SFT followed by GRPO
// raised the policy's expected reward on the training probes above the
// untrained head's.
func checkTrainLog(t *testing.T, path string) {
	t.Helper()
	recs, err := grpo.ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	var epochs []grpo.Record
	var sft, steps int
	for _, r := range recs {
		switch r.Type {
		case "epoch":
			epochs = append(epochs, r)
		case "sft_step":
			sft++
		case "grpo_step":
			steps++
			// --batch 4; the epoch's last batch may be short.
			if r.GRPO.Groups < 1 || r.GRPO.Groups > 4 || r.GRPO.ZeroVarGroups < 0 || r.GRPO.ZeroVarGroups > r.GRPO.Groups || !r.GRPO.Reward.Defined() {
				t.Errorf("grpo step %d: %+v", r.Step, *r.GRPO)
			}
		}
	}
	if len(epochs) != 3 || epochs[0].Phase != "init" || epochs[1].Phase != "sft" || epochs[2].Phase != "grpo" || sft == 0 || steps == 0 {
		t.Fatalf("log: %d epoch records, %d sft and %d grpo steps; want init, sft, grpo epochs and steps of both", len(epochs), sft, steps)
	}
	before, after := epochs[0].Eval.Train.Expected, epochs[2].Eval.Train.Expected
	t.Logf("expected train reward: untrained %.4f, after SFT %.4f, after GRPO %.4f", before, epochs[1].Eval.Train.Expected, after)
	if !(after > before) {
		t.Errorf("expected train reward after SFT+GRPO %v, untrained %v: want an improvement", after, before)
	}
}
