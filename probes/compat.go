package probes

import (
	"fmt"
	"strings"
	"unicode"

	"bagen-data/reward"
	"bagen-data/rollout"
)

// Compat is whose behaviour a build or benchmark reproduces: this tool's
// own (Native) or the authors' code as shipped at mll-lab-nu/BAGEN commit
// 58bef4c (BagenV1Compat). It is chosen once, from --compat, and carried as a
// value; each field is one behaviour that differs between the two. A
// Compat is never modified, so it is safe for concurrent use.
type Compat struct {
	// Name is the --compat value: "" for Native, "bagen-v1".
	Name string
	// Labels is the labelling rule the compat implies.
	Labels Labels
	// systems are the default system prompts by task, overriding the
	// presets' (nil: the presets').
	systems map[string]string
	// joinUser0 joins user_0 (reward annotation removed) and the probe text
	// at p = 0.
	joinUser0 func(user0, probe string) string
	// think is the templated reasoning of an SFT answer with --think.
	think func(p Probe, budget int64) string
	// bench are the benchmark's estimation prompts by task (system, user
	// template); nil: the presets'.
	bench map[string][2]string
	// subsample caps a benchmark family (nil: Subsample).
	subsample func(turns []int, cands [][]Candidate, s Sampling) []Candidate
	// median is --budget median (nil: LowerMedian).
	median func([]int64) int64
	// accounting turns recorded usage into per-turn usage.
	accounting accountingRule
	// success is how a rollout's own fields decide success.
	success rollout.SuccessRule
	// dialogue selects and replays an estimation dialogue's turns under a
	// context limit (0: none known yet) (nil: as the reader does).
	dialogue func(t rollout.Trajectory, limit int64) rollout.Trajectory
}

// Native is this tool's behaviour: the paper's appendix prompts and
// labels chosen by --labels.
var Native = Compat{joinUser0: func(u, p string) string { return u + "\n\n" + p }, think: nativeThink}

// BagenV1Compat is the behaviour of mll-lab-nu/BAGEN at 58bef4c. For
// build (scripts/budget-rl/prepare_budget_probe.py, see Preset): bagen-v1
// labels, the script's SYSTEM_PROMPTS and one estimation template, user_0
// right-stripped before the probe text at p = 0, the script's <think>
// texts and its success rule (rollout.BagenV1Success). For the benchmark
// (TokenEstimationEnv and run_token_estimation_env.py, see Bench): the
// shipped estimation prompts, the rollout's own system prompt, raw
// history, estimation dialogues read as their env reads them
// (bagenV1Dialogue, with the implicit over-limit cut of CutOverLimit once
// the budgets are known), their usage conversion (bagenV1Accounting),
// their median budget (PyMedian) and SWE-bench sample (SubsampleBagenV1).
// The Warehouse challenges and their whole-unit truths are the bagen-v1
// Preset's. The split and balancing of a build are the dataset package's
// (AssignBagenV1, BalancedBagenV1).
var BagenV1Compat = Compat{
	Name:   "bagen-v1",
	Labels: LabelsBagenV1,
	systems: map[string]string{
		"sokoban":   bagenV1Sokoban,
		"searchr1":  SearchR1System,
		"swebench":  bagenV1SWEBench,
		"warehouse": bagenV1Warehouse,
	},
	joinUser0: func(u, p string) string { return strings.TrimRightFunc(u, pySpace) + "\n\n" + p },
	think:     bagenV1Think,
	bench: map[string][2]string{
		"sokoban":  {bagenV1SokobanEstimationSystem, bagenV1SokobanEstimationUser},
		"searchr1": {bagenV1SearchR1EstimationSystem, bagenV1SearchR1EstimationUser},
		"swebench": {bagenV1SWEBenchEstimationSystem, bagenV1SWEBenchEstimationUser},
	},
	subsample:  SubsampleBagenV1,
	median:     PyMedian,
	accounting: bagenV1Accounting,
	success:    rollout.BagenV1Success,
	dialogue:   bagenV1Dialogue,
}

