package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const agentRuns = "../rollout/testdata"

// TestConvertThenBuildEqualsBuild: build on the canonical JSONL that
// convert writes gives the same parquet bytes as build on the agent runs,
// and probes the same probe set.
func TestConvertThenBuildEqualsBuild(t *testing.T) {
	tok := tokenizerPath(t)
	dir := t.TempDir()
	conv := filepath.Join(dir, "conv.jsonl")
	inputs := []string{"-i", agentRuns + "/mini1", "-i", agentRuns + "/mini2", "--results", agentRuns + "/report.json"}
	out, err := run(t, append([]string{"convert", "--out", conv}, inputs...)...)
	if err != nil {
		t.Fatal(err)
	}
	want := "3 trajectories from 5 file(s) to " + conv + "\nformats: mini-swe-agent 3\n" +
		"turns: 6 (LLM calls), 6 with usage\nusage: input 6150 (cached 2688), output 800 (reasoning 508)\n" +
		"reasoning count recorded on 5 turn(s) (0 of them 0), absent on 1; 0 retried call(s)\noutcome from: results 3\n" +
		"skipped 2 file(s) in input directories that hold no trajectory: " + agentRuns + "/mini1/preds.json, " + agentRuns + "/mini2/preds.json\n"
	if out != want {
		t.Errorf("convert summary:\n%s\nwant:\n%s", out, want)
	}
	common := []string{"-q", "--task", "swebench", "--budget", "4000", "--tokenizer", tok}
	buildArgs := append(common, "--split-by", "trajectory", "--split", "34/33/33", "--balance-ratio", "0")
	if _, err := run(t, append(append([]string{"build", "-o", filepath.Join(dir, "run")}, buildArgs...), inputs...)...); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, append([]string{"build", "-o", filepath.Join(dir, "conv"), "-i", conv}, buildArgs...)...); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"sft/train.parquet", "rl/train.parquet", "eval/test.parquet"} {
		a, errA := os.ReadFile(filepath.Join(dir, "run", f))
		b, errB := os.ReadFile(filepath.Join(dir, "conv", f))
		if errA != nil || errB != nil || !bytes.Equal(a, b) || len(a) == 0 {
			t.Errorf("%s differs between build on the run and on its conversion (%v, %v)", f, errA, errB)
		}
	}
	var m struct {
		Outcomes     map[string]int `json:"outcomes"`
		ReplacedUTF8 int            `json:"replaced_utf8"`
		Results      []struct {
			Path   string `json:"path"`
			Bytes  int64  `json:"bytes"`
			SHA256 string `json:"sha256"`
		} `json:"results"`
	}
	data, _ := os.ReadFile(filepath.Join(dir, "run", "manifest.json"))
	if err := json.Unmarshal(data, &m); err != nil || len(m.Outcomes) != 1 || m.Outcomes["results"] != 3 || m.ReplacedUTF8 != 0 {
		t.Errorf("manifest outcomes %v, replaced %d (%v), want results 3, 0", m.Outcomes, m.ReplacedUTF8, err)
	}
	report, _ := os.ReadFile(agentRuns + "/report.json")
	sum := sha256.Sum256(report)
	if len(m.Results) != 1 || m.Results[0].Path != agentRuns+"/report.json" || m.Results[0].Bytes != int64(len(report)) || m.Results[0].SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("manifest results %+v, want the report with %d bytes and its SHA-256", m.Results, len(report))
	}
	if _, err := run(t, append(append([]string{"probes", "-o", filepath.Join(dir, "run.parquet")}, common...), inputs...)...); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, append([]string{"probes", "-o", filepath.Join(dir, "conv.parquet"), "-i", conv}, common...)...); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "run.parquet"))
	b, _ := os.ReadFile(filepath.Join(dir, "conv.parquet"))
	if !bytes.Equal(a, b) || len(a) == 0 {
		t.Errorf("probes differ between the run and its conversion")
	}
}

