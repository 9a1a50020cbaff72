package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"bagen-data/grpo"
)

// metrics holds the server's Prometheus collectors. Safe for concurrent
// use.
type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	embed    *prometheus.HistogramVec
	head     prometheus.Histogram
	answers  *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bagen_grpo_requests_total", Help: "HTTP requests by route and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "bagen_grpo_request_duration_seconds",
			Help:    "Time from request start to response written, by route.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 18),
		}, []string{"route"}),
		embed: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "bagen_grpo_embed_seconds",
			Help:    "Time to embed one prompt, by whether the embedding cache had it.",
			Buckets: prometheus.ExponentialBuckets(10e-6, 2, 20),
		}, []string{"cache"}),
		head: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "bagen_grpo_head_seconds",
			Help:    "Time an answer takes beyond the embedding: parsing the probe, the head, the answer text and token counts.",
			Buckets: prometheus.ExponentialBuckets(10e-6, 2, 16),
		}),
		answers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bagen_grpo_answers_total", Help: "Answers given, by kind (interval or impossible).",
		}, []string{"kind"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.latency, m.embed, m.head, m.answers} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// endpoint is a route with its metrics bound.
type endpoint struct {
	route
	requests *prometheus.CounterVec // by code, curried with the route
	latency  prometheus.Observer
}

// bind returns rt with its series created, so that every route is
// exported from the start.
func (m *metrics) bind(rt route) *endpoint {
	labels := prometheus.Labels{"route": rt.name}
	return &endpoint{route: rt, requests: m.requests.MustCurryWith(labels), latency: m.latency.With(labels)}
}

// observe records one answer.
func (m *metrics) observe(e grpo.Estimate) {
	cache := "miss"
	if e.Cached {
		cache = "hit"
	}
	m.embed.WithLabelValues(cache).Observe(e.Embed.Seconds())
	m.head.Observe(e.Head.Seconds())
	kind := "interval"
	if e.Action.Impossible {
		kind = "impossible"
	}
	m.answers.WithLabelValues(kind).Inc()
}
