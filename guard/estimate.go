package guard

import (
	"context"
	"errors"
	"strconv"
	"time"

	"bagen-data/dataset"
	"bagen-data/eval/prediction"
	"bagen-data/probes"
	"bagen-data/reward"
	"bagen-data/rollout"
)

// Estimator answers one rendered budget probe. *prediction.OpenAI behind
// prediction.Retry implements it (NewEstimator).
type Estimator interface {
	Estimate(ctx context.Context, id string, prompt []rollout.Message) (prediction.Prediction, error)
}

// retrying asks a prediction client through the retry policy eval uses.
type retrying struct {
	client prediction.Client
	retry  prediction.Retry
}

// NewEstimator is an Estimator asking client with retry.
func NewEstimator(client prediction.Client, retry prediction.Retry) Estimator {
	return retrying{client: client, retry: retry}
}

func (r retrying) Estimate(ctx context.Context, id string, prompt []rollout.Message) (prediction.Prediction, error) {
	var p prediction.Prediction
	n, err := r.retry.Do(ctx, func(ctx context.Context) error {
		var err error
		p, err = r.client.Complete(ctx, prediction.Probe{CustomID: id, Messages: prompt})
		return err
	})
	p.Attempts = n
	return p, err
}

// probePrompt renders the budget probe after the last turn of a replay,
// as `bagen-data probes` renders a replay probe: the task's system
// prompt, the turns as dialogue and the estimation prompt with its
// <think> output specification.
func probePrompt(task probes.Task, r probes.Replay, budget int64) []rollout.Message {
	return task.Render(r.Traj, r.Acc, probes.Probe{After: r.Turns()}, budget, true)
}

// verdict reads an estimator's answer with the reward's parser.
func verdict(response string) (string, *[2]int64) {
	p := reward.Parse(response)
	switch p.Kind {
	case reward.Interval, reward.Scalar:
		return p.Kind.String(), &[2]int64{p.Low, p.High}
	}
	return p.Kind.String(), nil
}

// estimate asks for the remaining tokens after turn k of s, which had
// then spent spent tokens and usd dollars, and applies the policy to the
// answer; failures are recorded as unestimated and
// never reach the agent.
func (g *Guard) estimate(s *Session, k int, prompt []rollout.Message, spent int64, usd float64, done chan struct{}) {
	defer close(done)
	start := time.Now()
	ctx, cancel := context.WithTimeout(g.ctx, g.cfg.EstimateTimeout)
	defer cancel()
	p, err := g.est.Estimate(ctx, s.ID+dataset.ProbeSuffix+strconv.Itoa(k), prompt)
	e := rollout.GuardEstimate{Event: "estimate", Session: s.ID, Time: g.stamp(), AfterTurn: k, LatencyMS: ms(time.Since(start))}
	if err != nil {
		g.metrics.estimatorFailures.Inc()
		e = g.unestimated(s, k, "estimator", err)
		e.LatencyMS = ms(time.Since(start))
	} else {
		e.Response = p.Response
		e.Verdict, e.Interval = verdict(p.Response)
		if p.Usage != nil {
			e.EstimatorInput, e.EstimatorOutput, e.EstimatorCached = p.Usage.PromptTokens, p.Usage.CompletionTokens, p.Usage.CachedTokens
		}
		g.metrics.estimate(e)
	}
	g.metrics.estimatorLatency.Observe(time.Since(start).Seconds())
	events := []any{e}
	if k == 0 {
		// Before the first turn only the forecast is recorded: an
		// estimate event names a probe after a turn (eval's ledger
		// reader).
		events = nil
	}
	s.mu.Lock()
	s.estimatorTokens += e.EstimatorInput + e.EstimatorOutput
	if e.Interval != nil {
		events = append(events, g.forecast(s, k, spent, usd, *e.Interval))
	}
	switch {
	case s.stop != nil, k == 0:
		// A forecast before the first turn informs; it decides nothing.
	case g.cfg.Policy == Stop && e.Verdict == "impossible":
		s.stop = g.decideStop(s, k, "impossible", spent)
		events = append(events, *s.stop)
		g.logf("session %s: stop decided after turn %d: the estimate is impossible (%d tokens spent)", s.ID, k, spent)
	case g.cfg.Policy == Warn:
		s.note = joinNotes(s.note, warnNote(k, e.Verdict, e.Interval, spent, g.budget)+forecastText(s.pol.forecast))
	}
	s.mu.Unlock()
	g.record(s, events...)
}

// due reports whether an estimate is asked after turn k of s: with an
// estimator and a budget, before any stop, on turns k ≥ EstimateFrom that
// are multiples of Every. Called with s.mu held.
func (g *Guard) due(s *Session, k int) bool {
	return g.est != nil && g.budget > 0 && s.stop == nil && k >= g.cfg.EstimateFrom && k%g.cfg.Every == 0
}

// unestimated is the estimate event of a turn that was due an estimate and
// has none, why in reason (a label: estimator, no_tokenizer, bad_usage or
// accounting) and err; it is counted and logged. Nothing is skipped
// silently.
func (g *Guard) unestimated(s *Session, k int, reason string, err error) rollout.GuardEstimate {
	e := rollout.GuardEstimate{Event: "estimate", Session: s.ID, Time: g.stamp(), AfterTurn: k,
		Verdict: "unestimated", Reason: reason, Error: err.Error()}
	g.metrics.estimate(e)
	g.metrics.unestimated.WithLabelValues(reason).Inc()
	g.logf("session %s: no estimate after turn %d (%s; traffic flows): %v", s.ID, k, reason, err)
	return e
}

// accountingReason is the reason label of an accounting failure.
func accountingReason(err error) string {
	switch {
	case errors.Is(err, probes.ErrNoTokenizer):
		return "no_tokenizer"
	case errors.Is(err, probes.ErrTokenOverflow):
		return "bad_usage"
	}
	return "accounting"
}

// awaitEstimate waits for the estimate of s's last turn, at most the
// estimate timeout (--wait).
func (g *Guard) awaitEstimate(ctx context.Context, s *Session) {
	s.mu.Lock()
	done := s.pending
	s.mu.Unlock()
	if done == nil {
		return
	}
	t := time.NewTimer(g.cfg.EstimateTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
