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
	// FormatValid is the share of answers that are "impossible" or a
	// well-formed interval (L ≤ H; in every dimension of a Warehouse
	// answer) inside <answer> tags (reward.Judgement.FormatValid).
	FormatValid Num `json:"format_valid"`
	// F1All and F1First are the feasibility macro-F1 over all probes and
	// over the FirstTurnProbes, the probes at the set's first position
	// (FirstTurn: p = 0, before the first turn, in build's sets; k = 1,
	// after it, in replay probe sets); a rollout without a probe there is
	// left out. FailF1 is the F1 of the impossible class over all probes.
	F1All           Num `json:"f1_all"`
	F1First         Num `json:"f1_first"`
	FirstTurnProbes int `json:"first_turn_probes"`
	FailF1          Num `json:"fail_f1"`

	// Intervals counts truly possible probes answered with a well-formed
	// interval (L ≤ H; reward.Detail.Interval), Covered those whose interval
	// holds r. Scalars and reversed intervals claim feasibility but are not
	// intervals. On Warehouse probes an interval needs L ≤ H in all three
	// dimensions and covers when every dimension holds its remaining usage.
	Intervals int `json:"intervals"`
	Covered   int `json:"covered"`
	// Coverage is Covered / Intervals (the appendix's Cover); HitRate is
	// Covered / TruePossible.
	Coverage Num `json:"coverage"`
	HitRate  Num `json:"hit_rate"`
	// MREP50 and MREP90 are percentiles (PercentileLinear) of the midpoint
	// relative error over the MRECount of the Intervals probes whose error
	// is defined (r > 0), MREMean its mean (the authors' analyze_eval.py
	// reports the mean); a Warehouse probe's error is the mean of its
	// dimensions' errors (those with a positive truth).
	MREP50   Num `json:"mre_p50"`
	MREP90   Num `json:"mre_p90"`
	MREMean  Num `json:"mre_mean"`
	MRECount int `json:"mre_n"`
	// Reward is the mean rule reward R over all probes; Score the mean paper
	// score S over truly possible probes.
	Reward Num `json:"reward"`
	Score  Num `json:"score"`
	// RewardPossible and RewardImpossible are the mean rule reward over
	// truly possible and truly impossible probes (at most 1.8 and 0.2).
	RewardPossible   Num `json:"reward_possible"`
	RewardImpossible Num `json:"reward_impossible"`
	// ScoreIntervals and ScoreCovered are the mean paper score S over the
	// Intervals probes (at most Coverage) and over the Covered ones (the
	// mean tightness of covering intervals). Score, over all truly possible
	// probes, cannot exceed HitRate (S ≤ coverage); these two can, as the
	// Reward of the paper's overall table does (see WriteCompare).
	ScoreIntervals Num `json:"score_intervals"`
	ScoreCovered   Num `json:"score_covered"`

	// Optimistic and Conservative count interval misses on possible probes
	// with the midpoint below and above r; the shares are over all misses.
	Misses            int `json:"misses"`
	Optimistic        int `json:"optimistic"`
	Conservative      int `json:"conservative"`
	OptimisticShare   Num `json:"optimistic_share"`
	ConservativeShare Num `json:"conservative_share"`

	// Dims breaks Cover and MRE down by Warehouse dimension, in
	// reward.Dim order; empty when no probe is a Warehouse probe.
	Dims []DimMetrics `json:"dims,omitempty"`

	// TaskSuccess is the share of probed trajectories that succeeded (all
	// their probes truly possible) and MeanTurns their mean total_turns:
	// the task-performance columns of the paper's overall table. Both
	// describe the rollouts, not the estimator; TaskSuccess is undefined
	// on Warehouse probes, whose feasibility is challenge-conditioned.
	TaskSuccess Num `json:"task_success"`
	MeanTurns   Num `json:"mean_turns"`

	// Bins splits optimism, coverage and failure timing by rollout progress.
	Bins      []Bin     `json:"bins"`
	EarlyStop EarlyStop `json:"early_stop"`

	// CI holds bootstrap 95% intervals by headline name (see Headline),
	// filled by the caller from Bootstrap.
	CI map[string]CI `json:"ci,omitempty"`
	// BagenV1 is the authors' summary (ComputeBagenV1), filled by the
	// caller when asked for.
	BagenV1 *BagenV1 `json:"bagen_v1,omitempty"`
}

// Compute scores the table. rows is not modified.
func Compute(rows []Scored) Metrics {
	m := headline(rows, FirstTurn(rows))
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
	m.RewardPossible, m.RewardImpossible = classRewards(rows)
	m.Dims = dimMetrics(rows)
	m.Bins = progressBins(rows)
	m.EarlyStop = earlyStop(rows)
	m.TaskSuccess, m.MeanTurns = rollouts(rows, m.EarlyStop)
	return m
}

