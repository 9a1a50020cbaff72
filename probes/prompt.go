package probes

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"bagen-data/rollout"
)

// Task is a preset: the agent's system prompt shown in every probe, the
// estimation prompt and the default token budget. A Task is a value that
// is never modified, so it is safe for concurrent use.
type Task struct {
	Name   string
	System string
	// Budget is the paper's token budget for the task; 0 means the task has
	// no fixed token budget and --budget must be given.
	Budget int64
	// probe is the estimation prompt without its output specification, with
	// {completed_turns}, {turn_token_usage_text} and
	// {max_context_window_tokens} placeholders (appendix "Prompts").
	probe string
	// thinkSpace puts spaces inside <think> in the output spec, as the
	// paper's SWE-bench prompt does.
	thinkSpace bool
	// point asks for a single integer instead of an interval (ForWidth).
	point bool
	// compat renders the way Compat.Task chose; the zero value is Native.
	compat Compat
	// template, when set, is the whole estimation prompt, output
	// specification included (WithProbePrompt); System is then a template
	// too. Both are filled and stripped, as the authors' benchmark does.
	template string
	// sourceSystem shows the rollout's own system prompt when it has one.
	sourceSystem bool
	// ledger: the task's rollouts keep a ledger and are probed under
	// challenges (Warehouse), not a token budget.
	ledger bool
	// rawHistory shows the history's user messages as logged, reward
	// annotations included.
	rawHistory bool
}

// SokobanSystem is the paper's Sokoban system prompt (appendix "Prompts",
// Sokoban SFT/RL budget-probe prompt).
const SokobanSystem = `You're a helpful assistant. You are solving the Sokoban puzzle.
Push all boxes to targets.
You are given the grid and zero-indexed coordinates of the player, boxes, and targets.
You can push but not pull boxes, and cannot push a box through a wall.
Your available actions are:
Up, Down, Left, Right.
You may output at most 3 action(s) in a single turn, separated by the action separator " || ".`

// SearchR1System is the system prompt of the searchr1 preset. The paper
// gives none; this is the authors' (SYSTEM_PROMPTS["searchr1"] of
// scripts/budget-rl/prepare_budget_probe.py at mll-lab-nu/BAGEN 58bef4c).
// The other presets' come from the same two sources.
const SearchR1System = "You are a search agent answering questions by searching for information. " +
	"Use search[<query>] to retrieve evidence and finish[<answer>] only when " +
	"you are ready to submit the final answer. Output exactly one valid action."

// SWEBenchSystem is the system prompt of the swebench preset. The paper
// gives none; this is the authors' (SYSTEM_PROMPTS["swebench"] of
// prepare_budget_probe.py at 58bef4c).
const SWEBenchSystem = bagenV1SWEBench

// WarehouseSystem is the system prompt of the warehouse preset. The paper
// gives none for the agent; this is the authors' (SYSTEM_PROMPTS["warehouse"]).
const WarehouseSystem = bagenV1Warehouse

const exampleBlock = `

Example:
For a three-turn interaction, suppose only Turn 1 has been completed.
The full interaction is:
Turn 1: input X1 tokens, output Y1 tokens;
Turn 2: input X2 tokens, output Y2 tokens;
Turn 3: input X3 tokens, output Y3 tokens.
You will receive:
turn_token_usage_text: Turn 1: input X1 tokens, output Y1 tokens
You should estimate:
X2 + Y2 + X3 + Y3`

const sokobanProbe = `Based on the provided rollout context, you are provided below information:
1. You have completed {completed_turns} turns.
2. Each turn, your token consumption is {turn_token_usage_text}.
3. You need to finish the task within {max_context_window_tokens} tokens.

Now, estimate:
1. Whether you can finish the task successfully within {max_context_window_tokens} total tokens (input + output).
2. If yes, how many additional tokens (input + output) are still needed to finish the task, starting from the next turn. Return an estimation interval: at least est_low tokens and at most est_high tokens.
3. If no, answer "impossible".
4. You should try your best to estimate whether the task can finish within budget (most important). If you think the task can finish within budget, your interval should be as tight as possible while still covering the true remaining token budget.` + exampleBlock

