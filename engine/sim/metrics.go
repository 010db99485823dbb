package sim

import (
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/llmbench-org/llmbench/engine/sim/batch"
)

// dialectMetrics is one engine's /metrics: the loop calls the hooks at the
// moments that engine updates its metrics. Every hook runs on the loop
// goroutine.
type dialectMetrics interface {
	handler() http.Handler
	received(s *stream)                                                         // entered the scheduler
	queued(s *stream, at time.Duration)                                         // first entered a forward pass
	scheduled(b *batch.Batch, sch *batch.Scheduler, at time.Duration)           // a pass was formed
	passed(b *batch.Batch, sch *batch.Scheduler, at time.Duration, decodeN int) // a pass ended (decodeN: decode passes so far)
	delivered(s *stream, n int, at time.Duration)                               // n tokens reached the API server
	finished(s *stream, at time.Duration)
	aborted(s *stream, at time.Duration)
}

func seconds(d time.Duration) float64 { return d.Seconds() }

func metricsHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// tokenHistogram is a histogram whose observation adds a weight: SGLang's
// hand-rolled inter-token latency adds the whole interval to _sum but counts
// num_new_tokens in the bucket of interval/num_new_tokens, so _count is
// tokens, not observations. client_golang's Histogram cannot do that, so
// this collector keeps the counts itself.
type tokenHistogram struct {
	desc   *prometheus.Desc
	bounds []float64

	mu     sync.Mutex
	counts []uint64 // per bucket, non-cumulative; last = +Inf
	sum    float64
}

func newTokenHistogram(name, help string, bounds []float64, constLabels prometheus.Labels) *tokenHistogram {
	return &tokenHistogram{
		desc:   prometheus.NewDesc(name, help, nil, constLabels),
		bounds: bounds,
		counts: make([]uint64, len(bounds)+1),
	}
}

// observe adds interval to the sum and weight to the bucket of interval/weight.
func (h *tokenHistogram) observe(interval float64, weight int) {
	per := interval / float64(weight)
	i := sort.SearchFloat64s(h.bounds, per) // first bound >= per
	h.mu.Lock()
	h.sum += interval
	h.counts[i] += uint64(weight)
	h.mu.Unlock()
}

func (h *tokenHistogram) Describe(ch chan<- *prometheus.Desc) { ch <- h.desc }

func (h *tokenHistogram) Collect(ch chan<- prometheus.Metric) {
	h.mu.Lock()
	buckets := make(map[float64]uint64, len(h.bounds))
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i]
		buckets[b] = cum
	}
	count := cum + h.counts[len(h.bounds)]
	sum := h.sum
	h.mu.Unlock()
	ch <- prometheus.MustNewConstHistogram(h.desc, count, sum, buckets)
}
