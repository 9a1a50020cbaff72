package guard

import (
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"bagen-data/rollout"
)

// metrics are the guard's Prometheus collectors. They carry formats,
// status codes, verdicts and reasons as labels, never a header or a
// session id. Safe for concurrent use.
type metrics struct {
	reg               *prometheus.Registry
	sessions          prometheus.Counter
	calls             *prometheus.CounterVec
	tokens            *prometheus.CounterVec
	estimates         *prometheus.CounterVec
	estimatorLatency  prometheus.Histogram
	estimatorFailures prometheus.Counter
	estimatorTokens   *prometheus.CounterVec
	unestimated       *prometheus.CounterVec
	stopDecisions     *prometheus.CounterVec
	stops             *prometheus.CounterVec
	stoppedSpent      prometheus.Counter
	saved             prometheus.Counter
	ledgerErrors      prometheus.Counter
	// The budget policies' (budget.go, forecast.go, loop.go).
	warnings       *prometheus.CounterVec
	usd            prometheus.Counter
	unpriced       prometheus.Counter
	forecasts      *prometheus.CounterVec
	forecastTokens *prometheus.HistogramVec
	forecastUSD    *prometheus.HistogramVec
	// savedN and estimatorN feed the net gauge (see netTokens).
	savedN, estimatorN atomic.Int64
}

func newMetrics(live func() float64) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		sessions: prometheus.NewCounter(prometheus.CounterOpts{Name: "bagen_guard_sessions_total",
			Help: "Sessions started."}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bagen_guard_calls_total",
			Help: "Model calls by wire format and status code (guard answers included)."}, []string{"format", "code"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bagen_guard_tokens_total",
			Help: "Tokens the upstream reported, by wire format and kind (input, output, reasoning, cached)."}, []string{"format", "kind"}),
		estimates: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bagen_guard_estimates_total",
			Help: "Estimates by verdict (impossible, interval, scalar, unparseable, unestimated)."}, []string{"verdict"}),
		estimatorLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "bagen_guard_estimator_seconds",
			Help: "Time to an estimate, retries included.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 14)}),
		estimatorFailures: prometheus.NewCounter(prometheus.CounterOpts{Name: "bagen_guard_estimator_failures_total",
			Help: "Estimates that failed after their retries (the turn is unestimated)."}),
		estimatorTokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bagen_guard_estimator_tokens_total",
			Help: "Tokens the estimator itself spent, by kind (input, output, cached: the part of input served from its prompt cache)."}, []string{"kind"}),
		unestimated: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bagen_guard_unestimated_total",
			Help: "Turns due an estimate that have none, by reason (estimator, no_tokenizer, bad_usage, accounting)."}, []string{"reason"}),
		stopDecisions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bagen_guard_stop_decisions_total",
			Help: "Stops decided, by reason, whether or not a request came to refuse."}, []string{"reason"}),
		stops: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bagen_guard_stops_total",
			Help: "Sessions stopped (a decided stop that refused a request), by reason (impossible, budget, budget_usd, loop)."}, []string{"reason"}),
		stoppedSpent: prometheus.NewCounter(prometheus.CounterOpts{Name: "bagen_guard_stopped_spent_tokens_total",
			Help: "Tokens the stopped sessions had spent when stopped."}),
		saved: prometheus.NewCounter(prometheus.CounterOpts{Name: "bagen_guard_saved_tokens_total",
			Help: "Tokens the stops saved, estimated as the budget each stopped session had left."}),
		ledgerErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "bagen_guard_ledger_errors_total",
			Help: "Ledger writes that failed (the call itself went through)."}),
	}
	m.policyMetrics()
	live_ := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "bagen_guard_sessions",
		Help: "Sessions held in memory."}, live)
	net := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "bagen_guard_net_saved_tokens",
		Help: "Tokens saved by the stops less every token the estimator spent (netTokens); negative: the guard cost more than it saved."},
		func() float64 { return float64(m.netTokens()) })
	m.reg.MustRegister(m.sessions, m.calls, m.tokens, m.estimates, m.estimatorLatency, m.estimatorFailures,
		m.estimatorTokens, m.unestimated, m.stopDecisions, m.stops, m.stoppedSpent, m.saved, m.ledgerErrors, live_, net,
		m.warnings, m.usd, m.unpriced, m.forecasts, m.forecastTokens, m.forecastUSD)
	return m
}

