package guard

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"bagen-data/internal/agenttest"
	"bagen-data/internal/testenv"
)

// TestAgentsThresholds: a threshold crossed reaches each CLI's model in
// the CLI's own request format, once. Under two-calls the accounting has
// spent 1200 + 30 = 1230 tokens after turn 1 (the stand-in's first
// usage): 82% of a 1500-token budget, past the 80% threshold and short
// of 90% until turn 2 adds 70 + 20 (1320, 88%).
func TestAgentsThresholds(t *testing.T) {
	script := agenttest.Scripts["two-calls"]
	for _, agent := range agents {
		t.Run(string(agent), func(t *testing.T) {
			testenv.Need(t, string(agent), agenttest.Available(agent))
			r := startGuardRun(t, script, Config{Policy: Warn, Budget: 1500})
			res := agenttest.Run(t, agenttest.CLI{Agent: agent, BaseURL: r.url, Prompt: agenttest.Prompts["two-calls"]})
			if res.ExitCode != 0 {
				t.Fatalf("%s exited %d\n%s", agent, res.ExitCode, res.Stderr)
			}
			r.close()
			main := r.model.MainCalls()
			if len(main) != len(script.Answers) {
				t.Fatalf("stand-in saw %d main calls, want %d", len(main), len(script.Answers))
			}
			note := []byte("[budget alert] After turn 1 you have used 80% of your budget: 1230 of 1500 tokens.")
			for i, c := range main {
				if got := bytes.Count(c.Body, note); got != btoi(i == 1) {
					t.Errorf("main call %d carries the 80%% note %d times, want %d", i+1, got, btoi(i == 1))
				}
				if bytes.Contains(c.Body, []byte("90% of your budget")) {
					t.Errorf("main call %d carries a 90%% note", i+1)
				}
			}
			tr := mainRun(t, r.trajectories(t), len(main))
			if tr.Guard == nil || tr.Guard.StoppedAfterTurn != nil {
				t.Errorf("metadata.guard %+v, want not stopped", tr.Guard)
			}
		})
	}
}

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
			if tr.Guard == nil || tr.Guard.StoppedAfterTurn == nil || *tr.Guard.StoppedAfterTurn != 3 {
				t.Errorf("metadata.guard %+v, want stopped after turn 3", tr.Guard)
			}
			if !strings.Contains(r.logs.String(), "stop decided after turn 3: it made the same tool call 3 times in a row") {
				t.Errorf("the guard's log lacks the loop stop:\n%s", r.logs)
			}
			t.Logf("%s stopped by the loop gate after 3 calls in %v", agent, time.Since(start).Round(time.Millisecond))
		})
	}
}
