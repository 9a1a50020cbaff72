package rollout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bagen-data/internal/testenv"

	"github.com/google/go-cmp/cmp"

	"bagen-data/internal/agenttest"
)

// generated is one session of testdata/sessions as tools/agentsessions
// made it: the CLI, the script and the usage the stand-in reported for each
// of its calls.
type generated struct {
	Agent  agenttest.Agent   `json:"agent"`
	Script string            `json:"script"`
	File   string            `json:"file"`
	Calls  []agenttest.Usage `json:"calls"`
	Format []string          `json:"formats"`
}

func loadGenerated(t *testing.T) []generated {
	t.Helper()
	b, err := os.ReadFile("testdata/sessions-calls.json")
	if err != nil {
		t.Fatal(err)
	}
	var gs []generated
	if err := json.Unmarshal(b, &gs); err != nil {
		t.Fatal(err)
	}
	if len(gs) != 9 {
		t.Fatalf("%d generated sessions, want 9 (3 CLIs × 3 scripts)", len(gs))
	}
	return gs
}

var formatOf = map[agenttest.Agent]*Format{agenttest.Claude: ClaudeCode, agenttest.Codex: Codex, agenttest.Qwen: QwenCode}

// sessionID is the id a CLI gives a session file: Claude Code and Qwen Code
// name it <id>.jsonl, Codex rollout-<time>-<id>.jsonl.
func sessionID(a agenttest.Agent, file string) string {
	id := BaseID(file)
	if a == agenttest.Codex {
		return id[len(id)-36:]
	}
	return id
}

func apiOf(calls []agenttest.Usage) []APITokens {
	out := make([]APITokens, len(calls))
	for i, u := range calls {
		r := int64(u.Reasoning)
		out[i] = APITokens{Input: int64(u.Input), Output: int64(u.Output), Reasoning: &r, Cached: int64(u.Cached)}
	}
	return out
}