func (m *metrics) call(format string, code int, u *rollout.GuardUsage) {
	m.calls.WithLabelValues(format, strconv.Itoa(code)).Inc()
	if u == nil {
		return
	}
	reasoning := int64(0)
	if u.Reasoning != nil {
		reasoning = *u.Reasoning
	}
	for kind, n := range map[string]int64{"input": u.Input, "output": u.Output, "reasoning": reasoning, "cached": u.Cached} {
		if n > 0 {
			m.tokens.WithLabelValues(format, kind).Add(float64(n))
		}
	}
}

func (m *metrics) estimate(e rollout.GuardEstimate) {
	m.estimates.WithLabelValues(e.Verdict).Inc()
	m.estimatorTokens.WithLabelValues("input").Add(float64(e.EstimatorInput))
	m.estimatorTokens.WithLabelValues("output").Add(float64(e.EstimatorOutput))
	m.estimatorTokens.WithLabelValues("cached").Add(float64(e.EstimatorCached))
	m.estimatorN.Add(e.EstimatorInput + e.EstimatorOutput)
}

// stopped counts a stop that refused a request.
func (m *metrics) stopped(s *rollout.GuardStop) {
	m.stops.WithLabelValues(s.Reason).Inc()
	m.stoppedSpent.Add(float64(s.Spent))
	m.saved.Add(float64(s.Saved))
	m.savedN.Add(s.Saved)
}

// netTokens is what the guard saved net of what it cost, in tokens:
//
//	net = Σ_{stops that refused a request} saved − Σ_{estimates} (estimator input + output)
//
// with saved = max(0, budget − spent) of each stop (GuardStop.Saved): the
// tokens the stopped session could still have spent under its budget,
// the offline early stop's saving for a failed run that would have run to
// its budget (the offline figure, the run's actual remaining tokens, is
// known only after the run: eval on the replay). Every estimator token
// counts, successful sessions' and cached prompt tokens included (cached
// tokens are cheaper, not free: prices are eval's). A negative net is a
// guard that cost more than it saved.
func (m *metrics) netTokens() int64 { return m.savedN.Load() - m.estimatorN.Load() }

// policyMetrics makes the budget policies' collectors.
func (m *metrics) policyMetrics() {
	m.warnings = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bagen_guard_warnings_total",
		Help: "Warnings given, by reason (threshold, loop) and threshold (percent of the budget; \"\" for a loop)."}, []string{"reason", "threshold"})
	m.usd = prometheus.NewCounter(prometheus.CounterOpts{Name: "bagen_guard_usd_total",
		Help: "Dollars of the priced calls, by the prices file (--prices)."})
	m.unpriced = prometheus.NewCounter(prometheus.CounterOpts{Name: "bagen_guard_unpriced_sessions_total",
		Help: "Sessions with a call the prices file does not price (its dollars are not counted)."})
	m.forecasts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bagen_guard_forecasts_total",
		Help: "Whole-session forecasts made, at a session's start or after a turn."}, []string{"at"})
	m.forecastTokens = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "bagen_guard_forecast_tokens",
		Help:    "Forecasts of a whole session's tokens (spent + the estimate's interval), by bound (low, high).",
		Buckets: prometheus.ExponentialBuckets(1000, 2, 14)}, []string{"bound"})
	m.forecastUSD = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "bagen_guard_forecast_usd",
		Help:    "Forecasts of a whole session's dollars, by bound (low, high); with prices only.",
		Buckets: prometheus.ExponentialBuckets(0.01, 2, 14)}, []string{"bound"})
}

// forecast counts a forecast.
func (m *metrics) forecast(f rollout.GuardForecast) {
	at := "turn"
	if f.AfterTurn == 0 {
		at = "start"
	}
	m.forecasts.WithLabelValues(at).Inc()
	m.forecastTokens.WithLabelValues("low").Observe(float64(f.Low))
	m.forecastTokens.WithLabelValues("high").Observe(float64(f.High))
	if f.USDHigh > 0 {
		m.forecastUSD.WithLabelValues("low").Observe(f.USDLow)
		m.forecastUSD.WithLabelValues("high").Observe(f.USDHigh)
	}
}
