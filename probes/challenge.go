package probes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"bagen-data/internal/pyrand"
	"bagen-data/rollout"
)

// Usage is cumulative Warehouse resource usage, one value per budget
// dimension.
type Usage struct {
	TimeWeeks          float64
	WarehouseItemWeeks float64
	CostUSD            float64
}

// Sub is u − v per dimension, rounded to cents (the logs' precision).
func (u Usage) Sub(v Usage) Usage {
	return Usage{cents(u.TimeWeeks - v.TimeWeeks), cents(u.WarehouseItemWeeks - v.WarehouseItemWeeks), cents(u.CostUSD - v.CostUSD)}
}

// wholeSub is max(0, round(u) − round(v)) per dimension, rounding half to
// even as Python's round: the authors' remaining usage
// (money_estimation/env.py rounds every logged value to an int first).
func (u Usage) wholeSub(v Usage) Usage {
	u, v = u.whole(), v.whole()
	return Usage{max(0, u.TimeWeeks-v.TimeWeeks), max(0, u.WarehouseItemWeeks-v.WarehouseItemWeeks), max(0, u.CostUSD-v.CostUSD)}
}

// Within reports whether every dimension of u is at most b's.
func (u Usage) Within(b Usage) bool {
	return u.TimeWeeks <= b.TimeWeeks && u.WarehouseItemWeeks <= b.WarehouseItemWeeks && u.CostUSD <= b.CostUSD
}

// Step is one played Warehouse turn: the cumulative usage after it and the
// cash balance after it.
type Step struct {
	Usage
	CashUSD float64
}

// Ledger is a Warehouse rollout's external-budget log, read from the
// canonical JSONL record's metadata:
//
//	"metadata":{"success":true, …,
//	  "steps":[{"time_weeks":2,"warehouse_item_weeks":0,"cumulative_cost_usd":80926.6,"cash_usd":319073.4}, …],
//	  "final_cash_usd":412345.67}
//
// steps has one entry per played turn, in order, with the cumulative usage
// after that turn (time_weeks, warehouse_item_weeks, cumulative_cost_usd:
// finite, non-negative, never decreasing) and the cash balance after it
// (cash_usd, may be negative); final_cash_usd is the balance at the end.
// The fixtures generator (package fixtures, rollouts/README.md) writes this
// shape. Success is the record's usual metadata success.
type Ledger struct {
	Steps        []Step
	FinalCashUSD float64
}

// Total is the usage after the last step.
func (l Ledger) Total() Usage {
	if len(l.Steps) == 0 {
		return Usage{}
	}
	return l.Steps[len(l.Steps)-1].Usage
}

type wireLedger struct {
	Metadata *struct {
		Steps     []json.RawMessage `json:"steps"`
		FinalCash json.RawMessage   `json:"final_cash_usd"`
	} `json:"metadata"`
}

type wireStep struct {
	TimeWeeks          json.RawMessage `json:"time_weeks"`
	WarehouseItemWeeks json.RawMessage `json:"warehouse_item_weeks"`
	CostUSD            json.RawMessage `json:"cumulative_cost_usd"`
	CashUSD            json.RawMessage `json:"cash_usd"`
}

// DecodeLedger reads the Ledger of a canonical JSONL record. Errors are
// *ParseError naming the field, e.g. metadata.steps[3].cash_usd.
func DecodeLedger(rec rollout.Record) (Ledger, error) {
	if rec.Format == rollout.Dialogue {
		return Ledger{}, rec.Errorf("metadata.steps", "estimation dialogues carry no warehouse usage; want canonical JSONL rollouts")
	}
	if name := rec.FormatName(); name != rollout.Rollout.Name && rec.Format != rollout.Dialogue {
		return Ledger{}, rec.Errorf("metadata.steps", "%s logs carry no warehouse usage; want canonical JSONL rollouts", name)
	}
	var w wireLedger
	if err := json.Unmarshal(rec.Data, &w); err != nil {
		return Ledger{}, rec.Errorf(ledgerField(err), "%w", rollout.JSONCause(err))
	}
	switch {
	case w.Metadata == nil:
		return Ledger{}, rec.Errorf("metadata", "missing")
	case len(w.Metadata.Steps) == 0:
		return Ledger{}, rec.Errorf("metadata.steps", "missing or empty")
	}
	var l Ledger
	var err error
	if l.FinalCashUSD, err = number(rec, "metadata.final_cash_usd", w.Metadata.FinalCash, true); err != nil {
		return Ledger{}, err
	}
	l.Steps = make([]Step, len(w.Metadata.Steps))
	for i, raw := range w.Metadata.Steps {
		if l.Steps[i], err = decodeStep(rec, i, raw); err != nil {
			return Ledger{}, err
		}
		if i > 0 {
			if err := nonDecreasing(rec, i, l.Steps[i-1].Usage, l.Steps[i].Usage); err != nil {
				return Ledger{}, err
			}
		}
	}
	return l, nil
}

