package probes

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/rollout"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", name, diff)
	}
}

func renderTrajectory() (rollout.Trajectory, Accounting) {
	traj := rollout.Trajectory{Messages: []rollout.Message{
		{Role: "user", Content: "Grid 0"},
		{Role: "assistant", Content: "<answer>Up</answer>"},
		{Role: "user", Content: "Grid 1 (reward: -0.1)"},
		{Role: "assistant", Content: "<answer>Left || Down</answer>"},
		{Role: "user", Content: "Grid 2 (reward: -0.1)"},
		{Role: "assistant", Content: "<answer>Right</answer>"},
	}}
	acc := Accounting{Pairs: [][2]int{{0, 1}, {2, 3}, {4, 5}}, Turns: threeTurns.Turns, TrailingAt: -1}
	return traj, acc
}

func TestRenderFirstProbeJoinsUserZero(t *testing.T) {
	traj, acc := renderTrajectory()
	task := Tasks["sokoban"]
	got := task.Render(traj, acc, Probe{After: 0}, 2500, false)
	if len(got) != 2 || got[0].Role != "system" || got[1].Role != "user" {
		t.Fatalf("p=0 roles: got %+v, want system, user", got)
	}
	if got[0].Content != task.System {
		t.Errorf("system prompt is not the preset's")
	}
	if !strings.HasPrefix(got[1].Content, "Grid 0\n\nBased on the provided rollout context") {
		t.Errorf("p=0 user content starts %q, want user_0, a blank line, then the probe", got[1].Content[:40])
	}
	golden(t, "sokoban_p0.golden", got[1].Content)
}

func TestRenderLaterProbeIsANewUserMessage(t *testing.T) {
	traj, acc := renderTrajectory()
	got := Tasks["sokoban"].Render(traj, acc, Probe{After: 2}, 2500, false)
	var roles []string
	for _, m := range got {
		roles = append(roles, m.Role)
	}
	if diff := cmp.Diff([]string{"system", "user", "assistant", "user", "assistant", "user"}, roles); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	if got[3].Content != "Grid 1" {
		t.Errorf("user_1 shown as %q, want the reward annotation stripped", got[3].Content)
	}
	golden(t, "sokoban_p2.golden", got[5].Content)
}

func TestProbeTextThinkSpecs(t *testing.T) {
	tests := []struct{ task, wantSuffix string }{
		{"sokoban", "<think>[YOUR THINKING]</think><answer>[est_low, est_high]</answer>\nor\n<think>[YOUR THINKING]</think><answer>impossible</answer>"},
		{"swebench", "<think> [YOUR THINKING] </think><answer>[est_low, est_high]</answer>\nor\n<think> [YOUR THINKING] </think><answer>impossible</answer>"},
	}
	for _, tt := range tests {
		got := Tasks[tt.task].ProbeText(threeTurns.Turns, 1, 160000, true)
		if !strings.HasSuffix(got, tt.wantSuffix) {
			t.Errorf("%s think spec: got ...%q", tt.task, got[len(got)-120:])
		}
	}
	golden(t, "searchr1_p1.golden", Tasks["searchr1"].ProbeText(threeTurns.Turns, 1, 3500, false))
	golden(t, "swebench_p1.golden", Tasks["swebench"].ProbeText(threeTurns.Turns, 1, 160000, true))
}

func TestAnswer(t *testing.T) {
	w, _ := ParseWidth("pct30")
	tests := []struct {
		name  string
		p     Probe
		think bool
		want  string
	}{
		{"possible", Probe{After: 1, Used: 18, Remaining: 90, Possible: true}, false, "<answer>[62, 117]</answer>"},
		{"impossible", Probe{After: 1, Used: 18, Remaining: 90}, false, "<answer>impossible</answer>"},
		{"possible think", Probe{After: 1, Used: 18, Remaining: 90, Possible: true}, true,
			"<think>I have completed 1 turns and used 18 of 2500 tokens. The remaining turns should need about 90 more tokens, which fits the budget.</think><answer>[62, 117]</answer>"},
		{"impossible think", Probe{After: 0, Used: 15, Remaining: 90}, true,
			"<think>I have completed 0 turns and used 15 of 2500 tokens. The task will not finish successfully within the budget.</think><answer>impossible</answer>"},
		{"nothing left", Probe{After: 3, Used: 27, Remaining: 0, Possible: true}, false, "<answer>[0, 0]</answer>"},
		{"nothing left think", Probe{After: 3, Used: 27, Remaining: 0, Possible: true}, true,
			"<think>All 3 turns completed using 27 tokens. The task is finished.</think><answer>[0, 0]</answer>"},
	}
	for _, tt := range tests {
		if got := Answer(tt.p, w, 2500, tt.think); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestLookupTask(t *testing.T) {
	_, err := LookupTask("chess")
	if want := `task "chess": want one of searchr1, sokoban, swebench, warehouse`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestReadSystemFileStrips pins the reference script's f.read().strip():
// surrounding white space and CRLF line ends go, inner ones stay.
func TestReadSystemFileStrips(t *testing.T) {
	tests := []struct{ name, file, want string }{
		{"final newline", "You are an agent.\n", "You are an agent."},
		{"crlf and indentation", "\r\n  You are an agent.\r\nBe brief.\r\n\r\n", "You are an agent.\r\nBe brief."},
		{"unicode and separator space", "\u3000\x1fYou are an agent.\u00a0\t", "You are an agent."},
		{"only space", " \n\t", ""},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "system.txt")
		if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadSystemFile(path)
		if err != nil || got != tt.want {
			t.Errorf("%s: ReadSystemFile(%q) = %q, %v; want %q", tt.name, tt.file, got, err, tt.want)
		}
	}
}

// TestProbeTextMatchesReferenceTemplates compares the Sokoban probe text
// with the reference script's _build_probe_template output for both target
// modes, with and without <think> (testdata/bagen-v1/template.py writes
// the expected files from the authors' script).
func TestProbeTextMatchesReferenceTemplates(t *testing.T) {
	for _, tt := range []struct {
		width, file string
		think       bool
	}{
		{"point", "template_point.txt", false},
		{"point", "template_point_think.txt", true},
		{"pct10", "template_interval.txt", false},
		{"fix100", "template_interval_think.txt", true},
	} {
		w, err := ParseWidth(tt.width)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("testdata", "bagen-v1", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		got := Tasks["sokoban"].ForWidth(w).ProbeText(threeTurns.Turns, 1, 2500, tt.think)
		if diff := cmp.Diff(string(want), got); diff != "" {
			t.Errorf("%s think=%v differs from %s (-want +got):\n%s", tt.width, tt.think, tt.file, diff)
		}
	}
	// The other presets ask for a number too.
	point, _ := ParseWidth("point")
	for _, name := range []string{"searchr1", "swebench", "warehouse"} {
		got := Tasks[name].ForWidth(point).ProbeText(threeTurns.Turns, 1, 2500, false)
		if strings.Contains(got, "interval") || strings.Contains(got, "est_low") || !strings.Contains(got, "Return a single integer estimate.") || !strings.HasSuffix(got, "<answer>NUMBER</answer>\nor\n<answer>impossible</answer>") {
			t.Errorf("%s point prompt still asks for an interval:\n%s", name, got)
		}
	}
}
