// Package baseline is a zero-token budget estimator: a statistic of the
// run's own numbers and text, fitted on the probes `bagen-data build`
// writes, that answers a rendered budget probe (paper §3.2, eq. 1) with an
// interval of the remaining tokens or "impossible" without asking any
// model. It is the reference a trained estimator must beat.
//
// Every answer is computed from the probe's text alone (Features): the
// numbers the estimation prompt states (probes.ParseProbe) and signals read
// from the dialogue — repeated observations and actions, error results, a
// cross-fitted naive-Bayes score over the words of the last observation and
// answer, and, where a task's text has structure, the task's own state
// (sokoban.go, searchr1.go). So eval on a probe file, a server answering an
// OpenAI request and the guard in-process see the same features.
//
// Two models share the features. The remaining tokens of a possible probe
// are modelled by boosted regression trees of their log (the centre) and a
// ridge regression of the log relative error (the spread); split conformal
// prediction on held-out trajectories (Lei et al. 2018, normalized scores)
// turns them into intervals that cover the truth with the requested
// probability, marginally. The log-odds that the run fails are boosted
// trees too (Newton boosting on the logistic loss, each class weighing the
// same); the impossible gate is calibrated at the run level (paper §6.1's
// early stop):
// the threshold is the one at which at most MaxAbort of the successful
// held-out runs would be stopped at any turn, and the gate is switched off
// when the held-out failed runs are not stopped significantly more often
// than that, so that a run of a kind the model has no signal for is never
// stopped at random.
package baseline
