package grpo

import (
	"context"
	"math"

	"bagen-data/eval"
	"bagen-data/reward"
)

// sftEpoch runs one pass of cross-entropy steps over the shuffled SFT
// examples toward their nearest actions.
func (t *trainer) sftEpoch() error {
	order := t.shuffled(len(t.data.SFT))
	for lo := 0; lo < len(order); lo += t.cfg.SFTBatch {
		var s Samples
		for _, i := range order[lo:min(lo+t.cfg.SFTBatch, len(order))] {
			e := t.data.SFT[i]
			s.X = append(s.X, e.X)
			s.Actions = append(s.Actions, e.Want)
		}
		loss, grads, err := t.st.Policy.SFTGrad(s)
		if err != nil {
			return err
		}
		norm := t.st.Opt.Step(t.st.Policy.Params(), grads)
		t.st.Step++
		t.res.Steps++
		if err := t.write(Record{Type: "sft_step", Phase: "sft", Epoch: t.st.Epoch + 1, Step: t.st.Step,
			SFT: &SFTStep{Loss: loss, GradNorm: norm}}); err != nil {
			return err
		}
	}
	return nil
}

// grpoEpoch runs GRPO steps over the shuffled RL prompts, Batch prompts a
// step.
func (t *trainer) grpoEpoch(ctx context.Context) error {
	order := t.shuffled(len(t.data.RL))
	for lo := 0; lo < len(order); lo += t.cfg.Batch {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := t.grpoStep(order[lo:min(lo+t.cfg.Batch, len(order))]); err != nil {
			return err
		}
	}
	return nil
}

// group is one prompt's sampled actions and their scores.
type group struct {
	ex      Example
	actions []Action
	rewards []float64
	adv     []float64
	old     []float64 // log π_old
	ref     []float64 // log π_ref
}

// rollout samples Group actions for ex from the current policy and scores
// each answer with the rule reward.
func (t *trainer) rollout(ex Example) group {
	d, dref := t.st.Policy.Forward(ex.X), t.st.Ref.Forward(ex.X)
	g := group{ex: ex}
	for range t.cfg.Group {
		a := d.Sample(t.rng)
		g.actions = append(g.actions, a)
		g.rewards = append(g.rewards, reward.Score(t.space.Answer(a, ex.Budget), ex.Truth))
		g.old = append(g.old, d.LogProb(a))
		g.ref = append(g.ref, dref.LogProb(a))
	}
	return g
}

// grpoStep samples the batch's groups, computes advantages and takes
// Updates Adam steps on them; uniform groups stay in with advantage 0
// unless DropUniformGroups leaves them out.
func (t *trainer) grpoStep(batch []int) error {
	var groups []group
	var rec GRPOStep
	var m meanBy
	var imp int
	var kl float64
	for _, i := range batch {
		g := t.rollout(t.data.RL[i])
		for j, a := range g.actions {
			m.add(g.rewards[j], g.ex.Truth.Possible)
			kl += K3(g.old[j], g.ref[j])
			if a.Impossible {
				imp++
			}
		}
		groups = append(groups, g)
	}
	kept, uniform := keep(groups, t.cfg.DropUniformGroups, t.cfg.CenterOnly)
	n := len(batch) * t.cfg.Group
	rec.Groups, rec.ZeroVarGroups = len(batch), uniform
	rec.Reward, rec.RewardPossible, rec.RewardImpossible = m.means()
	rec.ImpossibleRate = float64(imp) / float64(n)
	rec.KL = kl / float64(n)
	if err := t.update(kept, &rec); err != nil {
		return err
	}
	t.st.Step++
	t.res.Steps++
	if err := t.write(Record{Type: "grpo_step", Phase: "grpo", Epoch: t.st.Epoch + 1, Step: t.st.Step, GRPO: &rec}); err != nil {
		return err
	}
	if t.opt.afterStep != nil {
		t.opt.afterStep(t.st)
	}
	return nil
}

// keep sets each group's advantages and returns the groups the objective
// sees: all of them (verl's GRPO), or with drop those whose rewards are
// not all equal (DAPO's dynamic sampling filter, without the resampling).
// uniform counts the groups whose rewards are all equal. center picks
// CenteredAdvantages over Advantages.
func keep(groups []group, drop, center bool) (kept []group, uniform int) {
	adv := Advantages
	if center {
		adv = CenteredAdvantages
	}
	for _, g := range groups {
		var u bool
		if g.adv, u = adv(g.rewards); u {
			uniform++
			if drop {
				continue
			}
		}
		kept = append(kept, g)
	}
	return kept, uniform
}

// samplesOf flattens groups into one mini-batch.
func samplesOf(groups []group) Samples {
	var s Samples
	for _, g := range groups {
		for j, a := range g.actions {
			s.X = append(s.X, g.ex.X)
			s.Actions = append(s.Actions, a)
			s.Adv = append(s.Adv, g.adv[j])
			s.OldLogp = append(s.OldLogp, g.old[j])
			s.RefLogp = append(s.RefLogp, g.ref[j])
		}
	}
	return s
}

// update splits the groups into Updates mini-batches (in order) and
// takes one Adam step on each; the first sees ρ = 1, later ones the
// policy already moved by the earlier ones, which is where clipping acts.
func (t *trainer) update(kept []group, rec *GRPOStep) error {
	rec.ClipFrac, rec.Loss = eval.NaN, eval.NaN
	if len(kept) == 0 {
		return nil
	}
	parts := min(t.cfg.Updates, len(kept))
	var loss float64
	var clipped, samples int
	for u := range parts {
		s := samplesOf(kept[u*len(kept)/parts : (u+1)*len(kept)/parts])
		st, grads, err := t.st.Policy.GRPOGrad(s, *t.cfg.Clip, *t.cfg.KL)
		if err != nil {
			return err
		}
		t.st.Opt.Step(t.st.Policy.Params(), grads)
		loss += st.Loss
		clipped += st.Clipped
		samples += len(s.X)
	}
	rec.Updates = parts
	rec.ClipFrac = eval.Num(float64(clipped) / float64(samples))
	rec.Loss = eval.Num(loss / float64(parts))
	if math.IsNaN(loss) {
		return ErrDiverged
	}
	return nil
}
