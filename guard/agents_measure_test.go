//go:build measure

// The measurements and captures here are not tests of the guard: they run
// the real CLIs for the README's tables and the codec tests' inputs.
//
//	go test -tags measure -run 'TestAgentsStopModes|TestCaptureRequests' ./guard/

package guard

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"bagen-data/internal/agenttest"
	"bagen-data/internal/testenv"
)

// TestAgentsStopModes measures what each CLI does with each way of
// stopping it (the README's agent × mode table): its exit status, how
// long it took, and how many requests reached the guard after the stop.
// The guard's part is asserted (no call after the stop reaches the
// stand-in); the CLI's is logged.
//
// It takes two minutes of CLI runs.
func TestAgentsStopModes(t *testing.T) {
	script := agenttest.Scripts["three-calls"]
	for _, agent := range agents {
		for _, mode := range []StopAs{Message, ContextLimit} {
			t.Run(string(agent)+"/"+mode.String(), func(t *testing.T) {
				testenv.Need(t, string(agent), agenttest.Available(agent))
				est, _ := estimatorServer(t, func(n int) string {
					if n >= 2 {
						return "<answer>impossible</answer>"
					}
					return "<answer>[1000, 3000]</answer>"
				})
				r := startGuardRun(t, script, Config{Policy: Stop, StopAs: mode, Budget: 100_000, Wait: true, Estimator: estimatorFor(est.URL)})
				start := time.Now()
				res := agenttest.Run(t, agenttest.CLI{Agent: agent, BaseURL: r.url, Prompt: agenttest.Prompts["three-calls"], Timeout: 2 * time.Minute})
				took := time.Since(start)
				r.close()
				if n := len(r.model.MainCalls()); n != 2 {
					t.Errorf("stand-in saw %d main calls, want 2", n)
				}
				after := 0
				filepath.WalkDir(r.ledger, func(path string, d fs.DirEntry, err error) error {
					if err == nil && !d.IsDir() {
						data, _ := os.ReadFile(path)
						after += bytes.Count(data, []byte(`"answered_by_guard"`))
					}
					return nil
				})
				t.Logf("TABLE %s | %s | exit %d | %v | %d requests answered by the guard", agent, mode, res.ExitCode, took.Round(100*time.Millisecond), after)
			})
		}
	}
}

// TestCaptureRequests writes the real CLIs' second main request (a history
// with a tool call and its result) to testdata/requests, for the codec
// tests.
func TestCaptureRequests(t *testing.T) {
	for _, agent := range agents {
		r := startGuardRun(t, agenttest.Scripts["two-calls"], Config{})
		agenttest.Run(t, agenttest.CLI{Agent: agent, BaseURL: r.url, Prompt: agenttest.Prompts["two-calls"]})
		r.close()
		main := r.model.MainCalls()
		if len(main) < 2 {
			t.Fatalf("%s: %d main calls", agent, len(main))
		}
		os.MkdirAll("testdata/requests", 0o755)
		if err := os.WriteFile(filepath.Join("testdata/requests", string(agent)+".json"), main[1].Body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
