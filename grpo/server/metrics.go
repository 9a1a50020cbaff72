package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"bagen-data/grpo"
	"bagen-data/internal/httpd"
)

// metrics holds the server's Prometheus collectors. Safe for concurrent
// use.
type metrics struct {
	*httpd.RequestMetrics
	embed   *prometheus.HistogramVec
	head    prometheus.Histogram
	answers *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		RequestMetrics: httpd.NewRequestMetrics("bagen_grpo"),
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
	if err := httpd.Register(reg, append(m.Collectors(), m.embed, m.head, m.answers)...); err != nil {
		return nil, err
	}
	return m, nil
}

// endpoint is a route with its metrics bound.
type endpoint struct {
	route
	*httpd.RouteMetrics
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
