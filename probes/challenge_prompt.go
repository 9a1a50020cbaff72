package probes

import (
	"fmt"
	"strconv"
	"strings"

	"bagen-data/reward"
	"bagen-data/rollout"
)

// WarehouseEstimatorSystem is the system prompt of the paper's External
// Warehouse prompt (appendix "Prompts"). It replaces the agent's system
// prompt in Warehouse probes: the estimator judges a logged rollout.
const WarehouseEstimatorSystem = `You are an evaluation agent for historical warehouse-management rollouts.
Determine whether the rollout can still finish successfully within the remaining resource budgets while reaching the target cash threshold.
If it can, estimate the remaining time, warehouse cumulative occupancy, and cumulative cost still needed from the next turn onward.
Follow the required output format exactly.`

// warehouseProbe is the user prompt of the External Warehouse prompt, with
// its output specification.
const warehouseProbe = `Based on the provided warehouse rollout context, you are given the following information:
1. You have completed {completed_weeks} weeks in {completed_turns} turns.
2. Current cumulative usage so far:
- time_weeks: {current_time_weeks}
- warehouse_item_weeks: {current_warehouse_item_weeks}
- cumulative_cost_usd: {current_cost_usd}
3. Current cash is {current_cash_usd} USD. To count as finished, final cash must reach at least {target_cash_usd} USD.
4. Historical resource consumption by completed step is:
{resource_consumption_text}
5. The rollout must finish within all three budgets:
- time_weeks <= {budget_time_weeks}
- warehouse_item_weeks <= {budget_warehouse_item_weeks}
- cumulative_cost_usd <= {budget_cost_usd}

Now, estimate:
1. Whether the rollout can still finish successfully within all three budgets while also reaching the target cash.
2. If yes, how much additional usage is still needed from the next turn onward. Return one interval for each metric.
3. If no, answer "impossible".
4. Prioritize the can-finish judgment over interval tightness. If you think the rollout can finish within budget, make each interval as tight as possible while still covering the true remaining value.

Output exactly one of the following:
<think>[YOUR THINKING]</think><answer>time_weeks:[est_low, est_high], warehouse_item_weeks:[est_low, est_high], cumulative_cost_usd:[est_low, est_high]</answer>
or
<think>[YOUR THINKING]</think><answer>impossible</answer>`

// WarehouseProbe is the truth of one challenge-conditioned Warehouse probe
// after turn After.
type WarehouseProbe struct {
	After   int
	Current Step // usage and cash after turn After
	// Remaining is the realized total − Current, per dimension, in the
	// log's cents; with a Whole challenge (the bagen-v1 preset) the
	// difference of the two rounded to whole units, at least 0, as the
	// authors' money_estimation env computes it.
	Remaining Usage
	Challenge Challenge
	Possible  bool // Challenge.Feasible of the rollout
}

// WarehouseProbes are the probes k = 1 … T−1 of a rollout with ledger l
// (one step per turn) under challenge c.
func WarehouseProbes(l Ledger, c Challenge, success bool) []WarehouseProbe {
	if len(l.Steps) < 2 {
		return nil
	}
	possible := c.Feasible(l, success)
	total := l.Total()
	out := make([]WarehouseProbe, len(l.Steps)-1)
	for i := range out {
		cur := l.Steps[i]
		rem := total.Sub(cur.Usage)
		if c.Whole {
			rem = total.wholeSub(cur.Usage)
		}
		out[i] = WarehouseProbe{After: i + 1, Current: cur, Remaining: rem, Challenge: c, Possible: possible}
	}
	return out
}

// Target is the probe's truth: the remaining usage per dimension and
// whether the rollout can still meet the challenge. Its GroundTruth and
// Label are the probe's ground-truth answer and label column.
func (w WarehouseProbe) Target() reward.Target {
	r := w.Remaining
	return reward.WarehouseTarget(reward.WarehouseTruth{
		Remaining: [reward.NumDims]float64{r.TimeWeeks, r.WarehouseItemWeeks, r.CostUSD}, Possible: w.Possible})
}

// qty formats a quantity without exponent or trailing zeros: 2, 71492,
// 591668.08.
func qty(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// usd formats dollars with two decimals.
func usd(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// WarehouseText is the estimation prompt of probe w over ledger l.
func WarehouseText(l Ledger, w WarehouseProbe) string {
	c, b := w.Current, w.Challenge.Budget
	return strings.NewReplacer(
		"{completed_weeks}", qty(c.TimeWeeks),
		"{completed_turns}", strconv.Itoa(w.After),
		"{current_time_weeks}", qty(c.TimeWeeks),
		"{current_warehouse_item_weeks}", qty(c.WarehouseItemWeeks),
		"{current_cost_usd}", usd(c.CostUSD),
		"{current_cash_usd}", usd(c.CashUSD),
		"{target_cash_usd}", usd(w.Challenge.TargetCashUSD),
		"{resource_consumption_text}", consumptionText(l, w.After),
		"{budget_time_weeks}", qty(b.TimeWeeks),
		"{budget_warehouse_item_weeks}", qty(b.WarehouseItemWeeks),
		"{budget_cost_usd}", usd(b.CostUSD),
	).Replace(warehouseProbe)
}

// consumptionText is each of the first k steps' own usage, one line per
// step: "Step 2: time_weeks 2, warehouse_item_weeks 0, cumulative_cost_usd
// 147214.50".
func consumptionText(l Ledger, k int) string {
	var b strings.Builder
	var prev Usage
	for i, s := range l.Steps[:k] {
		d := s.Usage.Sub(prev)
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "Step %d: time_weeks %s, warehouse_item_weeks %s, cumulative_cost_usd %s", i+1, qty(d.TimeWeeks), qty(d.WarehouseItemWeeks), usd(d.CostUSD))
		prev = s.Usage
	}
	return b.String()
}

// RenderWarehouse builds a Warehouse probe's prompt: the estimator's system
// prompt, the first w.After logged turns (user messages without their
// reward annotation) and the estimation prompt.
func RenderWarehouse(traj rollout.Trajectory, a Accounting, l Ledger, w WarehouseProbe) []rollout.Message {
	msgs := make([]rollout.Message, 0, 2+2*w.After)
	msgs = append(msgs, rollout.Message{Role: "system", Content: WarehouseEstimatorSystem})
	for _, pair := range a.Pairs[:w.After] {
		msgs = append(msgs,
			rollout.Message{Role: "user", Content: rollout.StripReward(traj.Messages[pair[0]].Content)},
			rollout.Message{Role: "assistant", Content: traj.Messages[pair[1]].Content})
	}
	return append(msgs, rollout.Message{Role: "user", Content: WarehouseText(l, w)})
}
