// Package examples holds the trainer recipes (shell scripts and Python
// reward functions); its test calls each reward function and server route
// the way its trainer calls it.
package examples

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"bagen-data/internal/testenv"

	"github.com/prometheus/client_golang/prometheus"

	"bagen-data/cli"
	"bagen-data/dataset"
	"bagen-data/reward"
	"bagen-data/reward/server"
)

// responses are the answers scored for every row: its own ground truth
// (full coverage, reward 1.8 × tightness), with a <think> block, the other
// class, a wide interval and no answer.
func responses(row dataset.RLRow) []string {
	gt := "<answer>" + row.RewardModel.GroundTruth + "</answer>"
	return []string{
		gt,
		"<think>Three turns left at about 300 tokens each.</think>" + gt,
		"<answer>impossible</answer>",
		"<answer>[1, 100000]</answer>",
		"I cannot tell.",
	}
}

// TestTrainerCalls builds the embedded Sokoban fixtures, starts the reward
// server on loopback and runs testdata/trainer_calls.py: verl's reward loop
// and batch manager, TRL's GRPOTrainer, OpenRLHF's and slime's clients,
// each calling as the trainer code named in the examples' headers does,
// on 40 RL rows (20 possible, 20 impossible), five responses each. Every
// reward must be the rule reward (reward.Train) of the row's label.
func TestTrainerCalls(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		testenv.Need(t, "python3", err)
	}
	out := filepath.Join(t.TempDir(), "out")
	app := cli.App()
	app.Writer, app.ErrWriter = io.Discard, io.Discard
	if err := app.Run(t.Context(), []string{"bagen-data", "build", "--out", out}); err != nil {
		t.Fatalf("build: %v", err)
	}
	rows, err := dataset.ReadRL(filepath.Join(out, filepath.FromSlash(dataset.RLFile)))
	if err != nil {
		t.Fatal(err)
	}

	type call struct {
		dataset.RLRow
		Responses []string  `json:"responses"`
		Rewards   []float64 `json:"rewards"`
	}
	var cases []call
	seen := map[string]bool{}
	var possible, impossible, positive int
	for _, row := range rows {
		x := row.ExtraInfo
		if seen[x.CustomID] || (x.IsPossible && possible == 20) || (!x.IsPossible && impossible == 20) {
			continue
		}
		seen[x.CustomID] = true
		if x.IsPossible {
			possible++
		} else {
			impossible++
		}
		target, err := reward.ParseTarget(row.Label)
		if err != nil {
			t.Fatalf("%s: label %q: %v", x.CustomID, row.Label, err)
		}
		c := call{RLRow: row, Responses: responses(row)}
		for _, r := range c.Responses {
			got := target.Judge(reward.Train, r).Reward
			c.Rewards = append(c.Rewards, got)
			if got > 0 {
				positive++
			}
		}
		cases = append(cases, c)
	}
	if possible != 20 || impossible != 20 || positive < 40 {
		t.Fatalf("%d possible and %d impossible rows, %d positive rewards: the test proves little", possible, impossible, positive)
	}
	data, err := json.Marshal(map[string]any{"rows": cases})
	if err != nil {
		t.Fatal(err)
	}
	casesPath := filepath.Join(t.TempDir(), "cases.json")
	if err := os.WriteFile(casesPath, data, 0o644); err != nil {
		t.Fatal(err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- server.Serve(ctx, ln, server.Config{Registry: prometheus.NewRegistry()}) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	}()

	cmd := exec.Command(py, filepath.Join("testdata", "trainer_calls.py"), casesPath)
	cmd.Env = append(os.Environ(), "BAGEN_REWARD_URL=http://"+ln.Addr().String())
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("trainer_calls.py: %v\n%s", err, got)
	}
	want := strings.Join([]string{
		"verl compute_score (reward loop, naive manager): 200 calls",
		"verl compute_score_batch (batch manager): 1 call, 200 rewards",
		"TRL bagen_reward (GRPOTrainer): 1 call, 200 rewards",
		"OpenRLHF /get_reward: 200 requests",
		"slime /slime: 200 requests",
	}, "\n") + "\n"
	if string(got) != want {
		t.Errorf("trainer_calls.py printed\n%s\nwant\n%s", got, want)
	}
}
