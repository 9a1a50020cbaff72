package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/internal/cache"
	"bagen-data/probes"
	"bagen-data/rollout"
)

var update = flag.Bool("update", false, "rewrite golden files")

// canonical writes n canonical trajectories with recorded counts: the
// system message is the Sokoban preset's (90 tokens), trajectory i has
// 1 + i%4 turns of user 100+i and assistant 50 tokens and succeeds unless
// i%3 == 0.
func canonical(n, from int) []byte {
	var b bytes.Buffer
	sys := probes.Tasks["sokoban"].System
	for i := from; i < from+n; i++ {
		msgs := []map[string]any{{"role": "system", "content": sys, "tokens": 90}}
		for k := 0; k < 1+i%4; k++ {
			msgs = append(msgs,
				map[string]any{"role": "user", "content": fmt.Sprintf("Grid %d of traj %d\n#_P_#", k, i), "tokens": 100 + i},
				map[string]any{"role": "assistant", "content": "<answer>Up</answer>", "tokens": 50})
		}
		line, _ := json.Marshal(map[string]any{"custom_id": fmt.Sprintf("t%03d", i), "budget": 2500,
			"messages": msgs, "metadata": map[string]any{"success": i%3 != 0}})
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func writeInput(t *testing.T, dir, name string, data []byte) rollout.Source {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return rollout.FileSource(path)
}

func testConfig() Config {
	w, _ := probes.ParseWidth("pct30")
	return Config{
		Task: probes.Tasks["sokoban"], Width: w, Seed: 42,
		Balance: Balance{Oversample: 2, Ratio: new(1.0)}, Version: "test",
	}
}

// TestZeroConfigIsTheDefaults builds once with Task, Width and Balance
// left zero and once with their documented defaults spelled out: the
// manifests, digests included, are the same.
func TestZeroConfigIsTheDefaults(t *testing.T) {
	dir := t.TempDir()
	src := writeInput(t, dir, "r.jsonl", canonical(40, 0))
	zero := Config{Seed: 42, Version: "test"}
	var manifests []*Manifest
	for i, cfg := range []Config{zero, testConfig()} {
		m, err := Build(context.Background(), []rollout.Source{src}, filepath.Join(dir, fmt.Sprint("out", i)), cfg)
		if err != nil {
			t.Fatal(err)
		}
		manifests = append(manifests, m)
	}
	if d := cmp.Diff(manifests[1], manifests[0]); d != "" {
		t.Errorf("zero config (-defaults +zero):\n%s", d)
	}
	if m := manifests[0]; m.Config.Task != "sokoban" || m.Config.Width != "pct30" || m.Config.OversamplePossible != 2 || m.Config.BalanceRatio != 1 {
		t.Errorf("zero config built task %q width %q oversample %d ratio %g; want sokoban, pct30, 2, 1",
			m.Config.Task, m.Config.Width, m.Config.OversamplePossible, m.Config.BalanceRatio)
	}
}

func TestBuildCounts(t *testing.T) {
	dir := t.TempDir()
	src := writeInput(t, dir, "r.jsonl", canonical(40, 0))
	m, err := Build(context.Background(), []rollout.Source{src}, filepath.Join(dir, "out"), testConfig())
	if err != nil {
		t.Fatal(err)
	}
	if m.Trajectories != 40 {
		t.Errorf("trajectories = %d, want 40", m.Trajectories)
	}
	// 40 trajectories split 40/50/10: 16, 20 and 4.
	for name, st := range map[string]SplitStats{"sft": m.Splits.SFT, "rl": m.Splits.RL, "eval": m.Splits.Eval} {
		want := map[string]int{"sft": 16, "rl": 20, "eval": 4}[name]
		if st.Trajectories.Total() != want {
			t.Errorf("%s: %d trajectories, want %d", name, st.Trajectories.Total(), want)
		}
	}
	// Every trajectory with T turns gives T probes (r > 0 at p < T):
	// 10 of each T = 1..4, so 100 probes.
	all := m.Splits.SFT.Probes.Total() + m.Splits.RL.Probes.Total() + m.Splits.Eval.Probes.Total()
	if all != 100 {
		t.Errorf("probes = %d, want 100", all)
	}
	for _, st := range []SplitStats{m.Splits.SFT, m.Splits.RL} {
		pos, imp := st.Probes.Possible, st.Probes.Impossible
		if st.Rows.Possible != 2*pos || st.Duplicates != pos {
			t.Errorf("%s: %d possible rows, %d duplicates from %d possible probes; want %d and %d", st.File, st.Rows.Possible, st.Duplicates, pos, 2*pos, pos)
		}
		if want := min(imp, 2*pos); st.Rows.Impossible != want || st.Downsampled != imp-want {
			t.Errorf("%s: %d impossible rows (%d downsampled) from %d; want %d", st.File, st.Rows.Impossible, st.Downsampled, imp, want)
		}
	}
	if m.Splits.Eval.Rows != m.Splits.Eval.Probes || m.Splits.Eval.Duplicates != 0 {
		t.Errorf("eval was balanced: rows %+v, probes %+v", m.Splits.Eval.Rows, m.Splits.Eval.Probes)
	}
}

func TestBuildRowsAndForeignReader(t *testing.T) {
	dir := t.TempDir()
	src := writeInput(t, dir, "r.jsonl", canonical(12, 0))
	out := filepath.Join(dir, "out")
	if _, err := Build(context.Background(), []rollout.Source{src}, out, testConfig()); err != nil {
		t.Fatal(err)
	}
	var rows []RLRow
	for _, f := range []string{RLFile, EvalFile} {
		rs, err := ReadRL(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, rs...)
	}
	// Pin one row: t007 has 4 turns of (107, 50) and 90 system tokens,
	// total 718, and succeeds (7%3 != 0): possible, r = 3·157 after turn 1.
	var row *RLRow
	for i := range rows {
		if rows[i].ExtraInfo.CustomID == "t007_probe_after_turn_1" {
			row = &rows[i]
		}
	}
	if row == nil {
		t.Fatal("t007_probe_after_turn_1 is in neither rl nor eval")
	}
	{
		want := ExtraInfo{CustomID: "t007_probe_after_turn_1", TrajectoryID: "t007", Split: row.ExtraInfo.Split, Index: row.ExtraInfo.Index,
			ProbeAfterTurn: 1, TotalTurns: 4, TokensUsed: 90 + 157, RemainingTokens: 3 * 157, IsPossible: true, Budget: 2500,
			PerTurnTokens: []TurnTokens{{Turn: 1, InputTokens: 107, OutputTokens: 50}}, Margin: float64(2500-718) / 2500,
			Accounting: probes.AccountingMessage}
		if diff := cmp.Diff(want, row.ExtraInfo); diff != "" {
			t.Errorf("extra_info (-want +got):\n%s", diff)
		}
		if row.RewardModel.GroundTruth != "[329, 612]" || row.Label != `{"remaining_tokens":471,"is_possible":true,"ground_truth":"[329, 612]"}` {
			t.Errorf("ground truth %q label %q", row.RewardModel.GroundTruth, row.Label)
		}
	}
	foreign := readForeign(t, filepath.Join(out, SFTFile), filepath.Join(out, RLFile), filepath.Join(out, EvalFile))
	var schema strings.Builder
	for _, f := range []string{SFTFile, RLFile, EvalFile} {
		fmt.Fprintf(&schema, "%s\n", f)
		for _, col := range foreign[filepath.Join(out, f)].Schema {
			fmt.Fprintf(&schema, "  %s\n", col)
		}
	}
	golden(t, "schema.golden", schema.String())
	for _, f := range []string{RLFile, EvalFile} {
		ours, err := ReadRL(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		var theirs []RLRow
		if err := json.Unmarshal(foreign[filepath.Join(out, f)].Rows, &theirs); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(ours, theirs); diff != "" {
			t.Errorf("%s: DuckDB reads different rows (-parquet-go +duckdb):\n%s", f, diff)
		}
	}
	ours, err := ReadSFT(filepath.Join(out, SFTFile))
	if err != nil {
		t.Fatal(err)
	}
	var theirs []SFTRow
	if err := json.Unmarshal(foreign[filepath.Join(out, SFTFile)].Rows, &theirs); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ours, theirs); diff != "" {
		t.Errorf("sft: DuckDB reads different rows (-parquet-go +duckdb):\n%s", diff)
	}
}

type foreignFile struct {
	Schema []string        `json:"schema"`
	Rows   json.RawMessage `json:"rows"`
}

// readForeign reads parquet files with DuckDB through Node.js.
func readForeign(t *testing.T, files ...string) map[string]foreignFile {
	t.Helper()
	modules := filepath.Join(cacheDir(), "node", "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "@duckdb", "node-api")); err != nil {
		t.Fatalf("DuckDB's Node.js client is missing at %s: run `make duckdb` first", modules)
	}
	cmd := exec.Command("node", append([]string{"testdata/read_parquet.mjs"}, files...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node read_parquet.mjs: %v\n%s", err, stderr.String())
	}
	var res map[string]foreignFile
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func cacheDir() string {
	d, _ := cache.Dir()
	return d
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", name, diff)
	}
}

// fileBytes reads every output of a build.
func fileBytes(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, f := range []string{SFTFile, RLFile, EvalFile, ManifestFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		out[f] = b
	}
	return out
}

func TestBuildDeterministicAcrossOrderAndSharding(t *testing.T) {
	dir := t.TempDir()
	whole := writeInput(t, dir, "all.jsonl", canonical(30, 0))
	// The same trajectories in two shards, second shard first.
	a := writeInput(t, dir, "a.jsonl", canonical(17, 0))
	b := writeInput(t, dir, "b.jsonl", canonical(13, 17))
	cfg := testConfig()
	cfg.Workers = 2
	for _, run := range []struct {
		out  string
		srcs []rollout.Source
	}{{"one", []rollout.Source{whole}}, {"two", []rollout.Source{whole}}, {"sharded", []rollout.Source{b, a}}} {
		if _, err := Build(context.Background(), run.srcs, filepath.Join(dir, run.out), cfg); err != nil {
			t.Fatal(err)
		}
	}
	one, two, sharded := fileBytes(t, filepath.Join(dir, "one")), fileBytes(t, filepath.Join(dir, "two")), fileBytes(t, filepath.Join(dir, "sharded"))
	for _, f := range []string{SFTFile, RLFile, EvalFile} {
		if !bytes.Equal(one[f], two[f]) {
			t.Errorf("%s: two runs differ", f)
		}
		if !bytes.Equal(one[f], sharded[f]) {
			t.Errorf("%s: sharded, reordered input gives different bytes", f)
		}
	}
	if !bytes.Equal(one[ManifestFile], two[ManifestFile]) {
		t.Errorf("manifest: two runs differ")
	}
}

func TestBuildFailureLeavesOutputUntouched(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	good := writeInput(t, dir, "good.jsonl", canonical(10, 0))
	if _, err := Build(context.Background(), []rollout.Source{good}, out, testConfig()); err != nil {
		t.Fatal(err)
	}
	before := fileBytes(t, out)
	bad := append(canonical(5, 100), []byte(`{"custom_id":"x","messages":[{"role":"function","content":"a"}]}`+"\n")...)
	badSrc := writeInput(t, dir, "bad.jsonl", bad)
	_, err := Build(context.Background(), []rollout.Source{badSrc}, out, testConfig())
	want := badSrc.Name + `:6: messages[0].role: want "user", "assistant" or "tool", got "function"`
	if err == nil || err.Error() != want {
		t.Fatalf("got error %v, want %s", err, want)
	}
	if diff := cmp.Diff(before, fileBytes(t, out)); diff != "" {
		t.Errorf("a failed build changed the output directory")
	}
	entries, _ := os.ReadDir(out)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"eval", "manifest.json", "rl", "sft"}, names); diff != "" {
		t.Errorf("output directory after a failed build (-want +got):\n%s", diff)
	}
	// A failed build into a new directory leaves nothing behind.
	fresh := filepath.Join(dir, "fresh")
	if _, err := Build(context.Background(), []rollout.Source{badSrc}, fresh, testConfig()); err == nil {
		t.Fatal("want an error")
	}
	if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed build left %s behind (stat: %v)", fresh, err)
	}
}

