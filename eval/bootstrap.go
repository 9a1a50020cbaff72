package eval

import (
	"math/rand/v2"
	"slices"
)

// Value returns the Table or Harm metric called name, NaN for an unknown
// name.
func (m Metrics) Value(name string) Num {
	switch name {
	case "aborted_successful_share":
		return m.EarlyStop.AbortedSuccessfulShare
	case "live_aborted_successful_share":
		if m.EarlyStop.Live == nil {
			return NaN
		}
		return m.EarlyStop.Live.AbortedSuccessfulShare
	}
	if mt, ok := MetricNamed(name); ok {
		return mt.Get(m)
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

// Harm names the per-run harm shares Bootstrap gives intervals for
// besides the Headline: EarlyStop.AbortedSuccessfulShare of the paper's
// replay and of its Live replay.
var Harm = []string{"aborted_successful_share", "live_aborted_successful_share"}

// Bootstrap returns percentile 95% intervals for the Headline metrics and
// the Harm shares from replicates resamples of rows. Probes of one
// trajectory are correlated, so it resamples whole trajectories with
// replacement (a cluster bootstrap) and takes the 2.5th and 97.5th
// PercentileLinear of each metric over the resamples where it is defined.
// A Harm share of a resample counts each drawn successful trajectory as
// often as it is drawn. The same rows, replicates and seed give the same
// intervals. rows is not modified.
func Bootstrap(rows []Scored, replicates int, seed uint64) map[string]CI {
	if replicates <= 0 || len(rows) == 0 {
		return nil
	}
	first := FirstTurn(rows)
	harm := [][]run{runs(rows, paperPolicy), runs(rows, livePolicy)}
	names := append(slices.Clone(Headline), Harm...)
	values := make([][]float64, len(names))
	resample(rows, replicates, seed, func(sample []Scored, drawn []int) {
		m := headline(sample, first)
		for k, name := range Headline {
			if v := m.Value(name); v.Defined() {
				values[k] = append(values[k], float64(v))
			}
		}
		for k, rs := range harm {
			successful, aborted := 0, 0
			for _, g := range drawn {
				if t := rs[g]; !t.failed {
					successful++
					if t.stopped {
						aborted++
					}
				}
			}
			if v := ratio(aborted, successful); v.Defined() {
				values[len(Headline)+k] = append(values[len(Headline)+k], float64(v))
			}
		}
	})
	out := make(map[string]CI, len(names))
	for k, name := range names {
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
		resample(rows, replicates, seed, func(sample []Scored, _ []int) {
			if v := f(sample); v.Defined() {
				values = append(values, float64(v))
			}
		})
	}
	return percentileCI(values)
}

// resample calls fn with replicates resamples of rows' trajectories, drawn
// with replacement, and the indices of the trajectories drawn (in the
// order of clusters); the same seed gives the same resamples.
func resample(rows []Scored, replicates int, seed uint64, fn func(sample []Scored, drawn []int)) {
	groups := clusters(rows)
	rng := rand.New(rand.NewPCG(seed, 0x62616765)) // "bage"
	sample := make([]Scored, 0, len(rows))
	drawn := make([]int, len(groups))
	for range replicates {
		sample = sample[:0]
		for j := range groups {
			g := rng.IntN(len(groups))
			drawn[j] = g
			for _, i := range groups[g] {
				sample = append(sample, rows[i])
			}
		}
		fn(sample, drawn)
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
