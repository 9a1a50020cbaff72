package probes

import (
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
