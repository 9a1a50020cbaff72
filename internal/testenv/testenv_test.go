package testenv

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestNeed runs a test that needs a missing component in a child process,
// once as CI and once not, and reads its verdict.
func TestNeed(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") != "" {
		Need(t, "widget", errors.New("not installed"))
		t.Log("reached the end")
		return
	}
	for _, c := range []struct {
		name, ci, want string
		fails          bool
	}{
		{"outside CI", "", "--- SKIP: TestNeed", false},
		{"CI false", "false", "--- SKIP: TestNeed", false},
		{"CI", "true", "--- FAIL: TestNeed", true},
		{"CI 1", "1", "--- FAIL: TestNeed", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestNeed$", "-test.v")
			cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", "CI="+c.ci)
			out, err := cmd.CombinedOutput()
			if (err != nil) != c.fails {
				t.Fatalf("exit error %v, want failure %v:\n%s", err, c.fails, out)
			}
			if !strings.Contains(string(out), c.want) || !strings.Contains(string(out), "missing widget: not installed") {
				t.Fatalf("got\n%s\nwant %q and the reason", out, c.want)
			}
			if strings.Contains(string(out), "reached the end") {
				t.Fatalf("the test went on past Need:\n%s", out)
			}
		})
	}
}

func TestNeedNil(t *testing.T) {
	Need(t, "widget", nil)
}
