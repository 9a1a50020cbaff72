package validate

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"bagen-data/dataset"
	"bagen-data/probes"
	"bagen-data/reward"
	"bagen-data/rollout"
)

// trajState is the first probe seen of a trajectory, for the checks that
// every probe of a trajectory agrees.
type trajState struct {
	at       loc
	total    int64 // tokens_used + remaining_tokens
	possible bool
}

// labelLevel is the level of the one-label-per-trajectory checks: errors
// under the paper's labels, which probe sets always follow, warnings when
// the manifest does not say which rule built the data. Under bagen-v1 they
// do not apply.
func (v *validator) labelLevel(f *file) (Level, bool) {
	switch {
	case f.probeSet:
		return Error, true
	case v.manifest == nil || v.manifest.Config.Labels == "":
		return Warning, true
	case v.manifest.Config.Labels == "paper":
		return Error, true
	}
	return "", false
}

// checkRLLabels checks one RL, eval or probe-set row's labels: a row whose
// label column holds the Warehouse dimensions by the Warehouse rules, any
// other by the token rules.
func (v *validator) checkRLLabels(f *file, i int, row dataset.RLRow) {
	x := row.ExtraInfo
	at := loc{file: f.path, row: i, id: x.CustomID}
	add := func(level Level, code, summary, msg string) {
		v.fs.add(CheckLabels, level, code, f.path, summary, at.example(msg))
	}
	t, err := reward.ParseTarget(row.Label)
	wt, warehouse := t.Resources()
	warehouse = warehouse && err == nil
	if warehouse {
		v.checkWarehouseLabels(f, at, row, wt)
	} else {
		v.checkTokenLabels(f, at, row)
	}
	if want := x.TrajectoryID + dataset.ProbeSuffix + strconv.FormatInt(x.ProbeAfterTurn, 10); x.CustomID != want {
		add(Error, "custom-id", "rows whose custom_id is not <trajectory_id>_probe_after_turn_<p>", fmt.Sprintf("want %q", want))
	}
	if x.Split != f.split {
		add(Error, "split-field", "rows whose extra_info.split is not the file's split", fmt.Sprintf("split %q in the %s file", x.Split, f.split))
	}
	v.checkPosition(f, at, x)
	v.checkTrajectory(f, at, trajectoryOf(row), x, !warehouse)
}

// checkTokenLabels checks the labels of a token-budget row: ground truth,
// label column, the budget rule, margin and per_turn_tokens.
func (v *validator) checkTokenLabels(f *file, at loc, row dataset.RLRow) {
	x := row.ExtraInfo
	add := func(level Level, code, summary, msg string) {
		v.fs.add(CheckLabels, level, code, f.path, summary, at.example(msg))
	}
	v.checkGroundTruth(f, at, row)
	v.checkLabelColumn(f, at, row)
	v.checkImpossibleRemaining(f, at, row)
	if x.IsPossible && x.TokensUsed+x.RemainingTokens > x.Budget {
		add(Error, "budget-rule", "possible rows whose tokens_used + remaining_tokens exceed the budget",
			fmt.Sprintf("tokens_used %d + remaining_tokens %d = %d > budget %d", x.TokensUsed, x.RemainingTokens, x.TokensUsed+x.RemainingTokens, x.Budget))
	}
	if x.Budget <= 0 {
		add(Error, "budget", "rows without a positive budget", fmt.Sprintf("budget %d", x.Budget))
	} else if !f.probeSet && v.manifest != nil && v.manifest.Config.Budget > 0 && x.Budget != v.manifest.Config.Budget {
		add(Error, "budget", "rows whose budget differs from the manifest's", fmt.Sprintf("budget %d, manifest %d", x.Budget, v.manifest.Config.Budget))
	}
	if x.Budget > 0 {
		want := float64(x.Budget-x.TokensUsed-x.RemainingTokens) / float64(x.Budget)
		if math.Abs(x.Margin-want) > 1e-9 {
			add(Error, "margin", "rows whose margin is not (budget − tokens_used − remaining_tokens) / budget",
				fmt.Sprintf("margin %g, want %g", x.Margin, want))
		}
	}
	if x.RemainingTokens < 1 {
		add(Warning, "zero-remaining", "rows with remaining_tokens < 1 (relative error is undefined; the paper drops them)",
			fmt.Sprintf("remaining_tokens %d", x.RemainingTokens))
	}
	v.checkTurnTokens(f, at, x.TrajectoryID, x.ProbeAfterTurn, x.TokensUsed, x.PerTurnTokens, lastContent(row.Prompt))
}

