package validate

import (
	"crypto/sha256"
	"fmt"

	"bagen-data/dataset"
	"bagen-data/reward"
	"bagen-data/rollout"
)

// splitOrder is the order leakage pairs are reported in.
var splitOrder = []string{dataset.SplitSFT, dataset.SplitRL, dataset.SplitEval}

// recordTrajectory notes that a row of split belongs to traj.
func (v *validator) recordTrajectory(split, traj string, at loc) {
	m := v.inSplit[split]
	if m == nil {
		m = map[string]loc{}
		v.inSplit[split] = m
	}
	if _, ok := m[traj]; !ok {
		m[traj] = at
		v.splits[split] = append(v.splits[split], trajLoc{traj: traj, at: at})
	}
}

// promptKey identifies a prompt's text: every role and content.
func promptKey(msgs []rollout.Message) [32]byte {
	h := sha256.New()
	for _, m := range msgs {
		h.Write([]byte(m.Role))
		h.Write([]byte{0})
		h.Write([]byte(m.Content))
		h.Write([]byte{0})
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// trainPrompt is where a training prompt occurs: its first row, its
// first row in each trajectory, and the first row teaching each answer.
type trainPrompt struct {
	first   loc
	byTraj  map[string]loc
	answers map[reward.Prediction]loc
}

// recordPrompt notes a training prompt (SFT messages without the answer,
// or an RL prompt) of trajectory traj and the answer it teaches (the SFT
// answer, or the RL ground truth, as the reward parser reads it).
func (v *validator) recordPrompt(msgs []rollout.Message, traj string, at loc, answer reward.Prediction) {
	k := promptKey(msgs)
	tp, ok := v.prompts[k]
	if !ok {
		tp = &trainPrompt{first: at, byTraj: map[string]loc{}, answers: map[reward.Prediction]loc{}}
		v.prompts[k] = tp
	}
	if _, ok := tp.byTraj[traj]; !ok {
		tp.byTraj[traj] = at
	}
	if _, ok := tp.answers[answer]; !ok {
		tp.answers[answer] = at
	}
}

// truthAnswer is an RL row's ground truth as the reward parser reads an
// answer, to compare with what training rows teach.
func truthAnswer(row dataset.RLRow) reward.Prediction {
	return reward.Parse("<answer>" + row.RewardModel.GroundTruth + "</answer>")
}

// leakage reports trajectories in two splits and eval prompts that also
// appear in training data.
func (v *validator) leakage(files []*file) {
	for i, a := range splitOrder {
		for _, b := range splitOrder[i+1:] {
			for _, t := range v.splits[b] {
				first, ok := v.inSplit[a][t.traj]
				if !ok {
					continue
				}
				v.fs.add(CheckLeakage, Error, "trajectory-leak", a+"/"+b,
					fmt.Sprintf("trajectories with probes in both %s and %s (split by trajectory, never by probe)", a, b),
					t.at.example(fmt.Sprintf("trajectory %q is also in %s at %s row %d", t.traj, a, first.file, first.row)))
			}
		}
	}
	for _, f := range files {
		if f.split != dataset.SplitEval {
			continue
		}
		for i, row := range f.rl {
			tp, ok := v.prompts[promptKey(row.Prompt)]
			if !ok {
				continue
			}
			at := loc{file: f.path, row: i, id: row.ExtraInfo.CustomID}
			if same, ok := tp.byTraj[trajectoryOf(row)]; ok {
				v.fs.add(CheckLeakage, Error, "prompt-leak", f.path, "eval probes whose very prompt is in training data",
					at.example(fmt.Sprintf("same prompt as %s row %d (%s)", same.file, same.row, same.id)))
				continue
			}
			msg := fmt.Sprintf("same prompt as %s row %d (%s)", tp.first.file, tp.first.row, tp.first.id)
			if completedTurns(row.Prompt) {
				if same, ok := tp.answers[truthAnswer(row)]; ok {
					v.fs.add(CheckLeakage, Error, "prefix-leak", f.path,
						"eval prompts with completed turns identical to a training prompt of another trajectory id with the same answer: the same trajectory prefix under two ids (one log read twice, rows copied)",
						at.example(fmt.Sprintf("same prompt and answer as %s row %d (%s), completed turns included", same.file, same.row, same.id)))
					continue
				}
				v.fs.add(CheckLeakage, Warning, "prefix-repeat", f.path,
					"eval prompts with completed turns identical to a training prompt of another trajectory that teaches another answer: two rollouts that began alike (one start state, the same first actions)",
					at.example(msg+", completed turns included, another answer"))
				continue
			}
			v.fs.add(CheckLeakage, Warning, "prompt-repeat", f.path,
				"eval start-state prompts (no completed turn) identical to a training prompt of another trajectory: one start state rolled out more than once, which a model can answer from memory",
				at.example(msg+", a start state"))
		}
	}
}

// completedTurns reports a prompt that shows an assistant turn: two
// trajectories that share it share more than a start state.
func completedTurns(msgs []rollout.Message) bool {
	for _, m := range msgs {
		if m.Role == "assistant" {
			return true
		}
	}
	return false
}
