package server

import (
	"math"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"bagen-data/internal/httpd"
)

// metrics holds the server's Prometheus collectors: httpd's request
// series and the scoring ones. Safe for concurrent use.
type metrics struct {
	*httpd.RequestMetrics
	items   *prometheus.CounterVec
	rewards *rewardHistogram
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		RequestMetrics: httpd.NewRequestMetrics("bagen_reward"),
		items: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bagen_reward_items_scored_total", Help: "Responses scored, by route.",
		}, []string{"route"}),
		rewards: newRewardHistogram(),
	}
	if err := httpd.Register(reg, append(m.Collectors(), m.items, m.rewards)...); err != nil {
		return nil, err
	}
	return m, nil
}

// bind returns rt with its series created, so that every route is
// exported from the start and recording a request needs no lookup by
// name.
func (m *metrics) bind(rt route) *endpoint {
	return &endpoint{route: rt, RouteMetrics: m.Bind(rt.name), items: m.items.WithLabelValues(rt.name)}
}

// tally is a request-local reward histogram, merged into the shared one
// once per request so batches do not contend on atomics per item.
type tally struct {
	counts [2][len(rewardBuckets) + 1]uint64
	sums   [2]float64
}

// rewardBuckets are the upper bounds of the reward histogram: rewards
// are 0, 0.2, or in (0, 1.8].
var rewardBuckets = [...]float64{0, 0.2, 0.4, 0.6, 0.8, 1, 1.2, 1.4, 1.6, 1.8}

func (t *tally) add(possible bool, r float64) {
	c := 0
	if possible {
		c = 1
	}
	i := 0
	for i < len(rewardBuckets) && r > rewardBuckets[i] {
		i++
	}
	t.counts[c][i]++
	t.sums[c] += r
}

// rewardHistogram is bagen_reward_reward{truth}: a histogram of rewards by
// the probe's truth class, fed in bulk from tallies.
type rewardHistogram struct {
	desc   *prometheus.Desc
	counts [2][len(rewardBuckets) + 1]atomic.Uint64
	sums   [2]atomic.Uint64 // float64 bits
}

var truthNames = [2]string{"impossible", "possible"}

func newRewardHistogram() *rewardHistogram {
	return &rewardHistogram{desc: prometheus.NewDesc("bagen_reward_reward",
		"Rewards given, by the probe's truth class.", []string{"truth"}, nil)}
}

func (h *rewardHistogram) merge(t *tally) {
	for c := range t.counts {
		n := uint64(0)
		for i, v := range t.counts[c] {
			if v > 0 {
				h.counts[c][i].Add(v)
				n += v
			}
		}
		if n == 0 {
			continue
		}
		for {
			old := h.sums[c].Load()
			if h.sums[c].CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+t.sums[c])) {
				break
			}
		}
	}
}

// Describe implements prometheus.Collector.
func (h *rewardHistogram) Describe(ch chan<- *prometheus.Desc) { ch <- h.desc }

// Collect implements prometheus.Collector.
func (h *rewardHistogram) Collect(ch chan<- prometheus.Metric) {
	for c, name := range truthNames {
		buckets := make(map[float64]uint64, len(rewardBuckets))
		var cum uint64
		for i, ub := range rewardBuckets {
			cum += h.counts[c][i].Load()
			buckets[ub] = cum
		}
		count := cum + h.counts[c][len(rewardBuckets)].Load()
		sum := math.Float64frombits(h.sums[c].Load())
		ch <- prometheus.MustNewConstHistogram(h.desc, count, sum, buckets, name)
	}
}
