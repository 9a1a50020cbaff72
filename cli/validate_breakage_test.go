package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"bagen-data/internal/testenv"
	"bagen-data/rollout"

	"bagen-data/dataset"
	"bagen-data/internal/cache"
	"bagen-data/reward"
	"bagen-data/tokenizer"
	"bagen-data/validate"
)

// duckEdit rewrites a parquet file through DuckDB's Node.js client, a
// writer independent of ours: the file becomes query's result, in which t
// is the file's rows in order (validate/testdata/edit_parquet.mjs).
func duckEdit(t *testing.T, path, query string) {
	t.Helper()
	dir, _ := cache.Dir()
	modules := filepath.Join(dir, "node", "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "@duckdb", "node-api")); err != nil {
		testenv.Need(t, "DuckDB's Node.js client", fmt.Errorf("%w (make duckdb)", err))
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the breakages are written through DuckDB's Node.js client")
	}
	cmd := exec.Command("node", filepath.Join("..", "validate", "testdata", "edit_parquet.mjs"), path, query)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("duckdb %s: %v\n%s", query, err, out)
	}
}

// goodBuild builds one of the embedded Sokoban fixture logs (40 rollouts
// on 8×8 grids; the race detector makes validating all eight logs slow)
// into a directory the cases copy.
func goodBuild(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "good")
	fixtures := filepath.Join("..", "fixtures", "rollouts", "sokoban")
	if _, stderr, err := runReward(t.Context(), "build", "--out", dir,
		"--input", filepath.Join(fixtures, "8x8_noise0.25.jsonl.zst")); err != nil {
		t.Fatalf("build: %v\n%s", err, stderr)
	}
	return dir
}

func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
	return to
}

// findingLine is a finding's heading in the text report.
var findingLine = regexp.MustCompile(`(?m)^(ERROR|WARNING|INFO)(?: \(a warning; --strict\))? \[[a-z]+/([a-z0-9-]+)\] .* \((\d+)\)$`)

// validated runs validate on dir and returns its text and the count of
// each level's findings by code, read from the text.
func validated(t *testing.T, dir string, args ...string) (text string, levels map[string]map[string]int, err error) {
	t.Helper()
	text, _, err = runReward(t.Context(), append(append([]string{"validate"}, args...), dir)...)
	levels = map[string]map[string]int{"ERROR": {}, "WARNING": {}, "INFO": {}}
	for _, m := range findingLine.FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[3])
		levels[m[1]][m[2]] += n
	}
	return text, levels, err
}

// withGroundTruth is the SQL that recomputes reward_model and label from
// the extra_info already in t (the pct30 rule: L = max(1, trunc(0.7r)),
// H = trunc(1.3r)), so that an edit of the token fields keeps every label
// consistent as build would have written it.
const withGroundTruth = `g AS (SELECT *, CASE WHEN extra_info.is_possible
    THEN '[' || greatest(1, trunc(extra_info.remaining_tokens * (1 - 30::DOUBLE/100)))::BIGINT || ', ' ||
         trunc(extra_info.remaining_tokens * (1 + 30::DOUBLE/100))::BIGINT || ']'
    ELSE 'impossible' END AS gt FROM e)
  SELECT * EXCLUDE (gt) REPLACE (struct_pack(style := reward_model.style, ground_truth := gt) AS reward_model,
    '{"remaining_tokens":' || extra_info.remaining_tokens || ',"is_possible":' || extra_info.is_possible || ',"ground_truth":"' || gt || '"}' AS label)
  FROM g`

// shiftTokens moves n tokens from remaining_tokens to tokens_used on the
// rows where cond holds, labels recomputed.
func shiftTokens(n int64, cond string) string {
	return fmt.Sprintf(`WITH e AS (SELECT * REPLACE (CASE WHEN %s THEN struct_update(extra_info,
    tokens_used := extra_info.tokens_used + %d::BIGINT, remaining_tokens := extra_info.remaining_tokens - %d::BIGINT)
    ELSE extra_info END AS extra_info) FROM t), `, cond, n, n) + withGroundTruth
}

