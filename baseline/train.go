package baseline

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// Config configures Train. Dirs is required; every zero field takes the
// default named beside it.
type Config struct {
	// Dirs are build output directories; only their sft and rl splits are
	// read.
	Dirs []string
	// Coverage is the intervals' target coverage, in (0, 1); 0 means 0.9.
	Coverage float64
	// MaxAbort is the share of successful held-out runs the impossible
	// gate may stop, in [0, 1); 0 means 0.02.
	MaxAbort float64
	// Seed seeds the fit/calibration split and the word score's folds.
	Seed uint64
	// CalibrationShare is the share of trajectories held out for
	// calibration, in (0, 1); 0 means 0.5.
	CalibrationShare float64
	// Groups are the feature groups to use (see Groups); nil means all.
	Groups []string
}

// Defaults of Config's zero fields.
const (
	DefaultCoverage         = 0.9
	DefaultMaxAbort         = 0.02
	DefaultCalibrationShare = 0.5
	// lambda is the ridge penalty of every regression, on standardised
	// features.
	lambda = 1.0
	// folds cross-fits the word score.
	folds = 5
)

func (c Config) withDefaults() (Config, error) {
	if c.Coverage == 0 {
		c.Coverage = DefaultCoverage
	}
	if c.MaxAbort == 0 {
		c.MaxAbort = DefaultMaxAbort
	}
	if c.CalibrationShare == 0 {
		c.CalibrationShare = DefaultCalibrationShare
	}
	if c.Groups == nil {
		c.Groups = slices.Clone(Groups)
	}
	var bad []string
	if len(c.Dirs) == 0 {
		bad = append(bad, "Dirs: none")
	}
	if !(c.Coverage > 0 && c.Coverage < 1) {
		bad = append(bad, fmt.Sprintf("Coverage: want 0 < coverage < 1, got %v", c.Coverage))
	}
	if !(c.MaxAbort >= 0 && c.MaxAbort < 1) {
		bad = append(bad, fmt.Sprintf("MaxAbort: want 0 ≤ max-abort < 1, got %v", c.MaxAbort))
	}
	if !(c.CalibrationShare > 0 && c.CalibrationShare < 1) {
		bad = append(bad, fmt.Sprintf("CalibrationShare: want 0 < share < 1, got %v", c.CalibrationShare))
	}
	if len(bad) > 0 {
		return c, fmt.Errorf("%w: %s", ErrConfig, strings.Join(bad, "; "))
	}
	return c, nil
}

// Train fits a model on the sft and rl splits of cfg.Dirs: the features,
// the failure and remaining-token regressions on one part of the
// trajectories, the intervals' conformal quantile and the impossible gate
// on the other. The same data, config and seed give the same model.
func Train(ctx context.Context, cfg Config) (*Model, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &Model{Format: Format, Version: Version, Coverage: cfg.Coverage, MaxAbort: cfg.MaxAbort,
		Seed: cfg.Seed, CalibrationShare: cfg.CalibrationShare, Groups: cfg.Groups}
	var exs []example
	for i, dir := range cfg.Dirs {
		d, err := readDir(ctx, dir, i)
		if err != nil {
			return nil, err
		}
		switch {
		case i == 0:
			m.Task, m.Accounting = d.task, d.accounting
		case d.task != m.Task:
			return nil, fmt.Errorf("%s: %w: task %q, but %s is %q", dir, ErrTask, d.task, cfg.Dirs[0], m.Task)
		case d.accounting != m.Accounting:
			return nil, fmt.Errorf("%s: %w: token accounting %s, but %s's is %s", dir, ErrData, d.accounting, cfg.Dirs[0], m.Accounting)
		}
		m.Data = append(m.Data, d.source)
		exs = append(exs, d.examples...)
	}
	if err := checkExamples(exs, m); err != nil {
		return nil, err
	}
	gs := layout(m.Task, m.Groups)
	m.Features = featureList(gs)
	fit, cal := m.split(exs)
	if err := m.fit(gs, fit); err != nil {
		return nil, err
	}
	if err := m.calibrate(gs, cal); err != nil {
		return nil, err
	}
	return m, nil
}

// checkExamples marks each run failed or not, sets the model's budget and
// checks the probes' tasks.
func checkExamples(exs []example, m *Model) error {
	if len(exs) == 0 {
		return fmt.Errorf("%w: the sft and rl splits hold no probes", ErrData)
	}
	failed := map[string]bool{}
	budgets := map[int64]bool{}
	for _, e := range exs {
		failed[e.traj] = failed[e.traj] || !e.possible
		budgets[e.view.Stated.Budget] = true
		if e.view.Stated.Task != m.Task {
			return fmt.Errorf("%s: %w: a probe of task %q in data of task %q", e.id, ErrTask, e.view.Stated.Task, m.Task)
		}
	}
	for i := range exs {
		exs[i].failed = failed[exs[i].traj]
	}
	if len(budgets) == 1 {
		m.Budget = exs[0].view.Stated.Budget
	}
	return nil
}

