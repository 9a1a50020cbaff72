package eval

import (
	"math/rand/v2"
	"slices"
)

// Headline names the metrics Bootstrap gives intervals for, in report order.
// They are the JSON names of the Metrics fields.
var Headline = []string{
	"accuracy", "recall_possible", "recall_impossible", "f1_all", "f1_first",
	"fail_f1", "coverage", "mre_p50", "mre_p90", "reward", "score",
}

// Value returns the headline metric called name, NaN for an unknown name.
func (m Metrics) Value(name string) Num {
	switch name {
	case "accuracy":
		return m.Accuracy
	case "recall_possible":
		return m.RecallPossible
	case "recall_impossible":
		return m.RecallImpossible
	case "f1_all":
		return m.F1All
	case "f1_first":
		return m.F1First
	case "fail_f1":
		return m.FailF1
	case "coverage":
		return m.Coverage
	case "mre_p50":
		return m.MREP50
	case "mre_p90":
		return m.MREP90
	case "reward":
		return m.Reward
	case "score":
		return m.Score
	}
	return NaN
}

// CI is a bootstrap confidence interval.
type CI struct {
	Low  Num `json:"low"`
	High Num `json:"high"`
	// Replicates counts the resamples in which the metric was defined.
	Replicates int `json:"replicates"`
}

// Bootstrap returns percentile 95% intervals for the Headline metrics from
// replicates resamples of rows. Probes of one trajectory are correlated, so
// it resamples whole trajectories with replacement (a cluster bootstrap) and
// takes the 2.5th and 97.5th PercentileLinear of each metric over the
// resamples where it is defined. The same rows, replicates and seed give the
// same intervals. rows is not modified.
func Bootstrap(rows []Scored, replicates int, seed uint64) map[string]CI {
	if replicates <= 0 || len(rows) == 0 {
		return nil
	}
	first := FirstTurn(rows)
	values := make([][]float64, len(Headline))
	resample(rows, replicates, seed, func(sample []Scored) {
		m := headline(sample, first)
		for k, name := range Headline {
			if v := m.Value(name); v.Defined() {
				values[k] = append(values[k], float64(v))
			}
		}
	})
	out := make(map[string]CI, len(Headline))
	for k, name := range Headline {
		out[name] = percentileCI(values[k])
	}
	return out
}

// BootstrapOf returns the percentile 95% interval of f over replicates
// resamples of rows, drawn as Bootstrap draws them (whole trajectories);
// f's undefined values are left out. rows is not modified.
func BootstrapOf(rows []Scored, replicates int, seed uint64, f func([]Scored) Num) CI {
	var values []float64
	if replicates > 0 && len(rows) > 0 {
		resample(rows, replicates, seed, func(sample []Scored) {
			if v := f(sample); v.Defined() {
				values = append(values, float64(v))
			}
		})
	}
	return percentileCI(values)
}

// resample calls fn with replicates resamples of rows' trajectories,
// with replacement, the same seed giving the same resamples.
func resample(rows []Scored, replicates int, seed uint64, fn func([]Scored)) {
	groups := clusters(rows)
	rng := rand.New(rand.NewPCG(seed, 0x62616765)) // "bage"
	sample := make([]Scored, 0, len(rows))
	for range replicates {
		sample = sample[:0]
		for range groups {
			for _, i := range groups[rng.IntN(len(groups))] {
				sample = append(sample, rows[i])
			}
		}
		fn(sample)
	}
}

// percentileCI is the 2.5th to 97.5th PercentileLinear of values (sorted
// in place), NaN without any.
func percentileCI(values []float64) CI {
	ci := CI{Low: NaN, High: NaN, Replicates: len(values)}
	if len(values) > 0 {
		slices.Sort(values)
		ci.Low = Num(linearSorted(values, 2.5))
		ci.High = Num(linearSorted(values, 97.5))
	}
	return ci
}

// clusters groups row indices by trajectory, in order of first appearance.
func clusters(rows []Scored) [][]int {
	at := map[string]int{}
	var groups [][]int
	for i, r := range rows {
		g, ok := at[r.TrajectoryID]
		if !ok {
			g = len(groups)
			at[r.TrajectoryID] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}
