package guard

import (
	"strings"
	"testing"
	"time"

	"bagen-data/internal/agenttest"
	"bagen-data/internal/testenv"
)

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestAgentsLoopGate: a model that asks for the same command again and
// again is stopped by --loop 3 after its third call, and each CLI ends
// its run there.
func TestAgentsLoopGate(t *testing.T) {
	same := agenttest.Answer{Command: "echo again", Usage: agenttest.Usage{Input: 1000, Output: 20}}
	script := agenttest.Script{Answers: []agenttest.Answer{same, same, same, same, same, {Text: "Done.", Usage: agenttest.Usage{Input: 1100, Output: 5}}}}
	for _, agent := range agents {
		t.Run(string(agent), func(t *testing.T) {
			testenv.Need(t, string(agent), agenttest.Available(agent))
			r := startGuardRun(t, script, Config{Policy: Stop, Loop: 3})
			start := time.Now()
			res := agenttest.Run(t, agenttest.CLI{Agent: agent, BaseURL: r.url, Prompt: "Run echo again until it says something else.", Timeout: 2 * time.Minute})
			if res.ExitCode != 0 {
				t.Fatalf("%s exited %d after %v\nstdout:\n%s\nstderr:\n%s", agent, res.ExitCode, time.Since(start), res.Stdout, res.Stderr)
			}
			r.close()
			if n := len(r.model.MainCalls()); n != 3 {
				t.Errorf("stand-in saw %d main calls, want 3", n)
			}
			tr := mainRun(t, r.trajectories(t), 3)
			if tr.Extra.Guard == nil || tr.Extra.Guard.StoppedAfterTurn == nil || *tr.Extra.Guard.StoppedAfterTurn != 3 {
				t.Errorf("metadata.guard %+v, want stopped after turn 3", tr.Extra.Guard)
			}
			if !strings.Contains(r.logs.String(), "stop decided after turn 3: it made the same tool call 3 times in a row") {
				t.Errorf("the guard's log lacks the loop stop:\n%s", r.logs)
			}
			t.Logf("%s stopped by the loop gate after 3 calls in %v", agent, time.Since(start).Round(time.Millisecond))
		})
	}
}

// TestAgentsSubagent: Claude Code's subagent, started by its Agent tool,
// calls with the parent's session id and its own agent id; the guard
// keeps it as a child session of its own (its own ledger file, naming
// the parent, with exactly the stand-in's subagent usage) whose tokens
// count toward the parent's: the subagent's two turns are 500 + 20 and
// then 80 more input + 8, 608 by the replay accounting.
func TestAgentsSubagent(t *testing.T) {
	testenv.Need(t, string(agenttest.Claude), agenttest.Available(agenttest.Claude))
	script := agenttest.Script{
		Answers: []agenttest.Answer{
			{Tool: "Agent", Input: map[string]any{"description": "Echo in a subagent", "prompt": "Run echo sub and report what it printed.", "subagent_type": "general-purpose"},
				Usage: agenttest.Usage{Input: 1000, Output: 40}},
			{Text: "The subagent printed sub.", Usage: agenttest.Usage{Input: 1200, Output: 10}},
		},
		Sub: []agenttest.Answer{
			{Command: "echo sub", Usage: agenttest.Usage{Input: 500, Output: 20}},
			{Text: "It printed sub.", Usage: agenttest.Usage{Input: 600, Output: 8}},
		},
	}
	r := startGuardRun(t, script, Config{Policy: Log, Budget: 100_000})
	res := agenttest.Run(t, agenttest.CLI{Agent: agenttest.Claude, BaseURL: r.url, Prompt: "Use a subagent to run echo sub."})
	if res.ExitCode != 0 {
		t.Fatalf("claude exited %d\n%s", res.ExitCode, res.Stderr)
	}
	r.close()
	var sub []agenttest.Call
	for _, c := range r.model.Calls() {
		if c.Header.Get("X-Claude-Code-Agent-Id") != "" {
			sub = append(sub, c)
		}
	}
	if len(sub) != len(script.Sub) {
		t.Fatalf("the stand-in saw %d subagent calls, want %d", len(sub), len(script.Sub))
	}
	child, parent := heldChild(r.guard)
	if child == nil || parent == nil || child.Parent != parent.ID {
		t.Fatalf("no child session with its parent held (child %v)", child)
	}
	if child.spent != 608 || parent.pol.childSpent != 608 {
		t.Errorf("child spent %d, parent counts %d of its children's; want 608 and 608", child.spent, parent.pol.childSpent)
	}
	if evs := readLedger(t, r.ledger)[child.ID+".jsonl"]; len(evs) == 0 || evs[0]["parent"] != parent.ID {
		t.Errorf("the child's ledger file starts %v, want a session event naming parent %s", evs, parent.ID)
	}
	var found bool
	for _, tr := range r.trajectories(t) {
		if len(tr.API) == 2 && tr.API[0].Input == 500 && tr.API[1].Input == 600 {
			found = true
		}
		for _, a := range tr.API {
			if (a.Input == 500 || a.Input == 600) && len(tr.API) != 2 {
				t.Errorf("a subagent call is in a trajectory of %d turns: %+v", len(tr.API), tr.API)
			}
		}
	}
	if !found {
		t.Errorf("no trajectory holds the subagent's two turns alone")
	}
}

// heldChild is a child session g holds, and its family's top session.
func heldChild(g *Guard) (child, parent *Session) {
	g.sessions.mu.Lock()
	defer g.sessions.mu.Unlock()
	for e := g.sessions.lru.Front(); e != nil; e = e.Next() {
		if s := e.Value.(*Session); s.Parent != "" {
			child = s
		}
	}
	if child != nil {
		parent = child.root
	}
	return child, parent
}