// rollouts computes TaskSuccess and MeanTurns over the trajectories of
// rows (each trajectory's total_turns is its first probe's).
func rollouts(rows []Scored, e EarlyStop) (success, turns Num) {
	seen := map[string]bool{}
	var sum int64
	warehouse := false
	for _, r := range rows {
		warehouse = warehouse || r.Warehouse
		if !seen[r.TrajectoryID] {
			seen[r.TrajectoryID] = true
			sum += r.TotalTurns
		}
	}
	if len(seen) == 0 {
		return NaN, NaN
	}
	success = ratio(e.Successful, e.Trajectories)
	if warehouse {
		success = NaN
	}
	return success, Num(float64(sum) / float64(len(seen)))
}

// headline computes the probe-level metrics, the ones Bootstrap resamples;
// first is the first-turn position (FirstTurn of the whole table).
func headline(rows []Scored, first int64) Metrics {
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
	at := probesAt(rows, first)
	m.FirstTurnProbes = len(at)
	m.F1First = ConfusionOf(at).MacroF1()
	m.setIntervals(rows)
	m.Reward, m.Score = means(rows)
	return m
}

// FirstTurn is the first-turn position of a table, the smallest
// probe_after_turn in it: 0 in build's sets, whose first probe of every
// rollout comes before its first turn (the paper's first-turn estimate "at
// task start"), 1 in replay probe sets, which probe after each
// non-terminal prefix and so first after turn 1. It is 0 for no rows.
func FirstTurn(rows []Scored) int64 {
	if len(rows) == 0 {
		return 0
	}
	first := rows[0].ProbeAfterTurn
	for _, r := range rows {
		first = min(first, r.ProbeAfterTurn)
	}
	return first
}

// probesAt returns the rows probed after p turns (duplicated rows
// included).
func probesAt(rows []Scored, p int64) []Scored {
	var out []Scored
	for _, r := range rows {
		if r.ProbeAfterTurn == p {
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
	mean               Num
	mre                []float64
	// mean S over the intervals and over the covered ones
	scoreIntervals, scoreCovered Num
}

func intervalsOf(rows []Scored) intervalStats {
	var s intervalStats
	var sum, sumCovered float64
	for _, r := range rows {
		if !r.Possible || !r.WellFormed() {
			continue
		}
		s.intervals++
		sum += r.Score
		if mre := r.MidRelErr(); !math.IsNaN(mre) {
			s.mre = append(s.mre, mre)
		}
		if r.AllCovered() {
			s.covered++
			sumCovered += r.Score
			continue
		}
		s.misses++
		switch r.Miss() {
		case -1:
			s.optimistic++
		case 1:
			s.conservative++
		}
	}
	s.coverage = ratio(s.covered, s.intervals)
	s.scoreIntervals, s.scoreCovered = NaN, NaN
	if s.intervals > 0 {
		s.scoreIntervals = Num(sum / float64(s.intervals))
	}
	if s.covered > 0 {
		s.scoreCovered = Num(sumCovered / float64(s.covered))
	}
	s.p50 = Num(PercentileLinear(s.mre, 50))
	s.p90 = Num(PercentileLinear(s.mre, 90))
	s.mean = mean(s.mre)
	return s
}

// mean is the arithmetic mean of v, NaN for an empty v.
func mean(v []float64) Num {
	if len(v) == 0 {
		return NaN
	}
	var sum float64
	for _, x := range v {
		sum += x
	}
	return Num(sum / float64(len(v)))
}

func (m *Metrics) setIntervals(rows []Scored) {
	s := intervalsOf(rows)
	m.Intervals, m.Covered = s.intervals, s.covered
	m.Coverage = s.coverage
	m.HitRate = ratio(s.covered, m.TruePossible)
	m.MREP50, m.MREP90, m.MREMean, m.MRECount = s.p50, s.p90, s.mean, len(s.mre)
	m.Misses, m.Optimistic, m.Conservative = s.misses, s.optimistic, s.conservative
	m.ScoreIntervals, m.ScoreCovered = s.scoreIntervals, s.scoreCovered
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

// classRewards returns the mean rule reward over truly possible and over
// truly impossible rows.
func classRewards(rows []Scored) (possible, impossible Num) {
	var sum [2]float64
	var n [2]int
	for _, r := range rows {
		k := 0
		if r.Possible {
			k = 1
		}
		sum[k] += r.Detail.Reward
		n[k]++
	}
	mean := func(k int) Num {
		if n[k] == 0 {
			return NaN
		}
		return Num(sum[k] / float64(n[k]))
	}
	return mean(1), mean(0)
}
