package agenttest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bagen-data/internal/agenttest"
)

// twoCalls writes a file, reads it back and answers: two shell calls and a
// final text, with cached and reasoning parts in every usage.
func twoCalls() agenttest.Script {
	return agenttest.Script{Answers: []agenttest.Answer{
		{Command: "echo one > one.txt", Text: "Writing one.", Usage: agenttest.Usage{Input: 1200, Cached: 1000, Output: 30, Reasoning: 10}},
		{Command: "cat one.txt", Reasoning: "Check the file.", Usage: agenttest.Usage{Input: 1300, Cached: 1100, Output: 20, Reasoning: 5}},
		{Text: "The file holds one.", Usage: agenttest.Usage{Input: 1400, Cached: 1200, Output: 12}},
	}}
}

// TestCLIs runs each real CLI against the stand-in: it must make the two
// scripted shell calls through its own shell tool, run them, send the
// distinctive key upstream, finish with exit 0 and leave a session log.
func TestCLIs(t *testing.T) {
	cases := []struct {
		agent  agenttest.Agent
		format string
		tool   string
		key    func(h map[string][]string) string
		logs   string // glob of the session log under HOME
	}{
		{agenttest.Claude, "messages", "Bash", header("X-Api-Key", ""), ".claude/projects/*/*.jsonl"},
		{agenttest.Codex, "responses", "exec_command", header("Authorization", "Bearer "), ".codex/sessions/*/*/*/rollout-*.jsonl"},
		{agenttest.Qwen, "chat", "run_shell_command", header("Authorization", "Bearer "), ".qwen/projects/*/chats/*.jsonl"},
	}
	for _, tc := range cases {
		t.Run(string(tc.agent), func(t *testing.T) {
			t.Parallel()
			m := agenttest.StartModel(t, twoCalls())
			key := "sk-agenttest-" + string(tc.agent) + "-7f3a"
			res := agenttest.Run(t, agenttest.CLI{Agent: tc.agent, BaseURL: m.URL, APIKey: key,
				Prompt: "Write one.txt and read it back."})
			if res.ExitCode != 0 {
				t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
			}
			if !strings.Contains(res.Stdout, "The file holds one.") {
				t.Errorf("stdout %q lacks the final answer", res.Stdout)
			}
			if b, err := os.ReadFile(filepath.Join(res.Dir, "one.txt")); err != nil || string(b) != "one\n" {
				t.Errorf("one.txt = %q, %v; want \"one\\n\" (the scripted command did not run)", b, err)
			}
			calls := m.MainCalls()
			if len(calls) != 3 {
				t.Fatalf("%d main calls, want 3: %+v", len(calls), calls)
			}
			for i, c := range calls {
				wantTool := tc.tool
				if i == 2 {
					wantTool = ""
				}
				if c.Format != tc.format || c.Step != i || c.Tool != wantTool || !c.Stream {
					t.Errorf("call %d: format %q step %d tool %q stream %v, want %q %d %q true", i, c.Format, c.Step, c.Tool, c.Stream, tc.format, i, wantTool)
				}
				if got := tc.key(c.Header); got != key {
					t.Errorf("call %d: key %q, want %q", i, got, key)
				}
				if c.Answer.Usage != twoCalls().Answers[i].Usage {
					t.Errorf("call %d: usage %+v, want %+v", i, c.Answer.Usage, twoCalls().Answers[i].Usage)
				}
			}
			logs, _ := filepath.Glob(filepath.Join(res.Home, tc.logs))
			if len(logs) != 1 {
				t.Errorf("session logs %q, want one matching %s", logs, tc.logs)
			}
		})
	}
}

func header(name, prefix string) func(map[string][]string) string {
	return func(h map[string][]string) string {
		v := ""
		if vs := h[name]; len(vs) > 0 {
			v = vs[0]
		}
		return strings.TrimPrefix(v, prefix)
	}
}
