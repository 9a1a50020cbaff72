package probes

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"bagen-data/rollout"
)

// TestParseProbeInvertsRender renders probes with every preset, both
// compats, build's and the benchmark's prompts, interval and point,
// with and without <think>, at every p, and reads the numbers back.
func TestParseProbeInvertsRender(t *testing.T) {
	traj, acc := renderTrajectory()
	acc.Turns = []TurnTokens{{In: 0, Out: 17}, {In: 123456789, Out: 1}, {In: 40, Out: 0}}
	n := 0
	for _, name := range taskNames() {
		for _, c := range []Compat{Native, BagenV1Compat} {
			for kind, get := range map[string]func(string) (Task, error){"preset": c.Preset, "bench": c.Bench} {
				base, err := get(name)
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range []Width{{}, {Kind: Point}} {
					task := base.ForWidth(w)
					for _, think := range []bool{false, true} {
						for p := 0; p <= len(acc.Turns); p++ {
							for _, budget := range []int64{1, 2500, MaxTokens} {
								msgs := task.Render(traj, acc, Probe{After: p}, budget, think)
								got, err := ParseProbe(msgs)
								want := Stated{Task: name, Think: think || task.template != "", Turns: acc.Turns[:p], Budget: budget}
								if err != nil {
									t.Fatalf("%s %s %s point=%v think=%v p=%d: %v", name, c, kind, w.Kind == Point, think, p, err)
								}
								if diff := cmp.Diff(want, got); diff != "" {
									t.Fatalf("%s %s %s point=%v think=%v p=%d (-want +got):\n%s", name, c, kind, w.Kind == Point, think, p, diff)
								}
								n++
							}
						}
					}
				}
			}
		}
	}
	if n != 4*2*2*2*2*4*3 {
		t.Errorf("checked %d renderings", n)
	}
}

func TestParseProbeErrors(t *testing.T) {
	traj, acc := renderTrajectory()
	good := Tasks["sokoban"].Render(traj, acc, Probe{After: 2}, 2500, false)
	last := good[len(good)-1].Content
	with := func(old, new string) []rollout.Message {
		msgs := append([]rollout.Message(nil), good...)
		msgs[len(msgs)-1].Content = strings.Replace(last, old, new, 1)
		return msgs
	}
	tests := []struct {
		name string
		msgs []rollout.Message
		want string
	}{
		{"no messages", nil, "messages: not a budget probe of a known task: no messages"},
		{"ends with the assistant", good[:5], `messages[4].role: not a budget probe of a known task: the last message must be the user's estimation prompt, got role "assistant"`},
		{"another question", []rollout.Message{{Role: "user", Content: "What is 2+2?"}},
			`messages[0].content: not a budget probe of a known task: no estimation prompt of searchr1, sokoban, swebench, warehouse ends the message (want "Based on the provided" … filled by the renderer)`},
		{"text after the prompt", with("<answer>impossible</answer>", "<answer>impossible</answer> thanks"),
			`messages[5].content: not a budget probe of a known task: no estimation prompt of searchr1, sokoban, swebench, warehouse ends the message (want "Based on the provided" … filled by the renderer)`},
		{"wrong total", with("total 8 tokens", "total 9 tokens"),
			"messages[5].content: not a budget probe of a known task: turn usage: turn 1: input 5 + output 3 tokens is not the total 9"},
		{"turn count", with("completed 2 turns", "completed 3 turns"),
			"messages[5].content: not a budget probe of a known task: turn usage: 2 turns listed, but 3 completed"},
		{"turn order", with("Turn 2:", "Turn 3:"),
			"messages[5].content: not a budget probe of a known task: turn usage: entry 2 is numbered turn 3"},
		{"budgets differ", with("within 2500 total", "within 2600 total"),
			`messages[5].content: not a budget probe of a known task: token budget: "2600" (or two budgets that differ)`},
		{"zero budget", with("2500", "0"),
			`messages[5].content: not a budget probe of a known task: token budget: "2500" (or two budgets that differ)`},
		{"leading zero", with("input 5 tokens", "input 05 tokens"),
			`messages[5].content: not a budget probe of a known task: turn usage: "Turn 1: input 05 tokens, output 3 tokens, total 8 tokens; Turn 2: input 4 tokens, output 2 tokens, total 6 tokens" is not what the renderer writes for these numbers`},
		{"huge budget", with("2500", "99999999999999999999"),
			`messages[5].content: not a budget probe of a known task: token budget: "99999999999999999999" (or two budgets that differ)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseProbe(tt.msgs)
			var pe *PromptError
			if err == nil || err.Error() != tt.want || !errors.Is(err, ErrNotProbe) || !errors.As(err, &pe) {
				t.Errorf("got %v, want %s", err, tt.want)
			}
		})
	}
}

func TestParseProbeJoinedUserZero(t *testing.T) {
	traj, acc := renderTrajectory()
	traj.Messages[0].Content = "Grid 0\n\nBased on the provided rollout context, nothing else"
	msgs := BagenV1Compat.Task(Tasks["searchr1"]).Render(traj, acc, Probe{After: 0}, 3500, true)
	got, err := ParseProbe(msgs)
	want := Stated{Task: "searchr1", Think: true, Turns: []TurnTokens{}, Budget: 3500}
	if err != nil || !cmp.Equal(got, want) {
		t.Errorf("got %+v, %v, want %+v", got, err, want)
	}
}

// FuzzParseProbe: any text either fails with ErrNotProbe or parses to
// numbers that the renderer turns back into the text's end.
func FuzzParseProbe(f *testing.F) {
	traj, acc := renderTrajectory()
	for _, name := range taskNames() {
		f.Add("system", Tasks[name].Render(traj, acc, Probe{After: 2}, 2500, true)[5].Content)
	}
	f.Add("system", "Grid 0")
	f.Fuzz(func(t *testing.T, sys, text string) {
		st, err := ParseProbe([]rollout.Message{{Role: "system", Content: sys}, {Role: "user", Content: text}})
		if err != nil {
			if !errors.Is(err, ErrNotProbe) {
				t.Fatalf("%q: %v does not wrap ErrNotProbe", text, err)
			}
			return
		}
		if st.Budget <= 0 {
			t.Fatalf("%q: parsed %+v", text, st)
		}
		ok := false
		for _, f := range probeForms() {
			if strings.HasSuffix(text, f.tasks[0].ProbeText(st.Turns, len(st.Turns), st.Budget, f.think)) {
				ok = true
			}
		}
		if !ok {
			t.Fatalf("%q: parsed %+v, which no preset renders as the text's end", text, st)
		}
	})
}