const searchR1Probe = `Based on the provided SearchQA rollout context, you are given the following:
1. You have completed {completed_turns} turns.
2. Each turn, your token consumption is {turn_token_usage_text}.
3. You need to finish the task within {max_context_window_tokens} total tokens.

Now, estimate:
1. Whether the search agent can still finish the task successfully within {max_context_window_tokens} total tokens (input + output).
2. If yes, how many additional tokens (input + output) are still needed to finish the task, starting from the next turn. Return an estimation interval: at least est_low tokens and at most est_high tokens.
3. If no, answer "impossible".
4. Prioritize the can-finish judgment over interval tightness. If you think the task can finish within budget, make the interval as tight as possible while still covering the true remaining token budget.` + exampleBlock

const sweBenchProbe = `Based on the provided SWE-bench rollout context, you are given the following:
1. The coding agent has completed {completed_turns} turns.
2. Per-turn token usage so far, excluding reused history from earlier turns, is: {turn_token_usage_text}.
3. The full task must finish within {max_context_window_tokens} total tokens.

Estimate:
1. Whether the agent can still finish the software issue successfully within {max_context_window_tokens} total tokens.
2. If yes, how many additional tokens (input + output) are still needed from the next turn onward. Return an interval: at least est_low tokens and at most est_high tokens.
3. If no, answer "impossible".
4. Prioritize the can-finish judgment over interval tightness. If the task still looks finishable, keep the interval as tight as possible while still covering the true remaining token budget.

Think about typical SWE-bench costs such as repository inspection, targeted code edits, running validation commands, reading failures, and one or two repair iterations.`

// Tasks are the presets, by --task name.
var Tasks = map[string]Task{
	"sokoban":   {Name: "sokoban", System: SokobanSystem, Budget: 2500, probe: sokobanProbe},
	"searchr1":  {Name: "searchr1", System: SearchR1System, Budget: 3500, probe: searchR1Probe},
	"swebench":  {Name: "swebench", System: SWEBenchSystem, probe: sweBenchProbe, thinkSpace: true},
	"warehouse": {Name: "warehouse", System: WarehouseSystem, probe: sokobanProbe, ledger: true},
}

// LookupTask returns the preset called name.
func LookupTask(name string) (Task, error) {
	t, ok := Tasks[name]
	if !ok {
		names := make([]string, 0, len(Tasks))
		for n := range Tasks {
			names = append(names, n)
		}
		sort.Strings(names)
		return Task{}, fmt.Errorf("task %q: want one of %s", name, strings.Join(names, ", "))
	}
	return t, nil
}

// Ledger reports whether t's rollouts keep a ledger and are probed under
// challenges (Warehouse: cash, time, warehouse and cost budgets) rather
// than under a token budget.
func (t Task) Ledger() bool { return t.ledger }

// ForWidth returns t asking for the answer shape of w: with w a point
// width, the estimation prompt asks for "a single integer estimate" and
// the output specification shows <answer>NUMBER</answer>, as the reference
// script's point template; otherwise t unchanged.
func (t Task) ForWidth(w Width) Task {
	t.point = w.Kind == Point
	return t
}

// pointWords turns an interval estimation prompt into the point one. The
// Sokoban replacements give the reference script's point template word for
// word; the others follow it for the presets it has no template for.
var pointWords = strings.NewReplacer(
	"Return an estimation interval: at least est_low tokens and at most est_high tokens.", "Return a single integer estimate.",
	"Return an interval: at least est_low tokens and at most est_high tokens.", "Return a single integer estimate.",
	" If you think the task can finish within budget, your interval should be as tight as possible while still covering the true remaining token budget.", "",
	"Prioritize the can-finish judgment over interval tightness. If you think the task can finish within budget, make the interval as tight as possible while still covering the true remaining token budget.", "Prioritize the can-finish judgment.",
	"Prioritize the can-finish judgment over interval tightness. If the task still looks finishable, keep the interval as tight as possible while still covering the true remaining token budget.", "Prioritize the can-finish judgment.",
)