// split holds out cfg's share of the successful and of the failed
// trajectories, drawn with the seed.
func (m *Model) split(exs []example) (fit, cal []example) {
	var succ, fail []string
	seen := map[string]bool{}
	for _, e := range exs {
		if seen[e.traj] {
			continue
		}
		seen[e.traj] = true
		if e.failed {
			fail = append(fail, e.traj)
		} else {
			succ = append(succ, e.traj)
		}
	}
	held := map[string]bool{}
	rng := rand.New(rand.NewPCG(m.Seed, 0x6261736531696e65))
	for _, ids := range [][]string{succ, fail} {
		slices.Sort(ids)
		rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		for _, id := range ids[:int(math.Round(m.CalibrationShare*float64(len(ids))))] {
			held[id] = true
		}
	}
	for _, e := range exs {
		if held[e.traj] {
			cal = append(cal, e)
		} else {
			fit = append(fit, e)
		}
	}
	slices.SortStableFunc(fit, func(a, b example) int { return strings.Compare(a.id, b.id) })
	slices.SortStableFunc(cal, func(a, b example) int { return strings.Compare(a.id, b.id) })
	m.Counts = Counts{FitRuns: runs(fit), FitProbes: len(fit), CalibrationRuns: runs(cal), CalibrationProbe: len(cal)}
	m.Counts.FailedRuns = len(fail)
	return fit, cal
}

func runs(exs []example) int {
	seen := map[string]bool{}
	for _, e := range exs {
		seen[e.traj] = true
	}
	return len(seen)
}

// fit fits the word score (cross-fitted), the scale and both
// regressions on the fitting part.
func (m *Model) fit(gs []*group, exs []example) error {
	var fails, succ int
	for _, e := range exs {
		if e.failed {
			fails++
		} else {
			succ++
		}
	}
	if fails == 0 || succ == 0 {
		return fmt.Errorf("%w: the fitting part needs successful and failed runs (got %d and %d probes)", ErrData, succ, fails)
	}
	xs := make([][]float64, len(exs))
	for i, e := range exs {
		xs[i] = extract(e.view, gs, nil)
	}
	if wi := wordsIndex(gs); wi >= 0 {
		m.Words = crossFitWords(exs, xs, wi, m.Seed)
	}
	m.Scale = fitScale(xs)
	zs := make([][]float64, len(xs))
	ys := make([]bool, len(xs))
	wts := make([]float64, len(xs))
	var rx, rz [][]float64
	var rs []float64
	for i, x := range xs {
		zs[i], ys[i] = m.Scale.apply(x), exs[i].failed
		// Each class weighs as much as the other.
		wts[i] = float64(len(xs)) / 2 / float64(fails)
		if !ys[i] {
			wts[i] = float64(len(xs)) / 2 / float64(succ)
		}
		if exs[i].possible && exs[i].remaining >= 1 {
			rx, rz, rs = append(rx, x), append(rz, zs[i]), append(rs, exs[i].remaining)
		}
	}
	if len(rs) == 0 {
		return fmt.Errorf("%w: the fitting part has no possible probe", ErrData)
	}
	m.Failure = fitBoost(xs, wts, 0, logLoss(ys), defaultBoost)
	m.Remaining = fitRemaining(rx, rz, rs, lambda)
	return nil
}

// wordsIndex is the words feature's column under gs, -1 without it.
func wordsIndex(gs []*group) int {
	at := 0
	for _, g := range gs {
		if g == wordsGroup {
			return at
		}
		at += len(g.features)
	}
	return -1
}

// crossFitWords fills column wi of xs with each probe's word score from a
// model fitted on the other folds of trajectories, and returns the model
// fitted on all of exs for the calibration part and for answering.
func crossFitWords(exs []example, xs [][]float64, wi int, seed uint64) *Bayes {
	docs := make([][]string, len(exs))
	failed := make([]bool, len(exs))
	var trajs []string
	seen := map[string]bool{}
	for i, e := range exs {
		docs[i], failed[i] = words(e.view), e.failed
		if !seen[e.traj] {
			seen[e.traj] = true
			trajs = append(trajs, e.traj)
		}
	}
	slices.Sort(trajs)
	rng := rand.New(rand.NewPCG(seed, 0x776f726473))
	rng.Shuffle(len(trajs), func(i, j int) { trajs[i], trajs[j] = trajs[j], trajs[i] })
	fold := make(map[string]int, len(trajs))
	for i, t := range trajs {
		fold[t] = i % folds
	}
	for f := range folds {
		var d [][]string
		var y []bool
		for i, e := range exs {
			if fold[e.traj] != f {
				d, y = append(d, docs[i]), append(y, failed[i])
			}
		}
		b := fitBayes(d, y)
		for i, e := range exs {
			if fold[e.traj] == f {
				xs[i][wi] = b.Score(docs[i])
			}
		}
	}
	return fitBayes(docs, failed)
}

// calibrate places the conformal quantile on the held-out possible probes
// and the gate on the held-out runs.
func (m *Model) calibrate(gs []*group, exs []example) error {
	var rx, rz [][]float64
	var rs []float64
	var turns []int
	peaks := map[string]*run{}
	var order []string
	for _, e := range exs {
		x := extract(e.view, gs, m.Words)
		z := m.Scale.apply(x)
		p := sigmoid(m.Failure.at(x))
		r := peaks[e.traj]
		if r == nil {
			r = &run{failed: e.failed}
			peaks[e.traj] = r
			order = append(order, e.traj)
		}
		r.peak = max(r.peak, p)
		if e.possible && e.remaining >= 1 {
			rx, rz, rs = append(rx, x), append(rz, z), append(rs, e.remaining)
			turns = append(turns, e.view.Turns())
		}
	}
	if len(rs) == 0 {
		return fmt.Errorf("%w: the calibration part has no possible probe", ErrData)
	}
	m.Remaining.calibrate(rx, rz, rs, turns, m.Coverage)
	runs := make([]run, len(order))
	for i, id := range order {
		runs[i] = *peaks[id]
	}
	m.Gate = calibrateGate(runs, m.MaxAbort)
	return nil
}