// ledgerField names the field of a type error in the ledger's shape.
func ledgerField(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field
	}
	return ""
}

func decodeStep(rec rollout.Record, i int, raw json.RawMessage) (Step, error) {
	field := fmt.Sprintf("metadata.steps[%d]", i)
	var w wireStep
	if err := json.Unmarshal(raw, &w); err != nil {
		return Step{}, rec.Errorf(field, "%w", rollout.JSONCause(err))
	}
	var s Step
	var err error
	for _, f := range []struct {
		name     string
		raw      json.RawMessage
		dst      *float64
		negative bool
	}{
		{"time_weeks", w.TimeWeeks, &s.TimeWeeks, false},
		{"warehouse_item_weeks", w.WarehouseItemWeeks, &s.WarehouseItemWeeks, false},
		{"cumulative_cost_usd", w.CostUSD, &s.CostUSD, false},
		{"cash_usd", w.CashUSD, &s.CashUSD, true},
	} {
		if *f.dst, err = number(rec, field+"."+f.name, f.raw, f.negative); err != nil {
			return Step{}, err
		}
	}
	return s, nil
}

// number reads a required finite JSON number.
// present reports whether a raw JSON value is there and not null.
func present(v json.RawMessage) (json.RawMessage, bool) {
	v = bytes.TrimSpace(v)
	return v, len(v) > 0 && string(v) != "null"
}

func number(rec rollout.Record, field string, raw json.RawMessage, negative bool) (float64, error) {
	v, ok := present(raw)
	if !ok {
		return 0, rec.Errorf(field, "missing")
	}
	var f float64
	if v[0] == '"' || json.Unmarshal(v, &f) != nil {
		return 0, rec.Errorf(field, "want a number, got %s", clipJSON(v))
	}
	if f < 0 && !negative {
		return 0, rec.Errorf(field, "want a non-negative number, got %v", f)
	}
	return f, nil
}