func (v *validator) checkGroundTruth(f *file, at loc, row dataset.RLRow) {
	x, gt := row.ExtraInfo, row.RewardModel.GroundTruth
	add := func(code, summary, msg string) {
		v.fs.add(CheckLabels, Error, code, f.path, summary, at.example(msg))
	}
	if !x.IsPossible {
		if gt != "impossible" {
			add("impossible-ground-truth", `impossible rows whose ground_truth is not "impossible"`, fmt.Sprintf("ground_truth %q", gt))
		}
		return
	}
	if w := v.widthOf(f); w != nil {
		if want := w.GroundTruth(probes.Probe{Remaining: x.RemainingTokens, Possible: true}); gt != want {
			add("ground-truth", "ground_truth disagrees with remaining_tokens and the width "+w.Text,
				fmt.Sprintf("ground_truth %q, want %q for remaining_tokens %d", gt, want, x.RemainingTokens))
		}
		return
	}
	p := readTruth(gt)
	if (p.Kind != reward.Interval && p.Kind != reward.Scalar) || p.Low > x.RemainingTokens || x.RemainingTokens > p.High {
		add("ground-truth", "ground_truth does not hold remaining_tokens",
			fmt.Sprintf("ground_truth %q, remaining_tokens %d", gt, x.RemainingTokens))
	}
}

// checkLabelColumn checks that the label column says what extra_info and
// reward_model say, as the reward server reads it.
func (v *validator) checkLabelColumn(f *file, at loc, row dataset.RLRow) {
	x := row.ExtraInfo
	bad := func(msg string) {
		v.fs.add(CheckLabels, Error, "label-column", f.path, "label column disagrees with extra_info and reward_model", at.example(msg))
	}
	t, err := reward.ParseLabel(row.Label)
	if err != nil {
		bad(fmt.Sprintf("label %q: %v", row.Label, err))
		return
	}
	if t.Possible != x.IsPossible || (t.Possible && t.Remaining != x.RemainingTokens) {
		bad(fmt.Sprintf("label reads as remaining %d, possible %t; extra_info has %d, %t", t.Remaining, t.Possible, x.RemainingTokens, x.IsPossible))
		return
	}
	if gt, ok := reward.LabelGroundTruth(row.Label); ok && gt != row.RewardModel.GroundTruth {
		bad(fmt.Sprintf("label ground_truth %q, reward_model.ground_truth %q", gt, row.RewardModel.GroundTruth))
	}
}

// checkPosition checks probe_after_turn against total_turns: the paper's
// labels probe p = 0 … T−1, bagen-v1 also p = T, and probe sets replay the
// non-terminal prefixes k = 1 … T−1.
func (v *validator) checkPosition(f *file, at loc, x dataset.ExtraInfo) {
	first, last := int64(0), x.TotalTurns-1
	switch {
	case f.probeSet:
		first = 1
	case v.manifest != nil && v.manifest.Config.Labels == "bagen-v1":
		last = x.TotalTurns
	}
	if x.ProbeAfterTurn < first || x.ProbeAfterTurn > last {
		v.fs.add(CheckLabels, Error, "probe-position", f.path, fmt.Sprintf("rows whose probe_after_turn is outside %d … total_turns − 1", first),
			at.example(fmt.Sprintf("probe_after_turn %d, total_turns %d", x.ProbeAfterTurn, x.TotalTurns)))
	}
}