// The reference script's system prompts (SYSTEM_PROMPTS) where they differ
// from the presets'.
const (
	bagenV1Sokoban = "You're a helpful assistant. You are solving the Sokoban puzzle. " +
		"Push all boxes to targets. You are given the grid and zero-indexed " +
		"coordinates of the player, boxes, and targets. You can push but not " +
		"pull boxes, and cannot push a box through a wall.\n" +
		"Your available actions are:\n" +
		"Up, Down, Left, Right\n" +
		`You may output at most 3 action(s) in a single turn, separated by ` +
		`the action separator " || ".`
	bagenV1SWEBench = "You are a software engineering agent working on SWE-bench style GitHub " +
		"issues. Inspect the repository, make targeted edits, run validation when " +
		"useful, and submit a final patch when the issue is resolved."
	bagenV1Warehouse = "You are a warehouse-management planning agent. Read the current inventory, " +
		"cash, demand, production, transit, and retailer state, then choose valid " +
		"procurement, allocation, financing, or pass actions to keep the business " +
		"operating successfully."
)

// ParseCompat reads --compat: "" (or "none") for Native, or bagen-v1.
func ParseCompat(s string) (Compat, error) {
	switch s {
	case "", "none":
		return Native, nil
	case "bagen-v1":
		return BagenV1Compat, nil
	}
	return Compat{}, fmt.Errorf("compat %q: want bagen-v1 (the behaviour of mll-lab-nu/BAGEN at 58bef4c) or none", s)
}

func (c Compat) String() string {
	if c.Name == "" {
		return "none"
	}
	return c.Name
}

// Task returns t rendering its prompts and answers the compat's way; the
// system prompt is left as it is (see Preset).
func (c Compat) Task(t Task) Task {
	t.compat = c
	return t
}

// Preset is the task preset called name for `bagen-data build` under c.
// Under BagenV1Compat it is the reference script's: its SYSTEM_PROMPTS
// entry and, for every task, its one estimation template (the Sokoban
// text, <think> without spaces), rendering the compat's way.
func (c Compat) Preset(name string) (Task, error) {
	t, err := LookupTask(name)
	if err != nil {
		return t, err
	}
	if s, ok := c.systems[name]; ok {
		t.System, t.probe, t.thinkSpace = s, sokobanProbe, false
	}
	return c.Task(t), nil
}

// Bench is the task preset called name for `bagen-data probes` under c.
// Under BagenV1Compat it renders as the authors' TokenEstimationEnv: the
// rollout's own system prompt when it has one (include_source_system),
// else the task's shipped estimation system prompt; the history's user
// messages as logged; and the shipped estimation user prompt, filled and
// stripped. Warehouse keeps its own renderer.
func (c Compat) Bench(name string) (Task, error) {
	t, err := LookupTask(name)
	if err != nil {
		return t, err
	}
	if p, ok := c.bench[name]; ok {
		t.System, t.template, t.sourceSystem, t.rawHistory = p[0], p[1], true, true
	}
	return c.Task(t), nil
}

// Subsample caps a benchmark family the compat's way: Subsample, or
// SubsampleBagenV1.
func (c Compat) Subsample(turns []int, cands [][]Candidate, s Sampling) []Candidate {
	if c.subsample == nil {
		return Subsample(turns, cands, s)
	}
	return c.subsample(turns, cands, s)
}

// Budgets is Budgets with the compat's --budget median: the lower median
// (Native), or the authors' statistics.median rule (PyMedian).
func (c Compat) Budgets(rs []Replay, b Budget, fallback int64, task string) ([]int64, error) {
	median := c.median
	if median == nil {
		median = LowerMedian
	}
	return budgets(rs, b, fallback, task, median)
}

// Decode is Decode with a rollout's success read by the compat's rule:
// the readers' (Native) or the authors' (rollout.BagenV1Success: the
// reference script's infer_task_success for rollout JSONL); outcomes the
// log's own fields do not decide are left as read. Under BagenV1Compat an
// estimation dialogue is then read as their TokenEstimationEnv reads it
// (bagenV1Dialogue).
func (c Compat) Decode(rec rollout.Record) (rollout.Trajectory, error) {
	t, err := rollout.Decode(rec)
	if err != nil {
		return t, err
	}
	t = t.WithSuccessRule(c.success)
	if c.dialogue != nil {
		t = c.dialogue(t, 0)
	}
	return t, nil
}

