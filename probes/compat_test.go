package probes

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/rollout"
)

// TestBenchBagenV1MatchesReference compares every SWE-bench probe of
// TokenBench under BagenV1Compat with what the authors' TokenEstimationEnv
// builds from the same dialogues (testdata/bagen-v1/bench.py wrote
// bench.json from bench_input.json): the API messages (source or shipped
// system prompt, raw history, shipped user prompt), the per-turn usage
// without history and the labels.
func TestBenchBagenV1MatchesReference(t *testing.T) {
	var in []struct {
		Success bool `json:"rollout_success"`
		Turns   []struct {
			User     string `json:"user_prompt"`
			Parsed   string `json:"parsed_response"`
			Input    int64  `json:"api_input_tokens"`
			Output   int64  `json:"api_output_tokens"`
			Messages []struct{ Role, Content string }
		} `json:"turns"`
	}
	readJSON(t, "testdata/bagen-v1/bench_input.json", &in)
	var ref struct {
		Budget  int64 `json:"budget"`
		Samples []struct {
			Rollout, After  int
			Used, Remaining int64
			Possible        bool
			Usage           []struct {
				In  int64 `json:"input_tokens"`
				Out int64 `json:"output_tokens"`
			}
			Messages []rollout.Message
		} `json:"samples"`
	}
	readJSON(t, "testdata/bagen-v1/bench.json", &ref)
	task, err := BagenV1Compat.Bench("swebench")
	if err != nil {
		t.Fatal(err)
	}
	var rs []Replay
	var budgets []int64
	for i, d := range in {
		tr := rollout.Trajectory{ID: fmt.Sprint(i), Success: d.Success, Messages: []rollout.Message{{Role: "system", Content: d.Turns[0].Messages[0].Content, Tokens: rollout.Unrecorded}}}
		for _, turn := range d.Turns {
			tr.Messages = append(tr.Messages, rollout.Message{Role: "user", Content: turn.User, Tokens: rollout.Unrecorded}, rollout.Message{Role: "assistant", Content: turn.Parsed, Tokens: rollout.Unrecorded})
			tr.API = append(tr.API, rollout.APITokens{Input: turn.Input, Output: turn.Output})
		}
		// A tokenizer is at hand, yet the authors' env subtracts the whole
		// output (raw == parsed), not the replayed text's count.
		r, err := BagenV1Compat.NewReplay(tr, words{}, task.System)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
		budgets = append(budgets, ref.Budget)
	}
	bench, n := TokenBench(rs, task, budgets, Sampling{})
	if n != len(ref.Samples) || len(bench) != n {
		t.Fatalf("%d candidates, %d probes; reference has %d", n, len(bench), len(ref.Samples))
	}
	got := map[[2]int]Bench{}
	for _, b := range bench {
		got[[2]int{b.Rollout, b.After}] = b
	}
	for _, s := range ref.Samples {
		b := got[[2]int{s.Rollout, s.After}]
		var usage [][2]int64
		for _, u := range b.TurnUsage {
			usage = append(usage, [2]int64{u.In, u.Out})
		}
		var want [][2]int64
		for _, u := range s.Usage {
			want = append(want, [2]int64{u.In, u.Out})
		}
		if b.Used != s.Used || b.Remaining != s.Remaining || b.Possible != s.Possible || !cmp.Equal(want, usage) {
			t.Errorf("rollout %d after %d: used %d, remaining %d, possible %v, usage %v; reference %d, %d, %v, %v",
				s.Rollout, s.After, b.Used, b.Remaining, b.Possible, usage, s.Used, s.Remaining, s.Possible, want)
		}
		if diff := cmp.Diff(s.Messages, b.Prompt); diff != "" {
			t.Errorf("rollout %d after %d: messages (-reference +go):\n%s", s.Rollout, s.After, diff)
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestPyMedian pins eval/swebench.sh's budget, printed by
//
//	python3 -c 'import statistics as s; m = s.median(v); print(int(s.median_low(v) if isinstance(m, float) and not m.is_integer() else m))'
func TestPyMedian(t *testing.T) {
	tests := []struct {
		v    []int64
		want int64
	}{
		{[]int64{5}, 5}, {[]int64{1, 3}, 2}, {[]int64{1, 4}, 1}, {[]int64{4, 1, 3, 2}, 2},
		{[]int64{10, 20, 30}, 20}, {[]int64{7, 8}, 7}, {[]int64{100, 101, 103, 105}, 102}, {nil, 0},
	}
	for _, tt := range tests {
		in := fmt.Sprint(tt.v)
		if got := PyMedian(tt.v); got != tt.want || fmt.Sprint(tt.v) != in {
			t.Errorf("PyMedian(%v) = %d, want %d (input unchanged)", tt.v, got, tt.want)
		}
	}
}

func TestParseCompat(t *testing.T) {
	for in, want := range map[string]string{"": "none", "none": "none", "bagen-v1": "bagen-v1"} {
		c, err := ParseCompat(in)
		if err != nil || c.String() != want {
			t.Errorf("ParseCompat(%q) = %v, %v; want %s", in, c, err, want)
		}
	}
	_, err := ParseCompat("bagen-v0")
	if want := `compat "bagen-v0": want bagen-v1 (the behaviour of mll-lab-nu/BAGEN at 58bef4c) or none`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	if o := BagenV1Compat.Options(Options{Every: 2}); o.Labels != LabelsBagenV1 || o.Every != 2 {
		t.Errorf("bagen-v1 options %+v, want bagen-v1 labels", o)
	}
	if o := Native.Options(Options{Labels: LabelsBagenV1}); o.Labels != LabelsBagenV1 {
		t.Errorf("native options %+v changed the labels", o)
	}
}

func FuzzParseCompat(f *testing.F) {
	for _, s := range []string{"", "none", "bagen-v1", "bagen-v2", "BAGEN-V1", " bagen-v1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCompat(s)
		switch {
		case err != nil && (s == "" || s == "none" || s == "bagen-v1"):
			t.Fatalf("ParseCompat(%q): %v", s, err)
		case err == nil && c.String() != map[string]string{"": "none", "none": "none", "bagen-v1": "bagen-v1"}[s]:
			t.Fatalf("ParseCompat(%q) = %v", s, c)
		}
	})
}

// TestBagenV1PresetTemplate: the reference script asks every task with
// its one template, the Sokoban text (testdata/bagen-v1/template_*.txt).
func TestBagenV1PresetTemplate(t *testing.T) {
	want, err := os.ReadFile("testdata/bagen-v1/template_interval_think.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sokoban", "searchr1", "swebench", "warehouse"} {
		task, err := BagenV1Compat.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := task.ProbeText(threeTurns.Turns, 1, 2500, true); got != string(want) {
			t.Errorf("%s: bagen-v1 build prompt differs from the reference template:\n%s", name, got)
		}
		if task.System != BagenV1Compat.systems[name] {
			t.Errorf("%s: system prompt %q is not the reference script's", name, task.System)
		}
	}
}

// TestBagenV1Accounting pins the authors' _convert_request_usage_to_turn_usage
// on request inputs 100, 150, 90 with outputs 20, 30, 10 (raw == parsed, so
// the visible output is the whole output): 150 ≥ 100+20 but 90 < 150+30,
// half the turns, so deltas 100, 30 and max(0, 90 − 180) = 0; and with
// 480 reasoning tokens recorded in a 500-token output, 20 visible (both
// printed by their function with the stubs of testdata/bagen-v1/bench.py).
func TestBagenV1Accounting(t *testing.T) {
	tests := []struct {
		name  string
		api   []rollout.APITokens
		turns []TurnTokens
	}{
		{"negative delta clamps to 0", []rollout.APITokens{{Input: 100, Output: 20}, {Input: 150, Output: 30}, {Input: 90, Output: 10}},
			[]TurnTokens{{100, 20}, {30, 30}, {0, 10}}},
		{"recorded reasoning", []rollout.APITokens{{Input: 100, Output: 500, Reasoning: tokens(480)}, {Input: 150, Output: 600}, {Input: 800, Output: 50}},
			[]TurnTokens{{100, 500}, {30, 600}, {50, 50}}},
	}
	for _, tt := range tests {
		r, err := BagenV1Compat.NewReplay(apiTrajectory(tt.api), words{}, "sys")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.turns, r.Acc.Turns); diff != "" || r.Inputs != InputAPIDeltas {
			t.Errorf("%s: inputs %v, turns (-want +got):\n%s", tt.name, r.Inputs, diff)
		}
	}
}