// TestValidateCatchesBreakages breaks a good build one column at a time
// through DuckDB, as a researcher editing the parquet would, and checks
// validate's exit status, the errors it reports (exactly) and the first
// offender's message.
func TestValidateCatchesBreakages(t *testing.T) {
	good := goodBuild(t)
	if text, _, err := validated(t, good, "--strict"); err != nil || !strings.HasSuffix(text, "\n0 errors, 0 warnings\n") {
		t.Fatalf("the good build fails: %v\n%s", err, text)
	}
	rlPath := func(dir string) string { return filepath.Join(dir, filepath.FromSlash(dataset.RLFile)) }
	evalPath := func(dir string) string { return filepath.Join(dir, filepath.FromSlash(dataset.EvalFile)) }
	sftPath := func(dir string) string { return filepath.Join(dir, filepath.FromSlash(dataset.SFTFile)) }
	rl, err := dataset.ReadRL(rlPath(good))
	if err != nil {
		t.Fatal(err)
	}
	eval, err := dataset.ReadRL(evalPath(good))
	if err != nil {
		t.Fatal(err)
	}
	sft, err := dataset.ReadSFT(sftPath(good))
	if err != nil {
		t.Fatal(err)
	}
	later := func(rows []dataset.RLRow) int {
		n := 0
		for _, r := range rows {
			if r.ExtraInfo.ProbeAfterTurn >= 1 {
				n++
			}
		}
		return n
	}
	firstLater := slices.IndexFunc(rl, func(r dataset.RLRow) bool { return r.ExtraInfo.ProbeAfterTurn >= 1 })
	sysTokens := rl[firstLater].ExtraInfo.TokensUsed
	for _, tt := range rl[firstLater].ExtraInfo.PerTurnTokens {
		sysTokens -= tt.InputTokens + tt.OutputTokens
	}

	tests := []struct {
		name string
		args []string
		// edit breaks dir and returns the first example line the report
		// must print for the error.
		edit   func(t *testing.T, dir string) string
		errors map[string]int
	}{
		{
			name: "rl budget 3500 with the margin recomputed, prompts say 2500",
			edit: func(t *testing.T, dir string) string {
				duckEdit(t, rlPath(dir), `SELECT * REPLACE (struct_update(extra_info, budget := 3500::BIGINT,
					margin := (3500 - extra_info.tokens_used - extra_info.remaining_tokens) / 3500::DOUBLE) AS extra_info) FROM t`)
				return fmt.Sprintf("%s: row 0 (%s): budget 3500; the prompt says within 2500 tokens", rlPath(dir), rl[0].ExtraInfo.CustomID)
			},
			errors: map[string]int{"prompt-budget": len(rl)},
		},
		{
			name: "sft budget 3500, prompts say 2500",
			edit: func(t *testing.T, dir string) string {
				duckEdit(t, sftPath(dir), `SELECT * REPLACE (3500::BIGINT AS budget) FROM t`)
				return fmt.Sprintf("%s: row 0 (%s): budget 3500; the prompt says within 2500 tokens", sftPath(dir), sft[0].CustomID)
			},
			errors: map[string]int{"prompt-budget": len(sft)},
		},
		{
			name: "eval prompts say 3500, budget 2500",
			edit: func(t *testing.T, dir string) string {
				duckEdit(t, evalPath(dir), `SELECT * REPLACE (list_transform(prompt, m -> struct_pack(role := m.role,
					content := replace(m.content, 'within 2500 ', 'within 3500 '))) AS prompt) FROM t`)
				return fmt.Sprintf("%s: row 0 (%s): budget 2500; the prompt says within 3500 tokens", evalPath(dir), eval[0].ExtraInfo.CustomID)
			},
			errors: map[string]int{"prompt-budget": len(eval)},
		},
		{
			name: "sft impossible probe answering an interval",
			edit: func(t *testing.T, dir string) string {
				i, traj, agree, n := sftPick(t, sft, false)
				setAnswer(t, sftPath(dir), i, "<answer>[70, 130]</answer>")
				return fmt.Sprintf("%s: row %d (%s): answers an estimate after %d turns; %d of the %d probes of trajectory %q answer impossible",
					sftPath(dir), i, sft[i].CustomID, len(sft[i].PerTurnTokens), agree, n, traj)
			},
			errors: map[string]int{"sft-trajectory-label": 1},
		},
		{
			name: "sft possible probe answering impossible",
			edit: func(t *testing.T, dir string) string {
				i, traj, agree, n := sftPick(t, sft, true)
				setAnswer(t, sftPath(dir), i, "<answer>impossible</answer>")
				return fmt.Sprintf("%s: row %d (%s): answers impossible after %d turns; %d of the %d probes of trajectory %q answer an estimate",
					sftPath(dir), i, sft[i].CustomID, len(sft[i].PerTurnTokens), agree, n, traj)
			},
			errors: map[string]int{"sft-trajectory-label": 1},
		},
		{
			name: "sft interval of another probe",
			edit: func(t *testing.T, dir string) string {
				i, _, agree, _ := sftPick(t, sft, true)
				traj := dataset.TrajectoryOf(sft[i].CustomID)
				j := slices.IndexFunc(sft, func(r dataset.SFTRow) bool {
					return dataset.TrajectoryOf(r.CustomID) == traj && len(r.PerTurnTokens) != len(sft[i].PerTurnTokens)
				})
				other := lastMessage(sft[j])
				setAnswer(t, sftPath(dir), i, other)
				r := pct30Remaining(t, other)
				want := lastMessage(sft[i])
				return fmt.Sprintf("%s: row %d (%s): answer is the target of remaining_tokens %d; %d of the trajectory's probes put it at %d after %d turns (want %s)",
					sftPath(dir), i, sft[i].CustomID, r, agree, pct30Remaining(t, want), len(sft[i].PerTurnTokens), strings.TrimSuffix(strings.TrimPrefix(want, "<answer>"), "</answer>"))
			},
			errors: map[string]int{"sft-trajectory-total": 1},
		},
		{
			name: "eval prompt with completed turns copied into rl under a new id",
			edit: func(t *testing.T, dir string) string {
				k := slices.IndexFunc(eval, func(r dataset.RLRow) bool { return r.ExtraInfo.ProbeAfterTurn >= 1 })
				duckEdit(t, rlPath(dir), fmt.Sprintf(`SELECT * FROM t UNION ALL
					SELECT * REPLACE (struct_update(extra_info, custom_id := 'copy_' || extra_info.custom_id,
						trajectory_id := 'copy_' || extra_info.trajectory_id, split := 'rl') AS extra_info)
					FROM read_parquet('%s') WHERE extra_info.custom_id = '%s'`, evalPath(dir), eval[k].ExtraInfo.CustomID))
				return fmt.Sprintf("%s: row %d (%s): same prompt and answer as %s row %d (copy_%s), completed turns included",
					evalPath(dir), k, eval[k].ExtraInfo.CustomID, rlPath(dir), len(rl), eval[k].ExtraInfo.CustomID)
			},
			errors: map[string]int{"prefix-leak": 1},
		},
		{
			name: "tokens_used without the system prompt in every row",
			args: []string{"--tokenizer", tokenizer.DefaultPath()},
			edit: func(t *testing.T, dir string) string {
				_, err := os.Stat(tokenizer.DefaultPath())
				testenv.Need(t, "Qwen's tokenizer", err)
				shift := shiftTokens(-sysTokens, "true")
				duckEdit(t, rlPath(dir), shift)
				duckEdit(t, evalPath(dir), shift)
				// build counted the same system prompt with the same cached
				// tokenizer: its count is sysTokens.
				x := rl[firstLater].ExtraInfo
				return fmt.Sprintf("%s: row %d (%s): tokens_used %d − Σ per_turn_tokens %d = 0; the system message has %d tokens",
					rlPath(dir), firstLater, x.CustomID, x.TokensUsed-sysTokens, x.TokensUsed-sysTokens, sysTokens)
			},
			errors: map[string]int{"system-count": later(rl) + later(eval)},
		},
		{
			name: "tokens_used +30 and remaining_tokens −30 on one row",
			edit: func(t *testing.T, dir string) string {
				k := firstLater + 1
				for x := rl[k].ExtraInfo; x.ProbeAfterTurn < 1 || !x.IsPossible || x.RemainingTokens <= 100; x = rl[k].ExtraInfo {
					k++
				}
				duckEdit(t, rlPath(dir), shiftTokens(30, fmt.Sprintf("rowid = %d", k)))
				return fmt.Sprintf("%s: row %d (%s): %d here, %d at %s row %d",
					rlPath(dir), k, rl[k].ExtraInfo.CustomID, sysTokens+30, sysTokens, rlPath(dir), firstLater)
			},
			errors: map[string]int{"system-tokens": 1},
		},
		{
			name: "data_source and ability swapped",
			edit: func(t *testing.T, dir string) string {
				duckEdit(t, rlPath(dir), `SELECT * REPLACE (ability AS data_source, data_source AS ability) FROM t`)
				return fmt.Sprintf(`%s: row 0 (%s): data_source "budget_estimation", want "budget_probe_sokoban" (the manifest's task)`, rlPath(dir), rl[0].ExtraInfo.CustomID)
			},
			errors: map[string]int{"data-source": len(rl), "ability": len(rl)},
		},
		{
			name: "duplicated impossible rows without a manifest, --strict",
			args: []string{"--strict"},
			edit: func(t *testing.T, dir string) string {
				os.Remove(filepath.Join(dir, dataset.ManifestFile))
				duckEdit(t, rlPath(dir), `SELECT * FROM t UNION ALL (SELECT * FROM t WHERE NOT extra_info.is_possible ORDER BY rowid LIMIT 3)`)
				dups := len(rl) - countIDs(rl)
				return fmt.Sprintf("%s: %d duplicate rows (%d possible, 3 impossible)", rlPath(dir), dups+3, dups)
			},
			errors: map[string]int{"duplicates": 1},
		},
		{
			name: "eval without impossible probes, --strict",
			args: []string{"--strict"},
			edit: func(t *testing.T, dir string) string {
				duckEdit(t, evalPath(dir), `SELECT * FROM t WHERE extra_info.is_possible`)
				possible := 0
				for _, r := range eval {
					if r.ExtraInfo.IsPossible {
						possible++
					}
				}
				return fmt.Sprintf("%s: %d possible, 0 impossible", evalPath(dir), possible)
			},
			errors: map[string]int{"class-missing": 1, "manifest-counts": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyDir(t, good)
			example := tt.edit(t, dir)
			text, levels, err := validated(t, dir, tt.args...)
			if !errors.Is(err, validate.ErrInvalid) {
				t.Errorf("exit: got %v, want the validation failure\n%s", err, text)
			}
			if got := levels["ERROR"]; !maps.Equal(got, tt.errors) {
				t.Errorf("errors: got %v, want %v\n%s", got, tt.errors, text)
			}
			if !strings.Contains(text, "\n  "+example+"\n") {
				t.Errorf("output lacks %q:\n%s", example, text)
			}
			if slices.Contains(tt.args, "--strict") {
				if text, _, err := validated(t, dir); err != nil {
					t.Errorf("without --strict: got %v, want success (warnings only)\n%s", err, text)
				}
			}
		})
	}
}

