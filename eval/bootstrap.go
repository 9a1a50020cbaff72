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

// Value returns the headline or Harm metric called name, NaN for an
// unknown name.
func (m Metrics) Value(name string) Num {
	switch name {
	case "aborted_successful_share":
		return m.EarlyStop.AbortedSuccessfulShare
	case "live_aborted_successful_share":
		if m.EarlyStop.Live == nil {
			return NaN
		}
		return m.EarlyStop.Live.AbortedSuccessfulShare
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
	groups := clusters(rows)
	first := FirstTurn(rows)
	harm := [][]run{runs(rows, paperPolicy), runs(rows, livePolicy)}
	rng := rand.New(rand.NewPCG(seed, 0x62616765)) // "bage"
	names := append(slices.Clone(Headline), Harm...)
	values := make([][]float64, len(names))
	sample := make([]Scored, 0, len(rows))
	var successful, aborted [2]int
	for range replicates {
		sample = sample[:0]
		successful, aborted = [2]int{}, [2]int{}
		for range groups {
			g := rng.IntN(len(groups))
			for _, i := range groups[g] {
				sample = append(sample, rows[i])
			}
			for k, rs := range harm {
				if t := rs[g]; !t.failed {
					successful[k]++
					if t.stopped {
						aborted[k]++
					}
				}
			}
		}
		m := headline(sample, first)
		for k, name := range Headline {
			if v := m.Value(name); v.Defined() {
				values[k] = append(values[k], float64(v))
			}
		}
		for k := range Harm {
			if v := ratio(aborted[k], successful[k]); v.Defined() {
				values[len(Headline)+k] = append(values[len(Headline)+k], float64(v))
			}
		}
	}
	return intervals(names, values)
}

// intervals turns each metric's resampled values into its interval.
func intervals(names []string, values [][]float64) map[string]CI {
	out := make(map[string]CI, len(names))
	for k, name := range names {
		ci := CI{Low: NaN, High: NaN, Replicates: len(values[k])}
		if len(values[k]) > 0 {
			slices.Sort(values[k])
			ci.Low = Num(linearSorted(values[k], 2.5))
			ci.High = Num(linearSorted(values[k], 97.5))
		}
		out[name] = ci
	}
	return out
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
