package validate

import (
	"fmt"
	"strings"

	"bagen-data/rollout"
)

// checkShape checks a chat: an optional system message, then user and
// assistant strictly alternating from user (verl's multi-turn SFT needs
// it), no empty system prompt, probe or SFT answer (build writes those
// itself; history messages are as the log recorded them, and a command
// without output or a call with only hidden reasoning leaves one empty),
// the right last role (assistant for SFT, user for
// RL prompts) and, when p is known, the number of messages build writes for
// a probe after p turns.
func (v *validator) checkShape(f *file, at loc, msgs []rollout.Message, p int64, pOK bool) {
	column, last := "prompt", "user"
	if f.kind == kindSFT {
		column, last = "messages", "assistant"
	}
	add := func(code, summary, msg string) {
		v.fs.add(CheckShape, Error, code, f.path, summary, at.example(msg))
	}
	if len(msgs) == 0 {
		add("empty-chat", "rows with no messages", column+" is empty")
		return
	}
	if msg := alternation(column, msgs); msg != "" {
		add("roles", "roles do not alternate user/assistant after an optional system message", msg)
	}
	own := []int{len(msgs) - 1}
	if msgs[0].Role == "system" {
		own = append(own, 0)
	}
	for _, i := range own {
		if m := msgs[i]; strings.TrimSpace(m.Content) == "" {
			add("empty-content", "system prompts, probes or SFT answers with empty content", fmt.Sprintf("%s[%d].content is empty (%s)", column, i, m.Role))
			break
		}
	}
	if got := msgs[len(msgs)-1].Role; got != last {
		add("last-role", fmt.Sprintf("%s files whose %s does not end with a %s message", f.kind, column, last),
			fmt.Sprintf("%s ends with %q", column, got))
	}
	if !pOK {
		return
	}
	want := 2*p + 1 // user_0, assistant_0, …, user (probe)
	if p == 0 {
		want = 1
	}
	if msgs[0].Role == "system" {
		want++
	}
	if f.kind == kindSFT {
		want++
	}
	if int64(len(msgs)) != want {
		add("turn-count", "rows whose message count does not match probe_after_turn",
			fmt.Sprintf("%d messages for a probe after %d turns, want %d", len(msgs), p, want))
	}
}

// alternation returns the first role out of place, or "".
func alternation(column string, msgs []rollout.Message) string {
	start := 0
	if msgs[0].Role == "system" {
		start = 1
	}
	for i := start; i < len(msgs); i++ {
		want := "user"
		if (i-start)%2 == 1 {
			want = "assistant"
		}
		if msgs[i].Role != want {
			return fmt.Sprintf("%s[%d].role: want %q, got %q", column, i, want, msgs[i].Role)
		}
	}
	return ""
}
