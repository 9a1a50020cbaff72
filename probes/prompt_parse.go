package probes

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"bagen-data/rollout"
)

// Stated is what a rendered budget probe states: the numbers its estimation
// prompt was filled with. It is ParseProbe's answer.
type Stated struct {
	// Task is the preset whose estimation prompt the probe shows. Presets
	// that share a prompt (sokoban and warehouse) are told apart by the
	// system prompt; without a known one the first by name is given.
	Task string
	// Think says whether the output specification asks for <think>.
	Think bool
	// Turns is the usage of the completed turns, len(Turns) of them.
	Turns []TurnTokens
	// Budget is the token budget the prompt states.
	Budget int64
}

// ErrNotProbe is wrapped by ParseProbe's errors: the chat is not a budget
// probe of a known task.
var ErrNotProbe = errors.New("not a budget probe of a known task")

// PromptError is a chat that ParseProbe cannot read as a budget probe:
// Field names the message part, as in "messages[3].content". It wraps
// ErrNotProbe.
type PromptError struct {
	Field string
	Err   error
}

func (e *PromptError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *PromptError) Unwrap() error { return e.Err }

// ParseProbe reads the numbers back from a rendered probe: the last message
// must be the user message whose text ends with the estimation prompt of a
// task preset (any compat, with or without <think>, interval or point, the
// benchmark's templates included), as Task.Render writes it. It is the
// inverse of the renderer: the prompt re-rendered from the numbers found
// must equal the text, so anything the renderer cannot have written (a
// changed word, a total that is not input + output, turns out of order) is
// an error naming what does not match.
func ParseProbe(msgs []rollout.Message) (Stated, error) {
	if len(msgs) == 0 {
		return Stated{}, &PromptError{Field: "messages", Err: fmt.Errorf("%w: no messages", ErrNotProbe)}
	}
	i := len(msgs) - 1
	if last := msgs[i]; last.Role != "user" {
		return Stated{}, &PromptError{Field: fmt.Sprintf("messages[%d].role", i),
			Err: fmt.Errorf("%w: the last message must be the user's estimation prompt, got role %q", ErrNotProbe, last.Role)}
	}
	field := fmt.Sprintf("messages[%d].content", i)
	text := msgs[i].Content
	var firstErr error
	for _, f := range probeForms() {
		st, err := f.parse(text)
		if err == errNoMatch {
			continue
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		st.Task = f.pick(msgs)
		return st, nil
	}
	if firstErr != nil {
		return Stated{}, &PromptError{Field: field, Err: fmt.Errorf("%w: %w", ErrNotProbe, firstErr)}
	}
	return Stated{}, &PromptError{Field: field, Err: fmt.Errorf("%w: no estimation prompt of %s ends the message (want %q … filled by the renderer)",
		ErrNotProbe, strings.Join(taskNames(), ", "), firstWords)}
}

// firstWords is how every preset's estimation prompt begins, for the
// error message.
const firstWords = "Based on the provided"

// errNoMatch: a form's prompt is not in the text.
var errNoMatch = errors.New("no match")

// probeForm is one distinct estimation prompt the renderer can write, with
// the presets that write it.
type probeForm struct {
	tasks   []Task // in name order, a name once per system prompt; tasks[0] renders it
	think   bool
	re      *regexp.Regexp // the whole prompt, anchored at both ends
	head    string         // the literal text before the first placeholder
	tail    string         // the literal text after the last placeholder
	groups  []string       // the placeholder of each capture group
	systems []string       // tasks[i]'s system prompt is systems[i]
}

var (
	formsOnce sync.Once
	forms     []*probeForm
)

// probeForms is every prompt the presets render: each task under Native
// and BagenV1Compat, as build's preset and as the benchmark's, with and
// without <think>, interval and point.
func probeForms() []*probeForm {
	formsOnce.Do(func() {
		byTemplate := map[string]*probeForm{}
		for _, name := range taskNames() {
			for _, t := range presetVariants(name) {
				for _, think := range []bool{false, true} {
					tmpl := t.probeTemplate(think)
					if t.template != "" {
						tmpl = PyStrip(tmpl)
					}
					f := byTemplate[tmpl]
					if f == nil {
						f = newForm(tmpl, strings.Contains(tmpl, "<think>"))
						byTemplate[tmpl] = f
						forms = append(forms, f)
					}
					sys := PyStrip(t.System)
					if !f.has(t.Name, sys) {
						f.tasks = append(f.tasks, t)
						f.systems = append(f.systems, sys)
					}
				}
			}
		}
	})
	return forms
}

// has reports whether f lists the preset name with system prompt sys.
func (f *probeForm) has(name, sys string) bool {
	for i, t := range f.tasks {
		if t.Name == name && f.systems[i] == sys {
			return true
		}
	}
	return false
}

// presetVariants are the ways task name renders: build's preset and the
// benchmark's, under each compat, asking for an interval or a point.
func presetVariants(name string) []Task {
	var out []Task
	for _, c := range []Compat{Native, BagenV1Compat} {
		for _, get := range []func(string) (Task, error){c.Preset, c.Bench} {
			t, err := get(name)
			if err != nil {
				panic("probes: preset " + name + ": " + err.Error())
			}
			out = append(out, t, t.ForWidth(Width{Kind: Point}))
		}
	}
	return out
}

func taskNames() []string {
	names := make([]string, 0, len(Tasks))
	for n := range Tasks {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

var placeholderRe = regexp.MustCompile(`\{(completed_turns|turn_token_usage_text|max_context_window_tokens)\}`)

// newForm compiles an unfilled prompt into a pattern of the whole
// prompt; parse finds where in a message it starts.
func newForm(tmpl string, think bool) *probeForm {
	f := &probeForm{think: think}
	var b strings.Builder
	b.WriteString(`\A(`)
	last := 0
	phs := placeholderRe.FindAllStringIndex(tmpl, -1)
	f.head, f.tail = tmpl[:phs[0][0]], tmpl[phs[len(phs)-1][1]:]
	for _, m := range phs {
		b.WriteString(regexp.QuoteMeta(tmpl[last:m[0]]))
		ph := tmpl[m[0]:m[1]]
		if ph == phUsage {
			b.WriteString(`([^\n]*)`)
		} else {
			b.WriteString(`([0-9]+)`)
		}
		f.groups = append(f.groups, ph)
		last = m[1]
	}
	b.WriteString(regexp.QuoteMeta(tmpl[last:]))
	b.WriteString(`)\z`)
	f.re = regexp.MustCompile(b.String())
	return f
}

// parse matches the form at the end of text, where it is the whole text
// or follows a blank line (the p = 0 probe follows user_0), and reads its
// numbers back. The literal ends locate it before the pattern runs.
func (f *probeForm) parse(text string) (Stated, error) {
	if !strings.HasSuffix(text, f.tail) {
		return Stated{}, errNoMatch
	}
	at := strings.LastIndex(text, f.head)
	if at < 0 || (at > 0 && !strings.HasSuffix(text[:at], "\n\n")) {
		return Stated{}, errNoMatch
	}
	m := f.re.FindStringSubmatch(text[at:])
	if m == nil {
		return Stated{}, errNoMatch
	}
	st := Stated{Think: f.think, Budget: -1}
	after, usage := -1, ""
	for i, ph := range f.groups {
		v := m[i+2]
		switch ph {
		case phUsage:
			usage = v
		case phTurns:
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || (after >= 0 && n != after) {
				return Stated{}, fmt.Errorf("completed turns: %q", v)
			}
			after = n
		case phBudget:
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n > MaxTokens || (st.Budget >= 0 && n != st.Budget) {
				return Stated{}, fmt.Errorf("token budget: %q (or two budgets that differ)", v)
			}
			st.Budget = n
		}
	}
	if st.Budget <= 0 {
		return Stated{}, fmt.Errorf("token budget: want a positive number of tokens, got %d", st.Budget)
	}
	turns, err := parseUsage(usage, after)
	if err != nil {
		return Stated{}, err
	}
	st.Turns = turns
	// The inverse check: the renderer, given these numbers, writes this text.
	if got := f.tasks[0].ProbeText(turns, len(turns), st.Budget, f.think); got != m[1] {
		return Stated{}, fmt.Errorf("turn usage: %q is not what the renderer writes for these numbers", usage)
	}
	return st, nil
}

// parseUsage reads UsageText back: "(no turns completed yet)", or one
// usageFormat entry per turn joined by "; ", numbered from 1, with total
// = input + output; after is the completed turns the prompt states.
func parseUsage(s string, after int) ([]TurnTokens, error) {
	if s == noTurns {
		if after > 0 {
			return nil, fmt.Errorf("turn usage: %q, but %d turns completed", s, after)
		}
		return []TurnTokens{}, nil
	}
	parts := strings.Split(s, "; ")
	if after >= 0 && len(parts) != after {
		return nil, fmt.Errorf("turn usage: %d turns listed, but %d completed", len(parts), after)
	}
	turns := make([]TurnTokens, len(parts))
	for k, p := range parts {
		v, ok := scanUsage(p)
		if !ok {
			return nil, fmt.Errorf("turn usage: turn %d: %q: want %q", k+1, p, usageFormat)
		}
		n, in, out, total := v[0], v[1], v[2], v[3]
		switch {
		case n != int64(k+1):
			return nil, fmt.Errorf("turn usage: entry %d is numbered turn %d", k+1, n)
		case in < 0 || out < 0 || in > MaxTokens || out > MaxTokens || total != in+out:
			return nil, fmt.Errorf("turn usage: turn %d: input %d + output %d tokens is not the total %d", n, in, out, total)
		}
		turns[k] = TurnTokens{In: in, Out: out}
	}
	return turns, nil
}

// pick names the preset: the one among f's whose system prompt the chat
// shows, else the first.
func (f *probeForm) pick(msgs []rollout.Message) string {
	if len(msgs) > 1 && msgs[0].Role == "system" {
		sys := PyStrip(msgs[0].Content)
		for i, s := range f.systems {
			if s == sys {
				return f.tasks[i].Name
			}
		}
	}
	return f.tasks[0].Name
}

// usageParts are usageFormat's literal parts around its four numbers.
var usageParts = strings.Split(usageFormat, "%d")

// scanUsage reads one usageFormat entry: its literal parts and four
// unsigned decimal numbers. It is fmt.Sscanf's job at a fraction of the
// cost, which matters on long sessions (the guard parses every turn's
// probe); the renderer's inverse check rejects anything it cannot write.
func scanUsage(p string) (v [4]int64, ok bool) {
	for i, part := range usageParts {
		if !strings.HasPrefix(p, part) {
			return v, false
		}
		p = p[len(part):]
		if i == len(v) {
			break
		}
		j := 0
		for j < len(p) && j < 16 && p[j] >= '0' && p[j] <= '9' {
			v[i] = v[i]*10 + int64(p[j]-'0')
			j++
		}
		if j == 0 || (j < len(p) && p[j] >= '0' && p[j] <= '9') {
			return v, false
		}
		p = p[j:]
	}
	return v, p == ""
}
