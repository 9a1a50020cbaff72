package eval

import "math"

// Metrics holds every number eval reports, computed from one scored table.
// Undefined ratios (an empty denominator) are NaN.
type Metrics struct {
	Probes         int `json:"probes"`
	TruePossible   int `json:"true_possible"`
	TrueImpossible int `json:"true_impossible"`
	// Missing counts probes without a prediction, scored as invalid.
	Missing   int       `json:"missing_predictions"`
	Confusion Confusion `json:"confusion"`

	Accuracy            Num `json:"accuracy"`
	RecallPossible      Num `json:"recall_possible"`
	RecallImpossible    Num `json:"recall_impossible"`
	PrecisionImpossible Num `json:"precision_impossible"`
	// FormatValid is the share of answers that are an interval or
	// "impossible" inside <answer> tags.
	FormatValid Num `json:"format_valid"`
	// F1All and F1First are the feasibility macro-F1 over all probes and
	// over first-turn probes (probe_after_turn = 0); FailF1 is the F1 of the
	// impossible class over all probes.
	F1All           Num `json:"f1_all"`
	F1First         Num `json:"f1_first"`
	FirstTurnProbes int `json:"first_turn_probes"`
	FailF1          Num `json:"fail_f1"`

	// Intervals counts truly possible probes answered with a well-formed
	// interval (L ≤ H; reward.Detail.Interval), Covered those whose interval
	// holds r. Scalars and reversed intervals claim feasibility but are not
	// intervals.
	Intervals int `json:"intervals"`
	Covered   int `json:"covered"`
	// Coverage is Covered / Intervals (the appendix's Cover); HitRate is
	// Covered / TruePossible.
	Coverage Num `json:"coverage"`
	HitRate  Num `json:"hit_rate"`
	// MREP50 and MREP90 are percentiles (PercentileLinear) of the midpoint
	// relative error over the Intervals probes.
	MREP50 Num `json:"mre_p50"`
	MREP90 Num `json:"mre_p90"`
	// Reward is the mean rule reward R over all probes; Score the mean paper
	// score S over truly possible probes.
	Reward Num `json:"reward"`
	Score  Num `json:"score"`

	// Optimistic and Conservative count interval misses on possible probes
	// with the midpoint below and above r; the shares are over all misses.
	Misses            int `json:"misses"`
	Optimistic        int `json:"optimistic"`
	Conservative      int `json:"conservative"`
	OptimisticShare   Num `json:"optimistic_share"`
	ConservativeShare Num `json:"conservative_share"`

	// Bins splits optimism, coverage and failure timing by rollout progress.
	Bins      []Bin     `json:"bins"`
	EarlyStop EarlyStop `json:"early_stop"`

	// CI holds bootstrap 95% intervals by headline name (see Headline),
	// filled by the caller from Bootstrap.
	CI map[string]CI `json:"ci,omitempty"`
}

// Compute scores the table. rows is not modified.
func Compute(rows []Scored) Metrics {
	m := headline(rows)
	var valid int
	for _, r := range rows {
		if r.Missing {
			m.Missing++
		}
		if r.FormatValid() {
			valid++
		}
	}
	m.FormatValid = ratio(valid, len(rows))
	m.Bins = progressBins(rows)
	m.EarlyStop = earlyStop(rows)
	return m
}

// headline computes the probe-level metrics, the ones Bootstrap resamples.
func headline(rows []Scored) Metrics {
	m := Metrics{Probes: len(rows)}
	m.Confusion = ConfusionOf(rows)
	m.TruePossible = m.Confusion.Possible.Total()
	m.TrueImpossible = m.Confusion.Impossible.Total()
	m.Accuracy = m.Confusion.Accuracy()
	m.RecallPossible = m.Confusion.RecallPossible()
	m.RecallImpossible = m.Confusion.RecallImpossible()
	m.PrecisionImpossible = m.Confusion.PrecisionImpossible()
	m.F1All = m.Confusion.MacroF1()
	m.FailF1 = m.Confusion.F1Impossible()
	first := firstTurn(rows)
	m.FirstTurnProbes = len(first)
	m.F1First = ConfusionOf(first).MacroF1()
	m.setIntervals(rows)
	m.Reward, m.Score = means(rows)
	return m
}

// firstTurn returns the probes taken before the first action.
func firstTurn(rows []Scored) []Scored {
	var out []Scored
	for _, r := range rows {
		if r.ProbeAfterTurn == 0 {
			out = append(out, r)
		}
	}
	return out
}

// intervalStats are the interval diagnostics of a set of probes.
type intervalStats struct {
	intervals, covered int
	misses, optimistic int
	conservative       int
	coverage, p50, p90 Num
	mre                []float64
}

func intervalsOf(rows []Scored) intervalStats {
	var s intervalStats
	for _, r := range rows {
		if !r.Possible || !r.Detail.Interval {
			continue
		}
		s.intervals++
		if mre := r.midRelErr(); !math.IsNaN(mre) {
			s.mre = append(s.mre, mre)
		}
		if r.Detail.Covered {
			s.covered++
			continue
		}
		s.misses++
		switch mid := r.Mid(); {
		case mid < float64(r.Remaining):
			s.optimistic++
		case mid > float64(r.Remaining):
			s.conservative++
		}
	}
	s.coverage = ratio(s.covered, s.intervals)
	s.p50 = Num(PercentileLinear(s.mre, 50))
	s.p90 = Num(PercentileLinear(s.mre, 90))
	return s
}

func (m *Metrics) setIntervals(rows []Scored) {
	s := intervalsOf(rows)
	m.Intervals, m.Covered = s.intervals, s.covered
	m.Coverage = s.coverage
	m.HitRate = ratio(s.covered, m.TruePossible)
	m.MREP50, m.MREP90 = s.p50, s.p90
	m.Misses, m.Optimistic, m.Conservative = s.misses, s.optimistic, s.conservative
	m.OptimisticShare = ratio(s.optimistic, s.misses)
	m.ConservativeShare = ratio(s.conservative, s.misses)
}

// means returns the mean rule reward over all rows and the mean paper score
// over truly possible rows.
func means(rows []Scored) (reward, score Num) {
	var sr, ss float64
	var possible int
	for _, r := range rows {
		sr += r.Detail.Reward
		if r.Possible {
			ss += r.Score
			possible++
		}
	}
	reward, score = NaN, NaN
	if len(rows) > 0 {
		reward = Num(sr / float64(len(rows)))
	}
	if possible > 0 {
		score = Num(ss / float64(possible))
	}
	return reward, score
}