// checkTurnTokens checks per_turn_tokens: one entry per completed turn,
// numbered 1 … p, non-negative, summing to at most tokens_used (when
// known: used ≥ 0), and shown in the probe text exactly.
func (v *validator) checkTurnTokens(f *file, at loc, traj string, p, used int64, turns []dataset.TurnTokens, probeText string) {
	bad := func(msg string) {
		v.fs.add(CheckLabels, Error, "per-turn-tokens", f.path, "per_turn_tokens disagree with the probe position, tokens_used or the probe text", at.example(msg))
	}
	if int64(len(turns)) != p {
		bad(fmt.Sprintf("%d entries for probe_after_turn %d", len(turns), p))
		return
	}
	var sum int64
	shown := make([]probes.TurnTokens, len(turns))
	for k, t := range turns {
		if t.Turn != int64(k+1) || t.InputTokens < 0 || t.OutputTokens < 0 {
			bad(fmt.Sprintf("per_turn_tokens[%d] = {turn %d, input %d, output %d}, want turn %d and non-negative counts", k, t.Turn, t.InputTokens, t.OutputTokens, k+1))
			return
		}
		sum += t.InputTokens + t.OutputTokens
		shown[k] = probes.TurnTokens{In: t.InputTokens, Out: t.OutputTokens}
	}
	if used >= 0 && sum > used {
		bad(fmt.Sprintf("per_turn_tokens sum to %d > tokens_used %d", sum, used))
		return
	}
	if usage := probes.UsageText(shown, int(p)); !strings.Contains(probeText, usage) {
		bad(fmt.Sprintf("the probe text does not show %q", clip(usage, 120)))
		return
	}
	if p >= 1 && used >= 0 {
		v.checkSystemTokens(f, at, traj, used-sum)
	}
}

// group names the files whose rows are compared with each other: the
// files of one build, or one probe set on its own.
func group(f *file) string {
	if f.probeSet {
		return f.path
	}
	return ""
}

// checkSystemTokens: after the first turn tokens_used − Σ per_turn_tokens is
// the system prompt's token count, the same in every row of one build. The
// replay (a probe set's, a build's with --accounting replay) counts it per
// rollout (0 where the log's first request holds the system prompt, the
// task's count where the log records no inputs), so there it is the same
// within each trajectory.
func (v *validator) checkSystemTokens(f *file, at loc, traj string, sys int64) {
	key := group(f)
	if f.perRollout() {
		key += "\x00" + traj
	}
	seen := v.sysCount[key]
	if seen == nil {
		v.sysCount[key] = map[int64]loc{sys: at}
		return
	}
	if _, ok := seen[sys]; ok {
		return
	}
	for first, fl := range seen {
		v.fs.add(CheckLabels, Error, "system-tokens", "",
			"tokens_used − Σ per_turn_tokens (the system prompt's tokens, one count per build) differs between rows",
			at.example(fmt.Sprintf("%d here, %d at %s row %d", sys, first, fl.file, fl.row)))
		break
	}
}

// checkTrajectory: under the paper's labels one trajectory has one label
// and, when tokens is set (not on Warehouse rows), one total tokens_used +
// remaining_tokens at every probe (remaining = total − used). Trajectories
// of a probe set are compared within the file.
func (v *validator) checkTrajectory(f *file, at loc, traj string, x dataset.ExtraInfo, tokens bool) {
	total := x.TokensUsed + x.RemainingTokens
	key := group(f) + "\x00" + traj
	s, ok := v.trajs[key]
	if !ok {
		v.trajs[key] = &trajState{at: at, total: total, possible: x.IsPossible}
		return
	}
	level, applies := v.labelLevel(f)
	if !applies {
		return
	}
	note := ""
	if level == Warning {
		note = " (no manifest says which label rule built the data; bagen-v1 labels differ at p = 0 and p = T)"
	}
	where := fmt.Sprintf("%s row %d", s.at.file, s.at.row)
	if x.IsPossible != s.possible {
		v.fs.add(CheckLabels, level, "trajectory-label", "", "probes of one trajectory with different is_possible"+note,
			at.example(fmt.Sprintf("is_possible %t, %t at %s", x.IsPossible, s.possible, where)))
	}
	if tokens && total != s.total {
		v.fs.add(CheckLabels, level, "trajectory-total", "", "probes of one trajectory whose tokens_used + remaining_tokens differ"+note,
			at.example(fmt.Sprintf("tokens_used + remaining_tokens = %d, %d at %s", total, s.total, where)))
	}
}

// trajectoryOf is extra_info.trajectory_id, or the custom_id before
// "_probe_after_turn_".
func trajectoryOf(row dataset.RLRow) string {
	if row.ExtraInfo.TrajectoryID != "" {
		return row.ExtraInfo.TrajectoryID
	}
	return dataset.TrajectoryOf(row.ExtraInfo.CustomID)
}

func lastContent(msgs []rollout.Message) string {
	if len(msgs) == 0 {
		return ""
	}
	return msgs[len(msgs)-1].Content
}

// clip shortens s to at most n runes for a message.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