func TestBuildSkipInvalid(t *testing.T) {
	dir := t.TempDir()
	bad := append(canonical(5, 0), []byte(`{"custom_id":"x","messages":[{"role":"function","content":"a"}]}`+"\n"+`{"custom_id":"y"}`+"\n")...)
	src := writeInput(t, dir, "bad.jsonl", bad)
	cfg := testConfig()
	cfg.SkipInvalid = true
	m, err := Build(context.Background(), []rollout.Source{src}, filepath.Join(dir, "out"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if m.Trajectories != 5 || m.Invalid.Count != 2 {
		t.Fatalf("trajectories %d invalid %d, want 5 and 2", m.Trajectories, m.Invalid.Count)
	}
	want := []string{src.Name + `:6: messages[0].role: want "user", "assistant" or "tool", got "function"`, src.Name + ":7: messages: missing or empty"}
	if m.Invalid.Examples[0].Err != want[0] || m.Invalid.Examples[1].Err != want[1] {
		t.Errorf("invalid examples %+v, want %q", m.Invalid.Examples, want)
	}
}

func TestBuildDuplicateIDs(t *testing.T) {
	dir := t.TempDir()
	a := writeInput(t, dir, "a.jsonl", canonical(3, 0))
	b := writeInput(t, dir, "b.jsonl", canonical(3, 2))
	_, err := Build(context.Background(), []rollout.Source{a, b}, filepath.Join(dir, "out"), testConfig())
	want := b.Name + `:1: custom_id "t002" already used at ` + a.Name + `:3`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	cfg := testConfig()
	cfg.PrefixIDs = true
	m, err := Build(context.Background(), []rollout.Source{a, b}, filepath.Join(dir, "out"), cfg)
	if err != nil || m.Trajectories != 6 {
		t.Fatalf("with prefix-ids: %v, %d trajectories", err, m.Trajectories)
	}
}

func TestBuildNeedsTokenizerForUnrecordedCounts(t *testing.T) {
	dir := t.TempDir()
	src := writeInput(t, dir, "r.jsonl", []byte(`{"custom_id":"a","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"y"}]}`+"\n"))
	_, err := Build(context.Background(), []rollout.Source{src}, filepath.Join(dir, "out"), testConfig())
	if !errors.Is(err, probes.ErrNoTokenizer) {
		t.Fatalf("got %v, want ErrNoTokenizer", err)
	}
	if want := src.Name + ":1: messages[0].tokens: a token count is not recorded and no tokenizer was given"; err.Error() != want {
		t.Errorf("got %q, want prefix %q", err, want)
	}
}

// TestBuildPointAsksForANumber: with --width point every prompt asks for
// the single integer the SFT answer gives, as the reference script's point
// template.
func TestBuildPointAsksForANumber(t *testing.T) {
	dir := t.TempDir()
	src := writeInput(t, dir, "r.jsonl", canonical(12, 0))
	out := filepath.Join(dir, "out")
	cfg := testConfig()
	cfg.Width, _ = probes.ParseWidth("point")
	if _, err := Build(context.Background(), []rollout.Source{src}, out, cfg); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadSFT(filepath.Join(out, SFTFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("no SFT rows")
	}
	for _, r := range rows {
		probe := r.Messages[len(r.Messages)-2].Content
		answer := r.Messages[len(r.Messages)-1].Content
		if !strings.HasSuffix(probe, "<answer>NUMBER</answer>\nor\n<answer>impossible</answer>") || strings.Contains(probe, "est_low") {
			t.Fatalf("%s: point probe text ends %q", r.CustomID, probe[len(probe)-80:])
		}
		if answer != "<answer>impossible</answer>" && strings.ContainsAny(answer, "[,") {
			t.Errorf("%s: point answer %q", r.CustomID, answer)
		}
	}
}

func TestBuildEmptySplitFails(t *testing.T) {
	dir := t.TempDir()
	// Every trajectory starts with the same first user message: one
	// instance group, which cannot be split 40/50/10.
	same := regexp.MustCompile(`Grid 0 of traj \d+`).ReplaceAll(canonical(40, 0), []byte("Grid 0 of traj 0"))
	src := writeInput(t, dir, "r.jsonl", same)
	out := filepath.Join(dir, "out")
	_, err := Build(context.Background(), []rollout.Source{src}, out, testConfig())
	var e *EmptySplitError
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want an *EmptySplitError", err)
	}
	want := "split rl (50%) has no rows: it received 0 of 40 trajectories, which form 1 instance group(s) (trajectories with the same first user message share a split); split by trajectory instead if the first user message is a generic instruction"
	if err.Error() != want {
		t.Errorf("got %q\nwant %q", err, want)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("output directory: stat err %v, want not created", err)
	}
	cfg := testConfig()
	cfg.SplitByTrajectory = true
	m, err := Build(context.Background(), []rollout.Source{src}, out, cfg)
	if err != nil {
		t.Fatalf("split by trajectory: %v", err)
	}
	if got := [3]int{m.Splits.SFT.Trajectories.Total(), m.Splits.RL.Trajectories.Total(), m.Splits.Eval.Trajectories.Total()}; got != [3]int{16, 20, 4} {
		t.Errorf("split by trajectory: trajectories %v, want [16 20 4]", got)
	}
}

func TestEmptySplitAllDownsampled(t *testing.T) {
	m := &Manifest{Trajectories: 2, Groups: GroupStats{By: "trajectory"}}
	m.Splits.SFT = SplitStats{Trajectories: ClassCounts{Impossible: 2}, Probes: ClassCounts{Impossible: 3}}
	m.Splits.RL.Rows.Possible = 1
	cfg := testConfig()
	cfg.Ratio = Ratio{SFT: 50, RL: 50}
	err := checkSplits(&cfg, m)
	want := "split sft (50%) has no rows: it received 2 of 2 trajectories with 3 probes, 0 of them possible; the impossible ones are capped at a multiple of the possible ones"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
