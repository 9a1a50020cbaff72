package baseline

import (
	"strings"

	"bagen-data/probes"
	"bagen-data/rollout"
)

// View is a rendered budget probe as the features read it: what the
// estimation prompt states and the dialogue before it.
type View struct {
	// Stated is what the estimation prompt states (probes.ParseProbe).
	Stated probes.Stated
	// System is the system prompt ("" without one).
	System string
	// Observations are the user messages in order: the task's first
	// message, then one result per completed turn but the last (the
	// observation after the last answer is not yet in the history).
	Observations []string
	// Answers are the assistant messages, one per completed turn.
	Answers []string
}

// promptStart is how every preset's estimation prompt begins (the
// renderer joins it to the first user message after a blank line at p = 0).
const promptStart = "Based on the provided"

// NewView reads a rendered probe. A chat that is not a budget probe of a
// known task is a *probes.PromptError wrapping probes.ErrNotProbe.
func NewView(msgs []rollout.Message) (*View, error) {
	st, err := probes.ParseProbe(msgs)
	if err != nil {
		return nil, err
	}
	v := &View{Stated: st}
	last := len(msgs) - 1
	for i, m := range msgs[:last] {
		switch {
		case m.Role == "system" && i == 0:
			v.System = m.Content
		case m.Role == "assistant":
			v.Answers = append(v.Answers, m.Content)
		default:
			v.Observations = append(v.Observations, m.Content)
		}
	}
	// At p = 0 the first user message carries the estimation prompt.
	if text := msgs[last].Content; !strings.HasPrefix(text, promptStart) {
		if at := strings.LastIndex(text, "\n\n"+promptStart); at >= 0 {
			v.Observations = append(v.Observations, text[:at])
		}
	}
	return v, nil
}

// Turns is the number of completed turns the prompt states.
func (v *View) Turns() int { return len(v.Stated.Turns) }

// Used is the tokens the stated turns spent, input and output.
func (v *View) Used() int64 {
	var n int64
	for _, t := range v.Stated.Turns {
		n += t.In + t.Out
	}
	return n
}

// LastObservation is the newest observation ("" without one).
func (v *View) LastObservation() string { return lastOf(v.Observations) }

// LastAnswer is the newest answer ("" before the first turn).
func (v *View) LastAnswer() string { return lastOf(v.Answers) }

func lastOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}