func TestConvertWarnsOnExitStatusAndCountsReplacements(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "latin1.jsonl")
	os.WriteFile(bad, []byte("{\"custom_id\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":\"caf\xe9\"}]}\n"), 0o644)
	conv := filepath.Join(dir, "conv.jsonl")
	_, err := run(t, "convert", "-i", bad, "--out", conv)
	if want := bad + ":1: messages[0].content: invalid UTF-8 at byte 58 of the record (pass --replace-invalid-utf8 to replace it with U+FFFD)"; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("got %v, want …%s", err, want)
	}
	out, err := run(t, "convert", "-i", bad, "-i", agentRuns+"/mini2", "--out", conv, "--replace-invalid-utf8")
	if err != nil {
		t.Fatal(err)
	}
	want := "3 trajectories from 4 file(s) to " + conv + "\nformats: mini-swe-agent 2, rollout 1\n" +
		"turns: 4 (LLM calls), 4 with usage\nusage: input 3660 (cached 1536), output 525 (reasoning 340)\n" +
		"reasoning count recorded on 3 turn(s) (0 of them 0), absent on 1; 0 retried call(s)\n" +
		"outcome from: exit_status 2, none 1\n" +
		"note: 1 trajectories have no outcome and count as unsuccessful (pass --results or --success-file)\n" +
		"invalid UTF-8: 1 sequences replaced with U+FFFD\n" +
		"warning: 1 trajectories count as successful because the agent submitted; that is not a verified resolution (pass the SWE-bench report with --results)\n" +
		"skipped 1 file(s) in input directories that hold no trajectory: " + agentRuns + "/mini2/preds.json\n"
	if out != want {
		t.Errorf("summary:\n%s\nwant:\n%s", out, want)
	}
}

func TestReadFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"convert", "-i", agentRuns, "-o", "x", "--format", "swe"}, `format: want one of mini-swe-agent, atif, inspect, swe-agent, openhands-output, openhands, codex, qwen-code, claude-code, guard-ledger, rollout, dialogue, got "swe"`},
		{[]string{"build", "-i", agentRuns, "--max-message-bytes", "0"}, "max-message-bytes: want 1 to 1073741824, got 0"},
		{[]string{"probes", "-i", agentRuns, "--results", agentRuns + "/mini1/preds.json"}, "results: " + agentRuns + "/mini1/preds.json: resolved_ids: missing: want a SWE-bench harness report"},
		{[]string{"build", "-i", agentRuns + "/report.json", "--task", "swebench", "--budget", "9"}, agentRuns + "/report.json: not a trajectory log: SWE-bench harness report (resolved_ids): pass it with --results"},
		{[]string{"convert", "-i", agentRuns + "/sessions", "-o", "x", "--success-file", agentRuns + "/report.json"}, "success-file: " + agentRuns + "/report.json: completed_ids: want true or false, got [\"astropy__astropy-12907\", \"django__djan…"},
	}
	for _, tt := range tests {
		_, err := run(t, tt.args...)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%v: got %v\nwant %s", tt.args, err, tt.want)
		}
	}
}

func TestBuildCountsReplacementsAndOutcomes(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "latin1.jsonl")
	line := "{\"custom_id\":\"%s\",\"budget\":100,\"messages\":[{\"role\":\"user\",\"content\":\"caf\xe9\",\"tokens\":3},{\"role\":\"assistant\",\"content\":\"y\",\"tokens\":5}],\"metadata\":{\"success\":true,\"outcome_source\":\"exit_status\"}}\n"
	var b strings.Builder
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		b.WriteString(strings.Replace(line, "%s", id, 1))
	}
	os.WriteFile(in, []byte(b.String()), 0o644)
	out, err := run(t, "build", "-i", in, "-o", filepath.Join(dir, "out"), "--replace-invalid-utf8", "--split-by", "trajectory", "--system-prompt", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"outcome from: exit_status 10\n", "invalid UTF-8: 10 sequences replaced with U+FFFD\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary %q lacks %q", out, want)
		}
	}
	var m struct {
		Outcomes     map[string]int `json:"outcomes"`
		ReplacedUTF8 int            `json:"replaced_utf8"`
	}
	data, _ := os.ReadFile(filepath.Join(dir, "out", "manifest.json"))
	if err := json.Unmarshal(data, &m); err != nil || m.Outcomes["exit_status"] != 10 || m.ReplacedUTF8 != 10 {
		t.Errorf("manifest outcomes %v, replaced %d (%v), want exit_status 10, 10", m.Outcomes, m.ReplacedUTF8, err)
	}
}

// TestConvertSessions converts the three CLIs' sessions with verdicts from
// a success file: the summary counts sessions, turns and usage, and build
// and probes on the conversion equal build and probes on the sessions.
func TestConvertSessions(t *testing.T) {
	tok := tokenizerPath(t)
	dir := t.TempDir()
	verdicts := filepath.Join(dir, "verdicts.json")
	// Two Claude Code sessions and one Codex session succeeded.
	os.WriteFile(verdicts, []byte(`{"`+sessionIDs(t)[0]+`": true, "`+sessionIDs(t)[1]+`": true, "`+sessionIDs(t)[3]+`": true, "`+sessionIDs(t)[6]+`": false}`), 0o644)
	conv := filepath.Join(dir, "conv.jsonl")
	inputs := []string{"-i", agentRuns + "/sessions", "--success-file", verdicts}
	out, err := run(t, append([]string{"convert", "--out", conv}, inputs...)...)
	if err != nil {
		t.Fatal(err)
	}
	// 3 scripts of 3, 1 and 4 calls, each run by the three CLIs: per CLI
	// input 13,400 (cached 9,000), output 195 (reasoning 34).
	want := "9 trajectories from 10 file(s) to " + conv + "\nformats: claude-code 3, codex 3, qwen-code 3\n" +
		"turns: 24 (LLM calls), 24 with usage\nusage: input 40200 (cached 27000), output 585 (reasoning 102)\n" +
		"reasoning count recorded on 24 turn(s) (9 of them 0), absent on 0; 0 retried call(s)\n" +
		"outcome from: none 5, results 4\n" +
		"note: 5 trajectories have no outcome and count as unsuccessful (pass --results or --success-file)\n" +
		"skipped 1 file(s) in input directories that hold no trajectory: " + agentRuns + "/sessions/qwen/usage_record.jsonl\n"
	if out != want {
		t.Errorf("convert summary:\n%s\nwant:\n%s", out, want)
	}
	common := []string{"-q", "--task", "swebench", "--budget", "3000", "--tokenizer", tok}
	buildArgs := append(common, "--split-by", "trajectory", "--split", "34/33/33", "--balance-ratio", "0")
	if _, err := run(t, append(append([]string{"build", "-o", filepath.Join(dir, "run")}, buildArgs...), inputs...)...); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, append([]string{"build", "-o", filepath.Join(dir, "conv"), "-i", conv}, buildArgs...)...); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"sft/train.parquet", "rl/train.parquet", "eval/test.parquet"} {
		a, errA := os.ReadFile(filepath.Join(dir, "run", f))
		b, errB := os.ReadFile(filepath.Join(dir, "conv", f))
		if errA != nil || errB != nil || !bytes.Equal(a, b) || len(a) == 0 {
			t.Errorf("%s differs between build on the sessions and on their conversion (%v, %v)", f, errA, errB)
		}
	}
	if _, err := run(t, append(append([]string{"probes", "-o", filepath.Join(dir, "run.parquet")}, common...), inputs...)...); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, append([]string{"probes", "-o", filepath.Join(dir, "conv.parquet"), "-i", conv}, common...)...); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "run.parquet"))
	b, _ := os.ReadFile(filepath.Join(dir, "conv.parquet"))
	if !bytes.Equal(a, b) || len(a) == 0 {
		t.Errorf("probes differ between the sessions and their conversion")
	}
}

// sessionIDs are the session ids of the generated sessions, in the order
// tools/agentsessions made them (Claude Code, Codex, Qwen Code; scripts by
// name).
func sessionIDs(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(agentRuns + "/sessions-calls.json")
	if err != nil {
		t.Fatal(err)
	}
	var gs []struct {
		File string `json:"file"`
	}
	if err := json.Unmarshal(data, &gs); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(gs))
	for i, g := range gs {
		id := strings.TrimSuffix(filepath.Base(g.File), ".jsonl")
		ids[i] = id[len(id)-36:]
	}
	return ids
}