// TestValidateLogReadTwice builds one log read from two directories with
// --prefix-ids --split-by trajectory: every trajectory is there twice under
// two ids, so eval prompts with completed turns are in training under the
// twin's id (errors) and eval start states are too (warnings).
func TestValidateLogReadTwice(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "fixtures", "rollouts", "sokoban", "6x6_noise0.30.jsonl.zst"))
	if err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "a", "log.jsonl.zst"), filepath.Join(dir, "b", "copy.jsonl.zst")
	for _, p := range []string{a, b} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out")
	if _, stderr, err := runReward(t.Context(), "build", "--input", a, "--input", b, "--prefix-ids", "--split-by", "trajectory", "--out", out); err != nil {
		t.Fatalf("build: %v\n%s", err, stderr)
	}
	// Training ids and prompts (an SFT prompt is its messages without the
	// answer), as text.
	chat := func(msgs []rollout.Message) string {
		b, _ := json.Marshal(msgs)
		return string(b)
	}
	trainIDs, trainPrompts := map[string]bool{}, map[string]bool{}
	sft, err := dataset.ReadSFT(filepath.Join(out, filepath.FromSlash(dataset.SFTFile)))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sft {
		trainIDs[r.CustomID], trainPrompts[chat(r.Messages[:len(r.Messages)-1])] = true, true
	}
	rl, err := dataset.ReadRL(filepath.Join(out, filepath.FromSlash(dataset.RLFile)))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rl {
		trainIDs[r.ExtraInfo.CustomID], trainPrompts[chat(r.Prompt)] = true, true
	}
	eval, err := dataset.ReadRL(filepath.Join(out, filepath.FromSlash(dataset.EvalFile)))
	if err != nil {
		t.Fatal(err)
	}
	twin := func(id string) string {
		if rest, ok := strings.CutPrefix(id, "log:"); ok {
			return "copy:" + rest
		}
		return "log:" + strings.TrimPrefix(id, "copy:")
	}
	// A prompt with completed turns is in training exactly when the
	// twin's probe is; a start state also when the log itself rolled it
	// out more than once.
	var prefixes, twins, starts int
	for _, r := range eval {
		x := r.ExtraInfo
		if x.ProbeAfterTurn >= 1 && trainIDs[twin(x.CustomID)] {
			twins++
		}
		switch {
		case !trainPrompts[chat(r.Prompt)]:
		case x.ProbeAfterTurn >= 1:
			prefixes++
		default:
			starts++
		}
	}
	if prefixes != twins || prefixes == 0 || starts == 0 {
		t.Fatalf("%d eval prompts with completed turns in training, %d twins; %d start states: the test proves nothing", prefixes, twins, starts)
	}
	text, levels, err := validated(t, out)
	if !errors.Is(err, validate.ErrInvalid) {
		t.Errorf("exit: got %v, want the validation failure\n%s", err, text)
	}
	if got, want := levels["ERROR"], map[string]int{"prefix-leak": prefixes}; !maps.Equal(got, want) {
		t.Errorf("errors: got %v, want %v\n%s", got, want, text)
	}
	if got := levels["WARNING"]["prompt-repeat"]; got != starts {
		t.Errorf("prompt-repeat warnings: got %d, want %d\n%s", got, starts, text)
	}
	for _, want := range []string{"), completed turns included\n", "), a start state\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}

// sftPick finds an SFT row of the given class whose trajectory has at
// least three distinct probes, all of that class: it returns the row, the
// trajectory, how many of its probes answer the class and how many it has.
func sftPick(t *testing.T, rows []dataset.SFTRow, possible bool) (row int, traj string, agree, probes int) {
	t.Helper()
	byTraj := map[string]map[string]bool{}
	for _, r := range rows {
		tr := dataset.TrajectoryOf(r.CustomID)
		if byTraj[tr] == nil {
			byTraj[tr] = map[string]bool{}
		}
		byTraj[tr][r.CustomID] = lastMessage(r) != "<answer>impossible</answer>"
	}
	for i, r := range rows {
		tr := dataset.TrajectoryOf(r.CustomID)
		classes := byTraj[tr]
		if len(classes) < 3 || r.CustomID == "" {
			continue
		}
		same := 0
		for _, c := range classes {
			if c == possible {
				same++
			}
		}
		if same == len(classes) {
			return i, tr, same - 1, len(classes)
		}
	}
	t.Fatalf("no SFT trajectory with 3 probes all possible=%t", possible)
	return
}

func lastMessage(r dataset.SFTRow) string { return r.Messages[len(r.Messages)-1].Content }

// setAnswer replaces the answer of SFT row i through DuckDB.
func setAnswer(t *testing.T, path string, i int, answer string) {
	t.Helper()
	duckEdit(t, path, fmt.Sprintf(`SELECT * REPLACE (CASE WHEN rowid = %d THEN list_concat(messages[1:len(messages)-1],
		[struct_pack(role := 'assistant', content := '%s')]) ELSE messages END AS messages) FROM t`, i, answer))
}

// pct30Remaining is the r whose pct30 target is the answer's interval.
func pct30Remaining(t *testing.T, answer string) int64 {
	t.Helper()
	p := reward.Parse(answer)
	f := 30.0 / 100 // as probes.Width computes it: N/100, then 1 ± f at run time
	for r := int64(1); r <= 10*p.High+10; r++ {
		if max(1, int64(float64(r)*(1-f))) == p.Low && int64(float64(r)*(1+f)) == p.High {
			return r
		}
	}
	t.Fatalf("%q is no pct30 target", answer)
	return 0
}

func countIDs(rows []dataset.RLRow) int {
	ids := map[string]bool{}
	for _, r := range rows {
		ids[r.ExtraInfo.CustomID] = true
	}
	return len(ids)
}