// WithProbePrompt returns t asking with template, the whole estimation
// prompt with its output specification: {completed_turns},
// {turn_token_usage_text} and {max_context_window_tokens} are filled (no
// other placeholder is) and the result stripped of surrounding white
// space; think and point widths no longer change it. The system prompt is
// then filled the same way.
func (t Task) WithProbePrompt(template string) Task {
	t.template = template
	return t
}

// WithSystem returns t with its system prompt replaced.
func (t Task) WithSystem(prompt string) Task {
	t.System = prompt
	return t
}

// ReadSystemFile reads a system prompt file without the white space around
// it (CRLF line ends included), as the reference script's f.read().strip().
func ReadSystemFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("system prompt: %w", err)
	}
	return PyStrip(string(b)), nil
}

// PyStrip is Python's str.strip(): s without leading and trailing white
// space, white space being what str.isspace accepts (Unicode White_Space
// and the separators U+001C–U+001F).
func PyStrip(s string) string {
	return strings.TrimFunc(s, pySpace)
}

// Placeholders of an estimation prompt, filled by ProbeText and read back
// by ParseProbe.
const (
	phTurns  = "{completed_turns}"
	phUsage  = "{turn_token_usage_text}"
	phBudget = "{max_context_window_tokens}"
)

// ProbeText is the estimation prompt shown after p completed turns.
// It is probeTemplate(think) filled, without building that template for
// every row: the probe and its output specification are filled one after
// the other (no placeholder holds the blank line between them).
func (t Task) ProbeText(turns []TurnTokens, p int, budget int64, think bool) string {
	turnsText, usage, budgetText := strconv.Itoa(p), UsageText(turns, p), strconv.FormatInt(budget, 10)
	if t.template != "" {
		return PyStrip(fillProbe(t.template, turnsText, usage, budgetText))
	}
	probe, spec := t.probe, t.outputSpec(think)
	if t.point {
		probe = pointWords.Replace(probe)
	}
	var b strings.Builder
	b.Grow(len(probe) + len(spec) + len(usage) + 32)
	writeFilled(&b, probe, turnsText, usage, budgetText)
	b.WriteString("\n\n")
	writeFilled(&b, spec, turnsText, usage, budgetText)
	return b.String()
}

// fillProbe replaces the placeholders of template, left to right and
// without rescanning what it put in, as a strings.Replacer of the three
// would; building a Replacer for every row cost more than the rest of the
// probe text.
func fillProbe(template, turns, usage, budget string) string {
	var b strings.Builder
	b.Grow(len(template) + len(usage) + 16)
	writeFilled(&b, template, turns, usage, budget)
	return b.String()
}

// writeFilled writes template to b with its placeholders filled (fillProbe).
func writeFilled(b *strings.Builder, template, turns, usage, budget string) {
	for {
		i := strings.IndexByte(template, '{')
		if i < 0 {
			b.WriteString(template)
			return
		}
		b.WriteString(template[:i])
		template = template[i:]
		switch {
		case strings.HasPrefix(template, phTurns):
			b.WriteString(turns)
			template = template[len(phTurns):]
		case strings.HasPrefix(template, phUsage):
			b.WriteString(usage)
			template = template[len(phUsage):]
		case strings.HasPrefix(template, phBudget):
			b.WriteString(budget)
			template = template[len(phBudget):]
		default:
			b.WriteByte('{')
			template = template[1:]
		}
	}
}

// probeTemplate is the estimation prompt with its placeholders unfilled:
// the one text ProbeText fills and ParseProbe matches.
func (t Task) probeTemplate(think bool) string {
	if t.template != "" {
		return t.template
	}
	text := t.probe
	if t.point {
		text = pointWords.Replace(text)
	}
	return text + "\n\n" + t.outputSpec(think)
}

