package eval

import "fmt"

// Metric is one row of the headline table: a metric of Metrics by its JSON
// name, how the report prints it and what it is counted over.
type Metric struct {
	Name  string               // the Metrics field's JSON name
	Label string               // the report's name for it
	Get   func(Metrics) Num    // its value
	N     func(Metrics) string // the report's n column: what it is over
	// Format prints a value: rewards and scores with three decimals, the
	// rest as percentages.
	Format func(Num) string
	// Interval marks the metrics Bootstrap gives a 95% interval.
	Interval bool
}

// Table is the headline table, in report order: the metrics WriteText
// prints first, with their intervals where Bootstrap gives them (the
// Interval ones, Headline), WriteCompare's sweep columns and the metrics a
// training log records each epoch.
var Table = []Metric{
	{"accuracy", "Acc", func(m Metrics) Num { return m.Accuracy }, probes, Num.Pct, true},
	{"recall_possible", "Rec pos", func(m Metrics) Num { return m.RecallPossible }, possible, Num.Pct, true},
	{"recall_impossible", "Rec imp", func(m Metrics) Num { return m.RecallImpossible }, impossible, Num.Pct, true},
	{"f1_all", "F1@All", func(m Metrics) Num { return m.F1All }, probes, Num.Pct, true},
	{"f1_first", "F1@1", func(m Metrics) Num { return m.F1First }, func(m Metrics) string { return count(m.FirstTurnProbes) }, Num.Pct, true},
	{"fail_f1", "Fail-F1", func(m Metrics) Num { return m.FailF1 }, probes, Num.Pct, true},
	{"coverage", "Cover", func(m Metrics) Num { return m.Coverage }, func(m Metrics) string { return ratioOf(m.Covered, m.Intervals) }, Num.Pct, true},
	{"mre_p50", "MRE P50", func(m Metrics) Num { return m.MREP50 }, mreCount, Num.Pct, true},
	{"mre_p90", "MRE P90", func(m Metrics) Num { return m.MREP90 }, mreCount, Num.Pct, true},
	{"reward", "R", func(m Metrics) Num { return m.Reward }, probes, fixed3, true},
	{"score", "S", func(m Metrics) Num { return m.Score }, possible, fixed3, true},
	{"format_valid", "Format valid", func(m Metrics) Num { return m.FormatValid }, probes, Num.Pct, false},
	{"hit_rate", "Hit rate", func(m Metrics) Num { return m.HitRate }, func(m Metrics) string { return ratioOf(m.Covered, m.TruePossible) }, Num.Pct, false},
	{"optimistic_share", "Optimistic misses", func(m Metrics) Num { return m.OptimisticShare }, func(m Metrics) string { return ratioOf(m.Optimistic, m.Misses) }, Num.Pct, false},
	{"conservative_share", "Conservative misses", func(m Metrics) Num { return m.ConservativeShare }, func(m Metrics) string { return ratioOf(m.Conservative, m.Misses) }, Num.Pct, false},
	{"reward_possible", "R on possible", func(m Metrics) Num { return m.RewardPossible }, possible, fixed3, false},
	{"reward_impossible", "R on impossible", func(m Metrics) Num { return m.RewardImpossible }, impossible, fixed3, false},
	{"score_intervals", "S on intervals", func(m Metrics) Num { return m.ScoreIntervals }, func(m Metrics) string { return count(m.Intervals) }, fixed3, false},
	{"score_covered", "S on covered", func(m Metrics) Num { return m.ScoreCovered }, func(m Metrics) string { return count(m.Covered) }, fixed3, false},
}

// Headline names the metrics Bootstrap gives intervals for (Table's
// Interval ones), in report order.
var Headline = intervalNames()

func intervalNames() []string {
	var names []string
	for _, mt := range Table {
		if mt.Interval {
			names = append(names, mt.Name)
		}
	}
	return names
}

// MetricNamed is Table's row called name.
func MetricNamed(name string) (Metric, bool) {
	for _, mt := range Table {
		if mt.Name == name {
			return mt, true
		}
	}
	return Metric{}, false
}

func fixed3(v Num) string { return v.Fixed(3) }

func count(n int) string        { return fmt.Sprintf("%d", n) }
func ratioOf(k, n int) string   { return fmt.Sprintf("%d/%d", k, n) }
func probes(m Metrics) string   { return count(m.Probes) }
func possible(m Metrics) string { return count(m.TruePossible) }
func impossible(m Metrics) string {
	return count(m.TrueImpossible)
}
func mreCount(m Metrics) string { return count(m.MRECount) }
