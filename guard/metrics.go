package guard

import (
	"strconv"
	"time"

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
	stops             *prometheus.CounterVec
	stoppedSpent      prometheus.Counter
	ledgerErrors      prometheus.Counter
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
			Help: "Tokens the estimator itself spent, by kind (input, output)."}, []string{"kind"}),
		stops: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bagen_guard_stops_total",
			Help: "Sessions stopped, by reason (impossible, budget)."}, []string{"reason"}),
		stoppedSpent: prometheus.NewCounter(prometheus.CounterOpts{Name: "bagen_guard_stopped_spent_tokens_total",
			Help: "Tokens the stopped sessions had spent when stopped."}),
		ledgerErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "bagen_guard_ledger_errors_total",
			Help: "Ledger writes that failed (the call itself went through)."}),
	}
	live_ := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "bagen_guard_sessions",
		Help: "Sessions held in memory."}, live)
	m.reg.MustRegister(m.sessions, m.calls, m.tokens, m.estimates, m.estimatorLatency, m.estimatorFailures,
		m.estimatorTokens, m.stops, m.stoppedSpent, m.ledgerErrors, live_)
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

func (m *metrics) estimate(e rollout.GuardEstimate, d time.Duration) {
	m.estimates.WithLabelValues(e.Verdict).Inc()
	m.estimatorLatency.Observe(d.Seconds())
	m.estimatorTokens.WithLabelValues("input").Add(float64(e.EstimatorInput))
	m.estimatorTokens.WithLabelValues("output").Add(float64(e.EstimatorOutput))
}

func (m *metrics) stopped(s *rollout.GuardStop) {
	m.stops.WithLabelValues(s.Reason).Inc()
	m.stoppedSpent.Add(float64(s.Spent))
}
