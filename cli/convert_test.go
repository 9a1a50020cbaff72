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
	want := "3 trajectories from 5 file(s) to " + conv + "\nformats: mini-swe-agent 3\noutcome from: results 3\n"
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
	want := "3 trajectories from 4 file(s) to " + conv + "\nformats: mini-swe-agent 2, rollout 1\noutcome from: exit_status 2, none 1\n" +
		"invalid UTF-8: 1 sequences replaced with U+FFFD\n" +
		"warning: 1 trajectories count as successful because the agent submitted; that is not a verified resolution (pass the SWE-bench report with --results)\n"
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
