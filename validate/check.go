package validate

import (
	"fmt"

	"bagen-data/dataset"
)

// checkFile runs the row checks of one readable file.
func (v *validator) checkFile(f *file) {
	if !f.checked {
		return
	}
	v.checkAccounting(f)
	for i, row := range f.rl {
		at := loc{file: f.path, row: i, id: row.ExtraInfo.CustomID}
		v.checkRLLabels(f, i, row)
		v.checkShape(f, at, row.Prompt, row.ExtraInfo.ProbeAfterTurn, true)
		traj := trajectoryOf(row)
		v.checkRowAgainstPrompt(f, at, traj, row)
		if !f.probeSet {
			v.recordTrajectory(f.split, traj, at)
			if f.split != dataset.SplitEval {
				v.recordPrompt(row.Prompt, traj, at, truthAnswer(row))
			}
		}
		v.checkLength(f, at, row.Prompt)
	}
	for i, row := range f.sft {
		at := loc{file: f.path, row: i, id: row.CustomID}
		p, pOK := v.checkSFTLabels(f, i, row)
		v.checkShape(f, at, row.Messages, p, pOK)
		v.checkSFTBudget(f, at, row)
		if pOK {
			v.recordSFTProbe(at, row, p)
		}
		traj := dataset.TrajectoryOf(row.CustomID)
		v.recordTrajectory(f.split, traj, at)
		if n := len(row.Messages); n > 0 {
			prompt := row.Messages[:n-1]
			answer, _ := sftAnswer(row)
			v.recordPrompt(prompt, traj, at, answer)
			v.checkLength(f, at, prompt)
		}
	}
}

// crossChecks runs the checks that need every file: leakage, balance and
// the longest prompt.
func (v *validator) crossChecks(files []*file) {
	v.leakage(files)
	v.sftTruths()
	for _, f := range files {
		if f.checked {
			v.balance(f, v.summary(f))
		}
	}
	if v.cfg.Counter != nil && v.longest > 0 {
		v.fs.add(CheckSize, Info, "prompt-tokens", "",
			fmt.Sprintf("longest prompt (limit %d; ChatML framing counted as %d tokens per message + %d)", v.cfg.MaxPromptTokens, framingPerMessage, framingGeneration),
			v.longLoc.example(fmt.Sprintf("%d tokens", v.longest)))
	}
}

// checkRowAgainstPrompt checks an RL, eval or probe-set row's columns
// against what its prompt says and against the task: the budget the
// prompt states, the trajectory's one budget, the routing columns and,
// with a tokenizer, the token counts of the prompt's own messages.
func (v *validator) checkRowAgainstPrompt(f *file, at loc, traj string, row dataset.RLRow) {
	v.checkRouting(f, at, row)
	if isWarehouse(row) {
		return
	}
	v.checkPromptBudget(f, at, row.ExtraInfo.Budget, row.Prompt)
	v.checkTrajectoryBudget(f, at, traj, row.ExtraInfo.Budget)
	v.checkCountedTokens(f, at, row)
}
