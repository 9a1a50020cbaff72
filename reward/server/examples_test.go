package server

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"bagen-data/internal/testenv"
)

// The Python examples in examples/ run against a real server here, called
// the way their frameworks call them.

const loadModule = `
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("example", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
`

func python(t *testing.T, url string, args ...string) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		testenv.Need(t, "python3", err)
	}
	cmd := exec.Command(py, args...)
	cmd.Env = append(os.Environ(), "BAGEN_REWARD_URL="+url)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 %s: %v\n%s", args[0], err, out)
	}
	return strings.TrimSpace(string(out))
}

func example(t *testing.T, path string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "examples", path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVerlExample(t *testing.T) {
	s := start(t, Config{})
	driver := loadModule + `
print(json.dumps(m.compute_score_batch(
    data_sources=["budget_probe_sokoban"] * 3,
    solution_strs=["<answer>[140, 160]</answer>", "<answer>impossible</answer>", "<answer>[1, 2]</answer>"],
    ground_truths=["[135, 165]", "impossible", "[90, 110]"],
    extra_infos=[{"remaining_tokens": 150, "is_possible": True},
                 {"remaining_tokens": 0, "is_possible": False},
                 {"remaining_tokens": 100, "is_possible": True}])))
`
	got := python(t, s.url, "-c", driver, example(t, "verl/bagen_reward.py"))
	if want := "[1.56, 0.2, 0.0]"; got != want {
		t.Fatalf("verl compute_score_batch = %s, want %s", got, want)
	}
}

func TestTRLExample(t *testing.T) {
	s := start(t, Config{})
	driver := loadModule + `
print(json.dumps(m.bagen_reward(
    prompts=["p", "p", "p"],
    completions=["<answer>[140, 160]</answer>",
                 [{"role": "assistant", "content": "<answer>impossible</answer>"}],
                 "<answer>150</answer>"],
    label=['{"remaining_tokens":150,"is_possible":true,"ground_truth":"[135, 165]"}', "impossible", "150"])))
`
	got := python(t, s.url, "-c", driver, example(t, "trl/bagen_reward.py"))
	if want := "[1.56, 0.2, 0.0]"; got != want {
		t.Fatalf("TRL reward = %s, want %s", got, want)
	}
}

func TestOpenRLHFExample(t *testing.T) {
	s := start(t, Config{})
	got := python(t, s.url, example(t, "openrlhf/check_remote_rm.py"), s.url+"/get_reward")
	want := `{"extra_logs": {"covered": [1, 0, 0], "interval": [1, 0, 0], "pred_class": [1, 2, 1], "truth_possible": [1, 0, 1]}, "rewards": [1.56, 0.2, 0]}`
	if got != want {
		t.Fatalf("check_remote_rm.py = %s\nwant %s", got, want)
	}
}

func TestExampleReportsServerErrors(t *testing.T) {
	s := start(t, Config{})
	driver := loadModule + `
try:
    m.compute_score(data_source="budget_probe_sokoban", solution_str="r", ground_truth="g",
                    extra_info={"remaining_tokens": -1, "is_possible": True})
except RuntimeError as e:
    print(e)
`
	got := python(t, s.url, "-c", driver, example(t, "verl/bagen_reward.py"))
	if want := `bagen reward server: 400: {"error":"items[0].remaining_tokens: want a non-negative integer, got -1"}`; got != want {
		t.Fatalf("error = %s, want %s", got, want)
	}
}
