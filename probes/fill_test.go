package probes

import (
	"strconv"
	"strings"
	"testing"
)

// fillProbe gives what a strings.Replacer of the three placeholders gives,
// on every preset's template and on texts made to trip a scanner.
func TestFillProbeMatchesReplacer(t *testing.T) {
	templates := []string{
		"", "{", "}{", "{{completed_turns}", "{completed_turns}{turn_token_usage_text}{max_context_window_tokens}",
		"no placeholders", "{max_context_window_tokens", "x{completed_turns}}y{{turn_token_usage_text}}",
	}
	for _, name := range []string{"sokoban", "searchr1", "swebench", "warehouse"} {
		task := Tasks[name]
		v1 := BagenV1Compat.Task(task)
		templates = append(templates, task.probeTemplate(false), task.probeTemplate(true), v1.probeTemplate(false), v1.probeTemplate(true))
	}
	for _, tmpl := range templates {
		for _, vals := range [][3]string{{"3", "turn 1: 10 in {completed_turns}", "2500"}, {"", "", ""}} {
			want := strings.NewReplacer(phTurns, vals[0], phUsage, vals[1], phBudget, vals[2]).Replace(tmpl)
			if got := fillProbe(tmpl, vals[0], vals[1], vals[2]); got != want {
				t.Errorf("fillProbe(%q, %q) = %q, want %q", tmpl, vals, got, want)
			}
		}
	}
}

func FuzzFillProbe(f *testing.F) {
	f.Add("Used {completed_turns} turns: {turn_token_usage_text} of {max_context_window_tokens}", "1", "u", "9")
	f.Fuzz(func(t *testing.T, tmpl, a, b, c string) {
		want := strings.NewReplacer(phTurns, a, phUsage, b, phBudget, c).Replace(tmpl)
		if got := fillProbe(tmpl, a, b, c); got != want {
			t.Fatalf("fillProbe(%q, %q, %q, %q) = %q, want %q", tmpl, a, b, c, got, want)
		}
	})
}

// ProbeText fills the probe and its output specification one after the
// other; that is the whole template filled, for every preset, compat,
// answer shape and think setting, and with a template of the user's.
func TestProbeTextFillsTemplate(t *testing.T) {
	turns := []TurnTokens{{In: 120, Out: 45}, {In: 300, Out: 7}, {In: 1, Out: 0}}
	for _, name := range []string{"sokoban", "searchr1", "swebench", "warehouse"} {
		for _, task := range []Task{Tasks[name], BagenV1Compat.Task(Tasks[name])} {
			for _, w := range []Width{{Kind: Point}, {}} {
				task := task.ForWidth(w)
				for _, think := range []bool{false, true} {
					for p := range len(turns) + 1 {
						want := fillProbe(task.probeTemplate(think), strconv.Itoa(p), UsageText(turns, p), "4000")
						if got := task.ProbeText(turns, p, 4000, think); got != want {
							t.Fatalf("%s point=%v think=%v p=%d: ProbeText = %q, want %q", name, task.point, think, p, got, want)
						}
					}
				}
			}
		}
	}
	custom := Tasks["sokoban"].WithProbePrompt("  After {completed_turns} turns ({turn_token_usage_text}) of {max_context_window_tokens}: {x}\n")
	if got, want := custom.ProbeText(turns, 1, 4000, true), "After 1 turns (Turn 1: input 120 tokens, output 45 tokens, total 165 tokens) of 4000: {x}"; got != want {
		t.Fatalf("custom ProbeText = %q, want %q", got, want)
	}
}

// The output specifications made once are the ones the shapes ask for.
func TestOutputSpec(t *testing.T) {
	for _, c := range []struct {
		task  Task
		think bool
		want  string
	}{
		{Tasks["sokoban"], false, "Output exactly one of the following:\n<answer>[est_low, est_high]</answer>\nor\n<answer>impossible</answer>"},
		{Tasks["sokoban"], true, "Output exactly one of the following:\n<think>[YOUR THINKING]</think><answer>[est_low, est_high]</answer>\nor\n<think>[YOUR THINKING]</think><answer>impossible</answer>"},
		{Tasks["swebench"], true, "Output exactly one of the following:\n<think> [YOUR THINKING] </think><answer>[est_low, est_high]</answer>\nor\n<think> [YOUR THINKING] </think><answer>impossible</answer>"},
		{Tasks["swebench"], false, "Output exactly one of the following:\n<answer>[est_low, est_high]</answer>\nor\n<answer>impossible</answer>"},
		{Tasks["sokoban"].ForWidth(Width{Kind: Point}), true, "Output exactly one of the following:\n<think>[YOUR THINKING]</think><answer>NUMBER</answer>\nor\n<think>[YOUR THINKING]</think><answer>impossible</answer>"},
	} {
		if got := c.task.outputSpec(c.think); got != c.want {
			t.Errorf("%s point=%v think=%v: outputSpec = %q, want %q", c.task.Name, c.task.point, c.think, got, c.want)
		}
	}
}
