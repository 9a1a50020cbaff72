package eval

import "bagen-data/reward"

// Counts counts probes by predicted class.
type Counts struct {
	Possible   int `json:"possible"`
	Impossible int `json:"impossible"`
	Invalid    int `json:"invalid"`
}

// Total is the number of probes counted.
func (c Counts) Total() int { return c.Possible + c.Impossible + c.Invalid }

func (c *Counts) add(p reward.Class) {
	switch p {
	case reward.ClassPossible:
		c.Possible++
	case reward.ClassImpossible:
		c.Impossible++
	default:
		c.Invalid++
	}
}

// Confusion is the feasibility confusion table: probes by truth (the two
// fields) and predicted class (Counts). Invalid answers form a third
// prediction column: they are wrong for either truth.
type Confusion struct {
	Possible   Counts `json:"possible"`
	Impossible Counts `json:"impossible"`
}

// ConfusionOf tabulates rows.
func ConfusionOf(rows []Scored) Confusion {
	var c Confusion
	for _, r := range rows {
		if r.Possible {
			c.Possible.add(r.Class())
		} else {
			c.Impossible.add(r.Class())
		}
	}
	return c
}

// Accuracy is the share of probes whose predicted class is the truth.
func (c Confusion) Accuracy() Num {
	return ratio(c.Possible.Possible+c.Impossible.Impossible, c.Possible.Total()+c.Impossible.Total())
}

// RecallPossible is the share of truly possible probes predicted possible.
func (c Confusion) RecallPossible() Num { return ratio(c.Possible.Possible, c.Possible.Total()) }

// RecallImpossible is the share of truly impossible probes predicted
// impossible.
func (c Confusion) RecallImpossible() Num {
	return ratio(c.Impossible.Impossible, c.Impossible.Total())
}

// PrecisionImpossible is the share of impossible predictions that are right.
func (c Confusion) PrecisionImpossible() Num {
	return ratio(c.Impossible.Impossible, c.Possible.Impossible+c.Impossible.Impossible)
}

// F1Possible is the F1 of the feasible class, 2TP / (2TP + FP + FN), where
// an invalid answer on a possible probe is a false negative. Undefined when
// the class is absent from both truth and predictions.
func (c Confusion) F1Possible() Num {
	tp := c.Possible.Possible
	return ratio(2*tp, 2*tp+c.Impossible.Possible+c.Possible.Impossible+c.Possible.Invalid)
}

// F1Impossible is Fail-F1 (paper eq. 3), the F1 of the impossible class,
// 2TP / (2TP + FP + FN). Undefined when the class is absent from both truth
// and predictions.
func (c Confusion) F1Impossible() Num {
	tp := c.Impossible.Impossible
	return ratio(2*tp, 2*tp+c.Possible.Impossible+c.Impossible.Possible+c.Impossible.Invalid)
}

// MacroF1 is the feasibility macro-F1 (paper eq. 2): the mean of the two
// class F1 scores. As scikit-learn does without explicit labels, a class
// absent from both truth and predictions is left out of the mean; undefined
// when there are no probes.
func (c Confusion) MacroF1() Num {
	var sum float64
	var n int
	for _, f := range []Num{c.F1Possible(), c.F1Impossible()} {
		if f.Defined() {
			sum += float64(f)
			n++
		}
	}
	if n == 0 {
		return NaN
	}
	return Num(sum / float64(n))
}