func (t Task) outputSpec(think bool) string {
	return outputSpecs[b2i(think)][b2i(think && t.thinkSpace)][b2i(t.point)]
}

// outputSpecs are the output specifications by think, thinkSpace and
// point, made once: ProbeText needs one for every row.
var outputSpecs = func() (s [2][2][2]string) {
	for _, think := range []bool{false, true} {
		for _, space := range []bool{false, true} {
			for _, point := range []bool{false, true} {
				s[b2i(think)][b2i(space)][b2i(point)] = makeOutputSpec(think, space, point)
			}
		}
	}
	return s
}()

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func makeOutputSpec(think, thinkSpace, point bool) string {
	prefix := ""
	if think {
		prefix = "<think>[YOUR THINKING]</think>"
		if thinkSpace {
			prefix = "<think> [YOUR THINKING] </think>"
		}
	}
	answer := "<answer>[est_low, est_high]</answer>"
	if point {
		answer = "<answer>NUMBER</answer>"
	}
	return "Output exactly one of the following:\n" +
		prefix + answer + "\n" +
		"or\n" +
		prefix + "<answer>impossible</answer>"
}

// Render builds the probe's prompt: the task's system prompt, the visible
// history and the probe text. At p = 0 the probe text follows user_0 after
// a blank line (verl's multi-turn SFT needs strict role alternation);
// otherwise it is a new user message after assistant_{p−1}. User messages
// are shown without their reward annotation.
func (t Task) Render(traj rollout.Trajectory, a Accounting, p Probe, budget int64, think bool) []rollout.Message {
	text := t.ProbeText(a.Seen(p.After), p.After, budget, think)
	msgs := make([]rollout.Message, 0, 2+2*p.After)
	msgs = append(msgs, rollout.Message{Role: "system", Content: t.system(traj, budget)})
	if p.After == 0 {
		if len(a.Pairs) > 0 {
			text = t.joinUser0(rollout.StripReward(traj.Messages[a.Pairs[0][0]].Content), text)
		}
		return append(msgs, rollout.Message{Role: "user", Content: text})
	}
	for _, pair := range a.Pairs[:p.After] {
		user := traj.Messages[pair[0]].Content
		if !t.rawHistory {
			user = rollout.StripReward(user)
		}
		msgs = append(msgs,
			rollout.Message{Role: "user", Content: user},
			rollout.Message{Role: "assistant", Content: traj.Messages[pair[1]].Content})
	}
	return append(msgs, rollout.Message{Role: "user", Content: text})
}

// system is the system prompt shown with traj: its own (stripped) when t
// shows the source's and it has a non-blank one, else t.System, filled
// and stripped when t asks with a template.
func (t Task) system(traj rollout.Trajectory, budget int64) string {
	if t.sourceSystem && len(traj.Messages) > 0 && traj.Messages[0].Role == "system" {
		if s := PyStrip(traj.Messages[0].Content); s != "" {
			return s
		}
	}
	if t.template == "" {
		return t.System
	}
	return PyStrip(strings.ReplaceAll(t.System, "{max_context_window_tokens}", strconv.FormatInt(budget, 10)))
}

// Answer is the SFT target answer for probe p with this tool's own
// <think> text (Native.Answer).
func Answer(p Probe, w Width, budget int64, think bool) string {
	return Native.Answer(p, w, budget, think)
}

// joinUser0 is the p = 0 user message: user_0, a blank line, the probe.
func (t Task) joinUser0(user0, probe string) string {
	if t.compat.joinUser0 == nil {
		return Native.joinUser0(user0, probe)
	}
	return t.compat.joinUser0(user0, probe)
}

// Answer is the SFT target answer for probe p under the compat t was made
// with (Compat.Task), Native by default.
func (t Task) Answer(p Probe, w Width, budget int64, think bool) string {
	if t.compat.think == nil {
		return Native.Answer(p, w, budget, think)
	}
	return t.compat.Answer(p, w, budget, think)
}
