package reward

import (
	"encoding/json"
	"math"
	"strconv"
)

// Target is a probe's truth as every stage sees it: what the label column
// holds (Label, ParseTarget), the answer a perfect estimator gives
// (GroundTruth) and how a response is judged (Judge). It has two kinds,
// made by TokenTarget and WarehouseTarget: the remaining tokens of the
// token-budget tasks, and the remaining usage per dimension of the
// Warehouse task.
//
// Target is a value with the kind inside, not an interface with one type
// per kind, so that the reward server can parse a label per request
// without allocating; the only switch on the kind is in this file. The
// zero Target is a token target whose truth is impossible. Target is safe
// for concurrent use.
type Target struct {
	warehouse bool
	tokens    Truth
	resources WarehouseTruth
	// answer is a token target's ground-truth text (its target interval,
	// which depends on the width the dataset was built with).
	answer string
}

// TokenTarget is the truth of a token-budget probe whose target answer text
// (the interval "[L, H]", a scalar or "impossible") is answer.
func TokenTarget(t Truth, answer string) Target { return Target{tokens: t, answer: answer} }

// WarehouseTarget is the truth of a Warehouse probe.
func WarehouseTarget(t WarehouseTruth) Target { return Target{warehouse: true, resources: t} }

// Possible reports whether the rollout finishes within its budget.
func (t Target) Possible() bool {
	if t.warehouse {
		return t.resources.Possible
	}
	return t.tokens.Possible
}

// Tokens returns the token truth; ok is false for a Warehouse target.
func (t Target) Tokens() (tr Truth, ok bool) { return t.tokens, !t.warehouse }

// Resources returns the Warehouse truth; ok is false for a token target.
func (t Target) Resources() (wt WarehouseTruth, ok bool) { return t.resources, t.warehouse }

// GroundTruth is the answer text that scores best, as written inside the
// answer tags and in reward_model.ground_truth: a token target's answer
// ("impossible" when the truth is impossible and no answer was given), or
// a Warehouse target's "impossible" or point interval per dimension,
// "time_weeks:[v, v], warehouse_item_weeks:[v, v], cumulative_cost_usd:[v, v]".
func (t Target) GroundTruth() string {
	switch {
	case t.warehouse && !t.resources.Possible, !t.warehouse && t.answer == "" && !t.tokens.Possible:
		return "impossible"
	case !t.warehouse:
		return t.answer
	}
	var b []byte
	for d, v := range t.resources.Remaining {
		if d > 0 {
			b = append(b, ", "...)
		}
		q := strconv.FormatFloat(v, 'f', -1, 64)
		b = append(b, dimNames[d]...)
		b = append(b, ":["...)
		b = append(b, q...)
		b = append(b, ", "...)
		b = append(b, q...)
		b = append(b, ']')
	}
	return string(b)
}

// tokenLabel and warehouseLabel are the label column's JSON objects.
type tokenLabel struct {
	RemainingTokens int64  `json:"remaining_tokens"`
	IsPossible      bool   `json:"is_possible"`
	GroundTruth     string `json:"ground_truth"`
}

type warehouseLabel struct {
	TimeWeeks          float64 `json:"time_weeks"`
	WarehouseItemWeeks float64 `json:"warehouse_item_weeks"`
	CostUSD            float64 `json:"cumulative_cost_usd"`
	IsPossible         bool    `json:"is_possible"`
	GroundTruth        string  `json:"ground_truth"`
}

// Label encodes t as the label column, the form ParseTarget reads:
// {"remaining_tokens":N,"is_possible":B,"ground_truth":"…"}, or for a
// Warehouse target {"time_weeks":…,"warehouse_item_weeks":…,
// "cumulative_cost_usd":…,"is_possible":B,"ground_truth":"…"}.
func (t Target) Label() string {
	var v any = tokenLabel{t.tokens.Remaining, t.tokens.Possible, t.GroundTruth()}
	if t.warehouse {
		r := t.resources.Remaining
		v = warehouseLabel{r[TimeWeeks], r[WarehouseItemWeeks], r[CumulativeCostUSD], t.resources.Possible, t.GroundTruth()}
	}
	b, err := json.Marshal(v)
	if err != nil {
		// Only a NaN or infinite Warehouse quantity fails, which no
		// ledger produces.
		panic("reward: encode label: " + err.Error())
	}
	return string(b)
}

// Judgement is a response judged against a Target.
type Judgement struct {
	// Possible is the truth.
	Possible bool
	// Reward is the response's reward under the rule Judge was given;
	// Score is the paper's S (eq. 4, the Paper rule).
	Reward, Score float64
	// Class is the feasibility the response claims.
	Class Class
	// Prediction and Detail describe a token answer (Parse, Rule.Detail).
	// For a Warehouse target Prediction is zero and Detail holds only
	// Reward and Class, with the interval fields of an answer that is not
	// an interval.
	Prediction Prediction
	Detail     Detail
	// Warehouse marks a Warehouse judgement: Answer is the parsed answer
	// (ParseWarehouse) and Dims its breakdown per dimension.
	Warehouse bool
	Answer    Warehouse
	Dims      WarehouseDetail
	// Target is what the response was judged against.
	Target Target
}

// Judge parses response and scores it against t under r and under the
// paper's score S. It does not allocate.
func (t Target) Judge(r Rule, response string) Judgement {
	if t.warehouse {
		p := ParseWarehouse(response)
		d := r.DetailWarehouse(p, t.resources)
		return Judgement{
			Possible: t.resources.Possible, Reward: d.Reward, Score: Paper.ScoreWarehouse(p, t.resources), Class: d.Class,
			Detail:    Detail{Reward: d.Reward, Class: d.Class, RelWidth: math.NaN(), MidRelErr: math.NaN()},
			Warehouse: true, Answer: p, Dims: d, Target: t,
		}
	}
	p := Parse(response)
	d := r.Detail(p, t.tokens)
	return Judgement{Possible: t.tokens.Possible, Reward: d.Reward, Score: Paper.Score(p, t.tokens), Class: d.Class, Prediction: p, Detail: d, Target: t}
}

// AppendJSON appends the judgement's breakdown as the reward server
// returns it: Detail.AppendJSON for a token target,
// WarehouseDetail.AppendJSON for a Warehouse one.
func (j *Judgement) AppendJSON(b []byte) []byte {
	if j.Warehouse {
		return j.Dims.AppendJSON(b)
	}
	return j.Detail.AppendJSON(b)
}

// Covered is 1 when the answer's interval covers the truth and 0 when not;
// for a Warehouse judgement, the fraction of dimensions covered.
func (j *Judgement) Covered() float64 {
	return j.share(j.Detail.Covered, func(d DimDetail) bool { return d.Covered })
}

// Intervals is 1 when the answer is a well-formed interval and 0 when not;
// for a Warehouse judgement, the fraction of dimensions read as one.
func (j *Judgement) Intervals() float64 {
	return j.share(j.Detail.Interval, func(d DimDetail) bool { return d.Interval })
}

// share is tokens as 0 or 1 on a token judgement, the fraction of
// dimensions for which dim holds on a Warehouse one.
func (j *Judgement) share(tokens bool, dim func(DimDetail) bool) float64 {
	if !j.Warehouse {
		return b2f(tokens)
	}
	n := 0.0
	for _, d := range j.Dims.Dims {
		n += b2f(dim(d))
	}
	return n / NumDims
}

func b2f(v bool) float64 {
	if v {
		return 1
	}
	return 0
}

// FormatValid reports whether the answer has the required format inside
// the answer tags: "impossible", or a well-formed interval [L, H] with
// L ≤ H on a token target, and one for each of the three dimensions on a
// Warehouse target. A scalar or a reversed interval is not an interval:
// it scores 0 on a possible probe (Rule.Score) and is not counted.
func (j *Judgement) FormatValid() bool {
	if !j.Warehouse {
		return j.Prediction.Kind == Impossible || j.Prediction.Valid()
	}
	if j.Answer.Kind == Impossible {
		return true
	}
	for _, d := range j.Answer.Dims {
		if !d.Set || d.Low > d.High {
			return false
		}
	}
	return j.Answer.Kind == Interval
}

// WellFormed reports a well-formed interval answer, the ones Cover and MRE
// score: L ≤ H, in all three dimensions of a Warehouse answer.
func (j *Judgement) WellFormed() bool {
	return j.all(j.Detail.Interval, func(d DimDetail) bool { return d.Interval })
}

// AllCovered reports that the interval holds the truth: r, or every
// dimension's remaining usage of a Warehouse target.
func (j *Judgement) AllCovered() bool {
	return j.all(j.Detail.Covered, func(d DimDetail) bool { return d.Covered })
}

func (j *Judgement) all(tokens bool, dim func(DimDetail) bool) bool {
	if !j.Warehouse {
		return tokens
	}
	for _, d := range j.Dims.Dims {
		if !dim(d) {
			return false
		}
	}
	return true
}

// MidRelErr is the midpoint relative error, NaN when undefined or
// infinite: Detail.MidRelErr on a token target, the mean over the
// dimensions with a defined error on a Warehouse target.
func (j *Judgement) MidRelErr() float64 {
	if !j.Warehouse {
		if math.IsInf(j.Detail.MidRelErr, 0) {
			return math.NaN()
		}
		return j.Detail.MidRelErr
	}
	var sum float64
	n := 0
	for _, d := range j.Dims.Dims {
		if e := d.MidRelErr; !math.IsNaN(e) && !math.IsInf(e, 0) {
			sum += e
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// Miss says which way an interval that does not cover the truth misses:
// -1 optimistic (below the truth), +1 conservative (above), 0 neither. On
// a token target the midpoint decides; on a Warehouse target the uncovered
// dimensions do, when they all miss the same way.
func (j *Judgement) Miss() int {
	if !j.Warehouse {
		mid := j.Prediction.Mid()
		r := float64(j.Target.tokens.Remaining)
		switch {
		case mid < r:
			return -1
		case mid > r:
			return 1
		}
		return 0
	}
	below, above := 0, 0
	for d, dd := range j.Dims.Dims {
		switch {
		case dd.Covered:
		case j.Answer.Dims[d].High < j.Target.resources.Remaining[d]:
			below++
		default:
			above++
		}
	}
	switch {
	case below > 0 && above == 0:
		return -1
	case above > 0 && below == 0:
		return 1
	}
	return 0
}

// LabelGroundTruth returns the ground_truth key of a JSON label column;
// ok is false when the label is not a JSON object or has no such string.
// (ParseTarget skips the key so that parsing does not allocate.)
func LabelGroundTruth(label string) (gt string, ok bool) {
	var l struct {
		GroundTruth *string `json:"ground_truth"`
	}
	if json.Unmarshal([]byte(label), &l) != nil || l.GroundTruth == nil {
		return "", false
	}
	return *l.GroundTruth, true
}