// CutOverLimit applies what the compat does once each rollout's budget is
// known; Native does nothing. Under BagenV1Compat an estimation dialogue
// is read again with its budget as the env's max_context_window_tokens:
// the first turn whose total tokens pass it, that did not succeed, has
// assistant text and executed no action is dropped with every turn after
// it (their implicit truncation), and the rollout is accounted again; a
// rollout left without a turn is dropped with its budget, as their env
// skips it. The budgets come first (a --budget median is the median of
// the totals before any cut, as a first pass over the input gives it).
// rs and budgets are not modified.
func (c Compat) CutOverLimit(rs []Replay, budgets []int64, o ReplayOptions) ([]Replay, []int64, error) {
	if c.dialogue == nil {
		return rs, budgets, nil
	}
	outR, outB := make([]Replay, 0, len(rs)), make([]int64, 0, len(budgets))
	for i, r := range rs {
		if r.Traj.Extra.Dialogue == nil {
			outR, outB = append(outR, r), append(outB, budgets[i])
			continue
		}
		// From the logged success again: the first reading added the
		// success of turns the cut may drop.
		t := c.dialogue(r.Traj.WithSuccessRule(c.success), budgets[i])
		if len(t.Messages) == 0 {
			continue
		}
		nr, err := c.NewReplay(t, o.Counter, o.System)
		if err != nil {
			return nil, nil, err
		}
		nr.Traj.ID = r.Traj.ID
		outR, outB = append(outR, nr), append(outB, budgets[i])
	}
	return outR, outB, nil
}

// Options returns o with the labels the compat implies (Native leaves
// them as given).
func (c Compat) Options(o Options) Options {
	if c.Name != "" {
		o.Labels = c.Labels
	}
	return o
}

// Answer is the SFT target answer for probe p under c: <answer>GT</answer>,
// with think a templated reasoning before it.
func (c Compat) Answer(p Probe, w Width, budget int64, think bool) string {
	gt := reward.Tag(w.GroundTruth(p))
	if !think {
		return gt
	}
	return "<think>" + c.think(p, budget) + "</think>" + gt
}

func nativeThink(p Probe, budget int64) string {
	switch {
	case p.Possible && p.Remaining == 0: // the reference script's words
		return fmt.Sprintf("All %d turns completed using %d tokens. The task is finished.", p.After, p.Used)
	case p.Possible:
		return fmt.Sprintf("I have completed %d turns and used %d of %d tokens. The remaining turns should need about %d more tokens, which fits the budget.", p.After, p.Used, budget, p.Remaining)
	}
	return fmt.Sprintf("I have completed %d turns and used %d of %d tokens. The task will not finish successfully within the budget.", p.After, p.Used, budget)
}

// bagenV1Think is _make_target / _make_impossible_target's reasoning, with
// avg_per_turn = used // p (used at p = 0).
func bagenV1Think(p Probe, budget int64) string {
	avg := p.Used
	if p.After > 0 {
		avg = p.Used / int64(p.After)
	}
	switch {
	case !p.Possible && p.After == 0:
		return "Looking at the initial state, the task seems hard to solve and prior rollouts have not converged."
	case !p.Possible:
		return fmt.Sprintf("I've completed %d turns using %d tokens (%d per turn). At this rate the %d budget will be exceeded.", p.After, p.Used, avg, budget)
	case p.Remaining == 0:
		return fmt.Sprintf("All %d turns completed using %d tokens. The task is finished.", p.After, p.Used)
	case p.After == 0:
		return fmt.Sprintf("Given the initial task state and typical trajectories, I expect the full solution will need about %d tokens.", p.Remaining)
	}
	return fmt.Sprintf("I've completed %d turns using %d tokens, averaging about %d tokens per turn. The task should be completable within the budget.", p.After, p.Used, avg)
}

// pySpace is Python's str.isspace for one character.
func pySpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }
