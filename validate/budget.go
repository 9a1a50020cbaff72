package validate

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"bagen-data/rollout"
)

// statedBudget finds the budgets a prompt states: "within N tokens" and
// "within N total tokens", as every preset's probe text and the paper's
// templates say it ({max_context_window_tokens}).
var statedBudget = regexp.MustCompile(`\bwithin (\d+) (?:total )?tokens\b`)

// promptBudgets returns the distinct budgets stated in the probe message
// and the system message (a --probe-prompt template may put it there).
func promptBudgets(msgs []rollout.Message) []int64 {
	var out []int64
	scan := func(text string) {
		for _, m := range statedBudget.FindAllStringSubmatch(text, -1) {
			n, err := strconv.ParseInt(m[1], 10, 64)
			if err == nil && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	if len(msgs) > 0 && msgs[0].Role == "system" {
		scan(msgs[0].Content)
	}
	if n := len(msgs); n > 0 && msgs[n-1].Role == "user" {
		scan(msgs[n-1].Content)
	}
	return out
}

// checkPromptBudget compares a row's budget column with the budget its
// prompt states: the estimator reads the prompt, the reward's is_possible
// was decided with the column, so a difference trains a contradiction.
// msgs is the prompt as the model sees it (an SFT row without its answer).
func (v *validator) checkPromptBudget(f *file, at loc, budget int64, msgs []rollout.Message) {
	if budget <= 0 {
		return // reported by the budget check (or a Warehouse row, whose budgets are prose)
	}
	if n := len(msgs); n == 0 || msgs[n-1].Role != "user" {
		return // no probe message: reported by the shape check
	}
	stated := promptBudgets(msgs)
	if len(stated) == 0 {
		v.fs.add(CheckLabels, Warning, "budget-unstated", f.path,
			`prompts that state no token budget ("within N tokens") in the probe or system message: the model cannot know the budget its label was decided with`,
			at.example(fmt.Sprintf("budget column %d", budget)))
		return
	}
	if len(stated) == 1 && stated[0] == budget {
		return
	}
	says := make([]string, len(stated))
	for i, n := range stated {
		says[i] = fmt.Sprintf("within %d tokens", n)
	}
	v.fs.add(CheckLabels, Error, "prompt-budget", f.path,
		"rows whose budget column is not the budget their prompt states (the label was decided with one, the model is told the other)",
		at.example(fmt.Sprintf("budget %d; the prompt says %s", budget, strings.Join(says, " and "))))
}

// checkManifestBudget compares a row's budget with the manifest's --budget
// when the build fixed one for every trajectory (0 records each
// trajectory's own budget, checked against the prompt instead).
func (v *validator) checkManifestBudget(f *file, at loc, budget int64) {
	if f.probeSet || v.manifest == nil || v.manifest.Config.Budget <= 0 || budget == v.manifest.Config.Budget {
		return
	}
	v.fs.add(CheckLabels, Error, "budget", f.path, "rows whose budget differs from the manifest's",
		at.example(fmt.Sprintf("budget %d, manifest %d", budget, v.manifest.Config.Budget)))
}

// budgetSeen is the first budget seen of a trajectory.
type budgetSeen struct {
	budget int64
	at     loc
}

// checkTrajectoryBudget: every probe of one trajectory, in any split, has
// the trajectory's one budget (build takes it from --budget, the log's
// "budget" or the task, once per trajectory).
func (v *validator) checkTrajectoryBudget(f *file, at loc, traj string, budget int64) {
	key := group(f) + "\x00" + traj
	s, ok := v.budgets[key]
	if !ok {
		v.budgets[key] = budgetSeen{budget: budget, at: at}
		return
	}
	if s.budget != budget {
		v.fs.add(CheckLabels, Error, "trajectory-budget", "", "probes of one trajectory with different budgets",
			at.example(fmt.Sprintf("budget %d, %d at %s row %d", budget, s.budget, s.at.file, s.at.row)))
	}
}