// TestSessionsPinned reads every generated session: one trajectory, its
// session id, its working directory as instance, one turn per call of the
// stand-in with the usage the stand-in reported, no outcome.
func TestSessionsPinned(t *testing.T) {
	for _, g := range loadGenerated(t) {
		t.Run(string(g.Agent)+"/"+g.Script, func(t *testing.T) {
			path := filepath.Join("testdata/sessions", g.File)
			var format string
			srcs, err := Expand([]string{path})
			if err != nil {
				t.Fatal(err)
			}
			var ts []Trajectory
			err = Scan(context.Background(), srcs[0], func(rec Record) error {
				format = rec.FormatName()
				tr, err := Decode(rec)
				ts = append(ts, tr)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(ts) != 1 || format != formatOf[g.Agent].Name {
				t.Fatalf("%d trajectories in format %s, want 1 in %s", len(ts), format, formatOf[g.Agent].Name)
			}
			tr := ts[0]
			wantInstance := "/tmp/bagen-agentsessions/" + string(g.Agent) + "-" + g.Script + "/work"
			if tr.ID != sessionID(g.Agent, g.File) || tr.Extra.Instance != wantInstance || tr.Outcome != OutcomeNone || tr.Inputs != InputsRequest || tr.Success {
				t.Errorf("id %q instance %q outcome %q inputs %v success %v; want %q %q none request false",
					tr.ID, tr.Extra.Instance, tr.Outcome, tr.Inputs, tr.Success, sessionID(g.Agent, g.File), wantInstance)
			}
			if diff := cmp.Diff(apiOf(g.Calls), tr.API); diff != "" {
				t.Errorf("usage per turn (-stand-in +read):\n%s", diff)
			}
			roles := ""
			for _, m := range tr.Messages {
				roles += m.Role[:1]
			}
			want := strings.Repeat("ua", len(g.Calls))
			if g.Agent == agenttest.Codex {
				want = "s" + want // the base instructions
			}
			if roles != want {
				t.Errorf("roles %s, want %s", roles, want)
			}
			if first := tr.Messages[strings.Index(roles, "u")].Content; !strings.Contains(first, agenttest.Prompts[g.Script]) {
				t.Errorf("first user message lacks the prompt %q: %.200q", agenttest.Prompts[g.Script], first)
			}
		})
	}
}

// TestSessionTurnText pins what each CLI's two-call session reads as: the
// tool calls rendered as the other readers render them, the tool output on
// the next turn's user side, reasoning left out of the text.
func TestSessionTurnText(t *testing.T) {
	want := map[agenttest.Agent][]string{
		agenttest.Claude: {
			"Writing one.\n\n<tool_call>\n{\"name\": \"Bash\", \"arguments\": {\"command\":\"echo one > one.txt\"}}\n</tool_call>",
			"(Bash completed with no output)",
			"<tool_call>\n{\"name\": \"Bash\", \"arguments\": {\"command\":\"cat one.txt\"}}\n</tool_call>",
			"one",
			"The file holds one.",
		},
		agenttest.Codex: {
			"Writing one.\n\n<tool_call>\n{\"name\": \"exec_command\", \"arguments\": {\"cmd\":\"echo one \\u003e one.txt\"}}\n</tool_call>",
			"Process exited with code 0\nOriginal token count: 0\nOutput:\n",
			"<tool_call>\n{\"name\": \"exec_command\", \"arguments\": {\"cmd\":\"cat one.txt\"}}\n</tool_call>",
			"Process exited with code 0\nOriginal token count: 1\nOutput:\none\n",
			"The file holds one.",
		},
		agenttest.Qwen: {
			"Writing one.\n\n<tool_call>\n{\"name\": \"run_shell_command\", \"arguments\": {\"command\":\"echo one > one.txt\"}}\n</tool_call>",
			"Command: echo one > one.txt\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: 0\nSignal: (none)\nProcess Group PGID: (none)",
			"<tool_call>\n{\"name\": \"run_shell_command\", \"arguments\": {\"command\":\"cat one.txt\"}}\n</tool_call>",
			"Command: cat one.txt\nDirectory: (root)\nOutput: ",
			"The file holds one.",
		},
	}
	for _, g := range loadGenerated(t) {
		if g.Script != "two-calls" {
			continue
		}
		tr := mustReadAll(t, nil, filepath.Join("testdata/sessions", g.File))[0]
		msgs := tr.Messages
		if msgs[0].Role == "system" {
			msgs = msgs[1:]
		}
		got := []string{msgs[1].Content, msgs[2].Content, msgs[3].Content, msgs[4].Content, msgs[5].Content}
		for i, w := range want[g.Agent] {
			ok := got[i] == w
			if i%2 == 1 { // tool output: Codex adds a chunk id and wall time first, Qwen its output
				ok = strings.Contains(got[i], w)
			}
			if !ok {
				t.Errorf("%s message %d = %q, want %q", g.Agent, i+1, got[i], w)
			}
		}
	}
}

// copyTree copies testdata/sessions/<from> to dst.
func copyTree(t *testing.T, from, dst string) {
	t.Helper()
	src := filepath.Join("testdata/sessions", from)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSessionDirectory reads a directory that mixes the three CLIs'
// sessions with files that are not sessions (Qwen Code's usage log,
// Codex's prompt history, a Claude Code todo list, a session aborted
// before its first call): the sessions are read, the rest skipped; named
// directly, each of the others is an error naming it.
func TestSessionDirectory(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, "", dir)
	extra := map[string]string{
		"codex/history.jsonl":                  `{"session_id":"01a211c3-0000-7000-8000-000000000000","ts":1795593796,"text":"Write one.txt"}` + "\n",
		"claude/todos/abc-agent-abc.json":      `[{"content":"Run the tests","status":"pending","activeForm":"Running the tests"}]`,
		"claude/projects/-x/aborted.jsonl":     `{"type":"summary","summary":"Nothing yet","leafUuid":"u1"}` + "\n",
		"qwen/projects/-x/chats/aborted.jsonl": `{"uuid":"u1","parentUuid":null,"sessionId":"aborted","timestamp":"2026-11-25T08:00:00Z","type":"user","cwd":"/w","message":{"role":"user","parts":[{"text":"hi"}]}}` + "\n",
	}
	for name, body := range extra {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A sub-agent transcript carries its parent's session id: it is read as
	// <session>/agent-<id>, not as a second copy of the session.
	claude := filepath.Join(dir, loadGenerated(t)[0].File)
	parent := sessionID(agenttest.Claude, claude)
	sub := filepath.Join(filepath.Dir(claude), parent, "subagents", "agent-a0123456789abcdef.jsonl")
	data, err := os.ReadFile(claude)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(sub), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sub, data, 0o644); err != nil {
		t.Fatal(err)
	}
	srcs, err := Expand([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	formats := map[string]int{}
	ids := map[string]bool{}
	for _, src := range srcs {
		err := Scan(context.Background(), src, func(rec Record) error {
			tr, err := Decode(rec)
			if err != nil {
				return err
			}
			if ids[tr.ID] {
				t.Errorf("id %s read twice", tr.ID)
			}
			ids[tr.ID] = true
			formats[rec.FormatName()]++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if want := map[string]int{"claude-code": 4, "codex": 3, "qwen-code": 3}; !cmp.Equal(formats, want) {
		t.Errorf("formats %v, want %v", formats, want)
	}
	if !ids[parent] || !ids[parent+"/agent-a0123456789abcdef"] {
		t.Errorf("ids %v lack %s and its sub-agent", ids, parent)
	}
	named := map[string]string{
		"codex/history.jsonl":                  "codex/history.jsonl:1: not a trajectory log: Codex prompt history (~/.codex/history.jsonl)",
		"qwen/usage_record.jsonl":              "qwen/usage_record.jsonl:1: not a trajectory log: Qwen Code usage record (~/.qwen/usage_record.jsonl)",
		"claude/todos/abc-agent-abc.json":      "claude/todos/abc-agent-abc.json: not a trajectory log: Claude Code todo list (~/.claude/todos)",
		"claude/projects/-x/aborted.jsonl":     "claude/projects/-x/aborted.jsonl: no assistant message (no LLM call in the session)",
		"qwen/projects/-x/chats/aborted.jsonl": "qwen/projects/-x/chats/aborted.jsonl: no assistant record (no LLM call in the session)",
	}
	for name, want := range named {
		_, err := readAll(t, nil, filepath.Join(dir, name))
		if err == nil || err.Error() != filepath.Join(dir, want) && err.Error() != dir+"/"+want {
			t.Errorf("%s: error %v, want %s", name, err, want)
		}
	}
}

// TestSessionBadLines names the line and field of what is wrong.
func TestSessionBadLines(t *testing.T) {
	cases := map[string]string{
		"claude": `{"type":"user","sessionId":"s","message":{"role":"user","content":"hi"}}` + "\n" +
			`{"type":"assistant","sessionId":"s","message":{"id":"m1","content":[{"type":"text","text":"x"}],"usage":{"input_tokens":"ten","output_tokens":1}}}`,
		"claude-cached": `{"type":"user","sessionId":"s","message":{"role":"user","content":"hi"}}` + "\n" +
			`{"type":"assistant","sessionId":"s","message":{"id":"m1","content":[],"usage":{"input_tokens":1,"output_tokens":1,"output_tokens_details":{"thinking_tokens":2}}}}`,
		"codex": `{"timestamp":"t","type":"session_meta","payload":{"id":"c1","cwd":"/w"}}` + "\n" +
			`{"timestamp":"t","type":"response_item","payload":{"type":"function_call","arguments":"{}"}}`,
		"codex-usage": `{"timestamp":"t","type":"session_meta","payload":{"id":"c1","cwd":"/w"}}` + "\n\n" +
			`{"timestamp":"t","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":5,"cached_input_tokens":6,"output_tokens":1}}}}`,
		"qwen": `{"uuid":"u","sessionId":"q","type":"user","message":{"role":"user","parts":[{"text":"hi"}]}}` + "\n" +
			`not json`,
		"claude-cut": `{"type":"user","sessionId":"s","message":{"role":"user","content":"hi"}}` + "\n" +
			`{"type":"assistant","sessionId":"s","message":{"id":"m1","content":[{"type":"text","te`,
		"qwen-message": `{"uuid":"u","sessionId":"q","type":"user","message":{"role":"user","parts":"hi"}}`,
	}
	want := map[string]string{
		"claude":        "claude.jsonl:2: message.usage.input_tokens: want a whole number, got \"ten\"",
		"claude-cached": "claude-cached.jsonl:2: message.usage.reasoning: 2 reasoning tokens exceed the output's 1",
		"codex":         "codex.jsonl:2: payload.name: missing",
		"codex-usage":   "codex-usage.jsonl:3: payload.info.last_token_usage.cached: 6 cached tokens exceed the input's 5",
		"qwen":          "qwen.jsonl:2: want a JSON object, got not json",
		"claude-cut":    "claude-cut.jsonl:2: invalid JSON at byte 86: unterminated string",
		"qwen-message":  "qwen-message.jsonl:1: message.parts: want an array, got JSON string",
	}
	dir := t.TempDir()
	for name, body := range cases {
		p := filepath.Join(dir, name+".jsonl")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := readAll(t, nil, p)
		if err == nil || err.Error() != filepath.Join(dir, want[name]) {
			t.Errorf("%s: error %v, want %s", name, err, filepath.Join(dir, want[name]))
		}
	}
}

// ccusage runs `ccusage <agent> session --json --offline` with home as
// HOME and returns its sessions.
func ccusage(t *testing.T, agent agenttest.Agent, home string) []ccusageSession {
	t.Helper()
	bin := agenttest.Binary("ccusage")
	if _, err := os.Stat(bin); err != nil {
		testenv.Need(t, "ccusage", fmt.Errorf("%w (make agents)", err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, string(agent), "session", "--json", "--offline")
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TZ=UTC"}
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("ccusage %s: %v\n%s", agent, err, ee.Stderr)
	} else if err != nil {
		t.Fatalf("ccusage %s: %v", agent, err)
	}
	var r struct {
		Sessions []ccusageSession `json:"sessions"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("ccusage %s: %v\n%s", agent, err, out)
	}
	return r.Sessions
}

type ccusageSession struct {
	SessionID   string `json:"sessionId"`
	SessionFile string `json:"sessionFile"`
	Input       int64  `json:"inputTokens"`
	Output      int64  `json:"outputTokens"`
	CacheRead   int64  `json:"cacheReadTokens"`
	CacheCreate int64  `json:"cacheCreationTokens"`
	Reasoning   int64  `json:"reasoningOutputTokens"`
	Total       int64  `json:"totalTokens"`
}

// sums adds a trajectory's per-call usage.
func sums(tr Trajectory) (in, out, cached, reasoning int64) {
	for _, a := range tr.API {
		in, out, cached = in+a.Input, out+a.Output, cached+a.Cached
		if a.Reasoning != nil {
			reasoning += *a.Reasoning
		}
	}
	return
}

// agreeWithCCUsage checks every trajectory against ccusage's session of the
// same id. For Claude Code and Codex ccusage's inputTokens exclude the
// cache reads (and, for Claude Code, the cache writes), so the whole
// requests are their sum; for Qwen Code its inputTokens are already whole
// and its total adds the cache reads and the thoughts a second time.
func agreeWithCCUsage(t *testing.T, agent agenttest.Agent, ts []Trajectory, cc []ccusageSession) {
	t.Helper()
	if len(cc) != len(ts) {
		t.Errorf("%s: ccusage reports %d sessions, we read %d", agent, len(cc), len(ts))
	}
	for _, tr := range ts {
		var s *ccusageSession
		for i := range cc {
			if cc[i].SessionID == tr.ID || (agent == agenttest.Codex && strings.HasSuffix(cc[i].SessionFile, tr.ID)) {
				s = &cc[i]
			}
		}
		if s == nil {
			t.Errorf("%s %s: no ccusage session", agent, tr.ID)
			continue
		}
		in, out, cached, reasoning := sums(tr)
		got := [4]int64{in, out, cached, s.Total}
		var want [4]int64
		switch agent {
		case agenttest.Claude:
			want = [4]int64{s.Input + s.CacheRead + s.CacheCreate, s.Output, s.CacheRead, in + out}
		case agenttest.Codex:
			want = [4]int64{s.Input + s.CacheRead, s.Output, s.CacheRead, in + out}
			if reasoning != s.Reasoning {
				t.Errorf("codex %s: reasoning %d, ccusage %d", tr.ID, reasoning, s.Reasoning)
			}
		case agenttest.Qwen:
			want = [4]int64{s.Input, s.Output, s.CacheRead, in + out + cached + reasoning}
		}
		if got != want {
			t.Errorf("%s %s: input, output, cached, ccusage total = %v, want %v (ccusage %+v)", agent, tr.ID, got, want, *s)
		}
	}
}

// homeLayout is where each CLI keeps its sessions under HOME, and where
// they sit in testdata/sessions.
var homeLayout = map[agenttest.Agent][2]string{
	agenttest.Claude: {".claude/projects", "claude/projects"},
	agenttest.Codex:  {".codex/sessions", "codex/sessions"},
	agenttest.Qwen:   {".qwen/projects", "qwen/projects"},
}

// TestSessionsAgreeWithCCUsage: the per-session sums of the generated
// sessions equal what ccusage reports from the same files.
func TestSessionsAgreeWithCCUsage(t *testing.T) {
	for _, agent := range []agenttest.Agent{agenttest.Claude, agenttest.Codex, agenttest.Qwen} {
		t.Run(string(agent), func(t *testing.T) {
			home := t.TempDir()
			l := homeLayout[agent]
			copyTree(t, l[1], filepath.Join(home, l[0]))
			ts := mustReadAll(t, nil, filepath.Join(home, l[0]))
			agreeWithCCUsage(t, agent, ts, ccusage(t, agent, home))
		})
	}
}

// TestSessionsLive makes fresh sessions with each real CLI against the
// stand-in and reads them: the turns carry the usage the stand-in
// reported, and the sums agree with ccusage.
func TestSessionsLive(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the agent CLIs")
	}
	for _, agent := range []agenttest.Agent{agenttest.Claude, agenttest.Codex, agenttest.Qwen} {
		t.Run(string(agent), func(t *testing.T) {
			t.Parallel()
			script := agenttest.Scripts["three-calls"]
			m := agenttest.StartModel(t, script)
			res := agenttest.Run(t, agenttest.CLI{Agent: agent, BaseURL: m.URL, Prompt: agenttest.Prompts["three-calls"]})
			if res.ExitCode != 0 {
				t.Fatalf("exit %d\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
			}
			// The CLI's own directory (~/.claude, ~/.codex, ~/.qwen), with its
			// settings, plugin stores and usage logs: only sessions are read.
			own := filepath.Join(res.Home, strings.Split(homeLayout[agent][0], "/")[0])
			ts := mustReadAll(t, nil, own)
			if len(ts) != 1 {
				t.Fatalf("%d sessions, want 1", len(ts))
			}
			var reported []agenttest.Usage
			for _, c := range m.MainCalls() {
				reported = append(reported, c.Answer.Usage)
			}
			if diff := cmp.Diff(apiOf(reported), ts[0].API); diff != "" {
				t.Errorf("usage per turn (-stand-in +read):\n%s", diff)
			}
			if diff := cmp.Diff(apiOf(script.Usages()), ts[0].API); diff != "" {
				t.Errorf("usage per turn (-script +read):\n%s", diff)
			}
			agreeWithCCUsage(t, agent, ts, ccusage(t, agent, res.Home))
		})
	}
}

// TestSessionTooLarge: a session log longer than 32 × the message limit
// is an error naming the file, not a partial read.
func TestSessionTooLarge(t *testing.T) {
	path := filepath.Join("testdata/sessions", loadGenerated(t)[0].File)
	_, err := readAll(t, &Options{MaxMessageBytes: 1024}, path)
	want := path + ": over the size limit: session log longer than 32768 bytes (32 × the message limit)"
	if err == nil || err.Error() != want || !errors.Is(err, ErrTooLarge) {
		t.Errorf("error %v, want %s", err, want)
	}
}