func clipJSON(v json.RawMessage) string {
	s := string(v)
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func nonDecreasing(rec rollout.Record, i int, prev, cur Usage) error {
	for _, d := range []struct {
		name      string
		prev, cur float64
	}{
		{"time_weeks", prev.TimeWeeks, cur.TimeWeeks},
		{"warehouse_item_weeks", prev.WarehouseItemWeeks, cur.WarehouseItemWeeks},
		{"cumulative_cost_usd", prev.CostUSD, cur.CostUSD},
	} {
		if d.cur < d.prev {
			return rec.Errorf(fmt.Sprintf("metadata.steps[%d].%s", i, d.name),
				"cumulative usage decreases from %v to %v", d.prev, d.cur)
		}
	}
	return nil
}

// Challenge is the sampled (target cash, budgets) tuple a Warehouse rollout
// is probed under.
type Challenge struct {
	TargetCashUSD float64
	Budget        Usage
	// Reachable is the group the preset put the rollout in; the label is
	// Feasible, which may disagree (a failed rollout in the reachable
	// group).
	Reachable bool
	// Whole compares the totals and final cash rounded to whole units, as
	// the authors' environment reads them (BagenV1).
	Whole bool
}

// Feasible reports whether a rollout meets the challenge: it succeeded,
// every realized total is within its budget and its final cash reaches the
// target.
func (c Challenge) Feasible(l Ledger, success bool) bool {
	total, final := l.Total(), l.FinalCashUSD
	if c.Whole {
		total, final = total.whole(), math.RoundToEven(final)
	}
	return success && total.Within(c.Budget) && final >= c.TargetCashUSD
}

// whole is u rounded to whole units, half to even (Python's round).
func (u Usage) whole() Usage {
	return Usage{math.RoundToEven(u.TimeWeeks), math.RoundToEven(u.WarehouseItemWeeks), math.RoundToEven(u.CostUSD)}
}

// Preset is a challenge sampling scheme (appendix "Warehouse Budget
// Construction"). Both shuffle the rollouts and give the first ⌊n/2⌋
// unreachable challenges and the rest reachable ones. A reachable
// challenge has target cash min(final, round(final·U(0.5, 1.0))), time
// budget = the realized weeks, and warehouse and cost budgets = realized
// total·U(1.0, 1.2). Targets round half to even, to whole dollars.
// HalfReachable sorts the rollouts by id first (the result does not depend
// on input order), draws from a PCG stream, and rounds item-weeks to
// integers and dollars and weeks to cents, never below the total; BagenV1
// is the authors' code draw for draw (see below).
type Preset uint8

const (
	// HalfReachable is the scheme the paper's text describes: an
	// unreachable challenge draws the target-cash, time, warehouse and cost
	// ratios independently from U(0.5, 2.0) (target = final·r, budget =
	// total·r) and redraws until the logged rollout fails the check.
	HalfReachable Preset = iota
	// BagenV1 reproduces the authors' shipped variant draw for draw
	// (money_estimation/env.py, _build_half_reachable_constraints_map,
	// with eval/warehouse.sh's ratios 1.0 / 1.2 / 1.2), from CPython's
	// random.Random(seed): rollouts with at least two turns, in input
	// order, are shuffled and the first half made unreachable; then, in
	// input order, a reachable one draws target = min(final,
	// round(final·U(0.5, 1))) and an unreachable one target =
	// round(final·U(1.01, 2.00)), raised to final + max(1,
	// round(|final|·0.05)) when that is not above the final cash (a final
	// cash ≤ 0: −1000 gives −950); both then take time budget = the weeks
	// and warehouse and cost budgets = round(total·U(1, 1.2)), with no
	// redraw. Totals and cash are rounded to whole units first, as that
	// env reads them, and Feasible compares them rounded (Challenge.Whole).
	// A rollout with fewer than two turns (no probe) gets its own totals
	// as budgets and draws nothing.
	BagenV1
)

// ParsePreset reads --preset: half_reachable or bagen-v1.
func ParsePreset(s string) (Preset, error) {
	switch s {
	case "half_reachable", "":
		return HalfReachable, nil
	case "bagen-v1":
		return BagenV1, nil
	}
	return 0, fmt.Errorf("preset %q: want half_reachable (the paper's text) or bagen-v1 (the authors' shipped variant)", s)
}

func (p Preset) String() string {
	if p == BagenV1 {
		return "bagen-v1"
	}
	return "half_reachable"
}

// maxRedraws bounds the unreachable redraws of HalfReachable; a rollout
// that meets 1000 random challenges (all usage and final cash zero) cannot
// be made unreachable by ratios.
const maxRedraws = 1000

// ChallengeInput is what Challenges needs to know of one rollout.
type ChallengeInput struct {
	ID      string
	Ledger  Ledger
	Success bool
}

// Challenges samples one challenge per rollout with preset p and seed,
// aligned with rs. Inputs are not modified.
func Challenges(rs []ChallengeInput, p Preset, seed uint64) ([]Challenge, error) {
	if p == BagenV1 {
		return challengesBagenV1(rs, seed), nil
	}
	order := make([]int, len(rs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(rs[a].ID, rs[b].ID) })
	rng := rand.New(rand.NewPCG(seed, stream("warehouse-challenge")))
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	out := make([]Challenge, len(rs))
	for pos, i := range order {
		if pos >= len(rs)/2 {
			out[i] = reachable(rs[i].Ledger, rng)
			continue
		}
		c, err := unreachable(rs[i], p, rng)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

func stream(purpose string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(purpose))
	return h.Sum64()
}

func uniform(rng *rand.Rand, lo, hi float64) float64 { return lo + (hi-lo)*rng.Float64() }

// reachable draws U(0.5,1) for the target, then U(1,1.2) for warehouse and
// cost.
func reachable(l Ledger, rng *rand.Rand) Challenge {
	target := math.Min(l.FinalCashUSD, math.RoundToEven(l.FinalCashUSD*uniform(rng, 0.5, 1.0)))
	return Challenge{TargetCashUSD: target, Budget: slackBudget(l.Total(), rng), Reachable: true}
}

// slackBudget is the reachable budgets: the realized weeks, and warehouse
// and cost totals times U(1.0, 1.2), never below the totals.
func slackBudget(total Usage, rng *rand.Rand) Usage {
	wh := math.Max(total.WarehouseItemWeeks, math.RoundToEven(total.WarehouseItemWeeks*uniform(rng, 1.0, 1.2)))
	cost := math.Max(total.CostUSD, cents(total.CostUSD*uniform(rng, 1.0, 1.2)))
	return Usage{TimeWeeks: total.TimeWeeks, WarehouseItemWeeks: wh, CostUSD: cost}
}

// challengesBagenV1 is the BagenV1 preset.
func challengesBagenV1(rs []ChallengeInput, seed uint64) []Challenge {
	var prepared []int
	out := make([]Challenge, len(rs))
	for i, r := range rs {
		if len(r.Ledger.Steps) >= 2 {
			prepared = append(prepared, i)
			continue
		}
		out[i] = Challenge{TargetCashUSD: math.RoundToEven(r.Ledger.FinalCashUSD), Budget: r.Ledger.Total().whole(), Reachable: true, Whole: true}
	}
	rng := pyrand.NewUint64(seed)
	shuffled := slices.Clone(prepared)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	unreachable := map[int]bool{}
	for _, i := range shuffled[:len(shuffled)/2] {
		unreachable[i] = true
	}
	for _, i := range prepared {
		l := rs[i].Ledger
		final, total := math.RoundToEven(l.FinalCashUSD), l.Total().whole()
		c := Challenge{Reachable: !unreachable[i], Whole: true}
		if c.Reachable {
			c.TargetCashUSD = math.Min(final, math.RoundToEven(final*rng.Uniform(0.5, 1.0)))
		} else {
			c.TargetCashUSD = aboveFinal(final, rng.Uniform(1.01, 2.00))
		}
		c.Budget = Usage{
			TimeWeeks:          total.TimeWeeks,
			WarehouseItemWeeks: math.RoundToEven(total.WarehouseItemWeeks * rng.Uniform(1.0, 1.2)),
			CostUSD:            math.RoundToEven(total.CostUSD * rng.Uniform(1.0, 1.2)),
		}
		out[i] = c
	}
	return out
}

func unreachable(r ChallengeInput, p Preset, rng *rand.Rand) (Challenge, error) {
	l := r.Ledger
	total := l.Total()
	for range maxRedraws {
		c := Challenge{
			TargetCashUSD: math.RoundToEven(l.FinalCashUSD * uniform(rng, 0.5, 2.0)),
			Budget: Usage{
				TimeWeeks:          cents(total.TimeWeeks * uniform(rng, 0.5, 2.0)),
				WarehouseItemWeeks: math.RoundToEven(total.WarehouseItemWeeks * uniform(rng, 0.5, 2.0)),
				CostUSD:            cents(total.CostUSD * uniform(rng, 0.5, 2.0)),
			},
		}
		if !c.Feasible(l, r.Success) {
			return c, nil
		}
	}
	return Challenge{}, fmt.Errorf("rollout %s: no unreachable challenge in %d draws (a rollout whose usage and final cash are all zero meets every ratio challenge)", r.ID, maxRedraws)
}

// aboveFinal is bagen-v1's unreachable target for ratio u: round(final·u),
// bumped above the final cash when the product is not (final ≤ 0).
func aboveFinal(final, u float64) float64 {
	target := math.RoundToEven(final * u)
	if target <= final {
		target = final + math.Max(1, math.RoundToEven(math.Abs(final)*0.05))
	}
	return target
}

// cents rounds to two decimals, half to even.
func cents(v float64) float64 { return math.RoundToEven(v*100) / 100 }
