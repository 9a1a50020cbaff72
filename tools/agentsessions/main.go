// Command agentsessions makes the session logs rollout's tests read: it
// runs Claude Code, Codex and Qwen Code (installed by `make agents`)
// headless on each of agenttest.Scripts against the scripted stand-in for
// the model, and copies every session log into -out, with Qwen Code's
// usage log beside its sessions, and writes the usage the stand-in
// reported for each call of each session to -out + "-calls.json".
//
//	go run ./tools/agentsessions -out rollout/testdata/sessions
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"bagen-data/internal/agenttest"
)

// logDirs are where each CLI keeps its sessions under HOME, and the name
// they get under -out.
var logDirs = map[agenttest.Agent][2]string{
	agenttest.Claude: {".claude/projects", "claude/projects"},
	agenttest.Codex:  {".codex/sessions", "codex/sessions"},
	agenttest.Qwen:   {".qwen/projects", "qwen/projects"},
}

// Session is one generated log and the stand-in's record of its calls.
type Session struct {
	Agent  agenttest.Agent   `json:"agent"`
	Script string            `json:"script"`
	File   string            `json:"file"`  // relative to -out
	Calls  []agenttest.Usage `json:"calls"` // the usage reported for each main call, in order
	Format []string          `json:"formats"`
}

func main() {
	out := flag.String("out", "rollout/testdata/sessions", "output `DIR`")
	home := flag.String("home", filepath.Join(os.TempDir(), "bagen-agentsessions"), "parent `DIR` of the runs' HOMEs (wiped)")
	flag.Parse()
	if err := run(*out, *home); err != nil {
		fmt.Fprintln(os.Stderr, "agentsessions:", err)
		os.Exit(1)
	}
}

func run(out, homes string) error {
	for _, d := range []string{homes, filepath.Join(out, "claude"), filepath.Join(out, "codex"), filepath.Join(out, "qwen")} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	var sessions []Session
	names := make([]string, 0, len(agenttest.Scripts))
	for n := range agenttest.Scripts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, a := range []agenttest.Agent{agenttest.Claude, agenttest.Codex, agenttest.Qwen} {
		for _, name := range names {
			s, err := generate(a, name, filepath.Join(homes, string(a)+"-"+name), out)
			if err != nil {
				return fmt.Errorf("%s %s: %w", a, name, err)
			}
			sessions = append(sessions, s)
			fmt.Printf("%s %s: %s (%d calls)\n", a, name, s.File, len(s.Calls))
		}
	}
	b, err := json.MarshalIndent(sessions, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Clean(out)+"-calls.json", append(b, '\n'), 0o644)
}

func generate(a agenttest.Agent, name, home, out string) (Session, error) {
	m, err := agenttest.NewModel(agenttest.Scripts[name])
	if err != nil {
		return Session{}, err
	}
	defer m.Close()
	res, err := agenttest.CLI{Agent: a, BaseURL: m.URL, Prompt: agenttest.Prompts[name], Home: home}.Run(context.Background())
	if err != nil {
		return Session{}, err
	}
	if res.ExitCode != 0 {
		return Session{}, fmt.Errorf("exit %d\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	s := Session{Agent: a, Script: name}
	for _, c := range m.MainCalls() {
		s.Calls = append(s.Calls, c.Answer.Usage)
		s.Format = append(s.Format, c.Format)
	}
	dirs := logDirs[a]
	src := filepath.Join(home, dirs[0])
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(out, dirs[1], rel)
		if s.File != "" {
			return fmt.Errorf("more than one session log: %s and %s", s.File, p)
		}
		s.File = filepath.ToSlash(filepath.Join(dirs[1], rel))
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err == nil && s.File == "" {
		err = fmt.Errorf("no session log under %s", src)
	}
	if err == nil && a == agenttest.Qwen {
		err = appendFile(filepath.Join(out, "qwen", "usage_record.jsonl"), filepath.Join(home, ".qwen", "usage_record.jsonl"))
	}
	return s, err
}

// appendFile appends src to dst: Qwen Code's usage log, which is not a
// session and must be skipped beside them.
func appendFile(dst, src string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
