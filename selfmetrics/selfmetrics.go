// Package selfmetrics is llmbench's own Prometheus exporter: what a run is
// doing, as metrics a Prometheus can scrape and a Grafana dashboard
// (deploy/grafana/llmbench.json) can show while a long run goes on.
//
// Every metric is named llmbench_… and lives in the Metrics' own registry,
// never the global one, so two runs in one process do not collide and nothing
// else leaks in. The client latency histograms use vLLM's bucket layout
// (engine-metrics.md, "Shared bucket lists"), so a panel of llmbench's TTFT
// and one of the engine's can be read against the same bucket edges.
//
// The API is cheap enough for the per-request path: Observe costs a few
// atomic adds per request plus one per output token (ITL); nothing here is
// meant to be called per chunk. A nil *Metrics is valid and does nothing, so
// a run without an exporter can call it unconditionally.
package selfmetrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/llmbench-org/llmbench/client"
)

// Metric names, as exposed (counters carry their _total).
const (
	RequestsName     = "llmbench_requests_total"       // counter, label outcome
	InFlightName     = "llmbench_requests_in_flight"   // gauge
	TTFTName         = "llmbench_ttft_seconds"         // histogram
	ITLName          = "llmbench_itl_seconds"          // histogram, one observation per output token after the first
	E2EName          = "llmbench_e2e_seconds"          // histogram
	ScheduleLagName  = "llmbench_schedule_lag_seconds" // histogram
	ScrapesName      = "llmbench_scrapes_total"        // counter, label result
	PhaseName        = "llmbench_phase"                // info-style gauge, label phase, value 1
	OutputTokensName = "llmbench_output_tokens_total"  // counter
)

// OutcomeOK is the outcome label of a successful request; a failed one
// carries its client.ErrorClass ("connect", "timeout", ...).
const OutcomeOK = "ok"

// Scrape results (the result label of llmbench_scrapes_total).
const (
	ScrapeOK     = "ok"
	ScrapeFailed = "failed"
)

// Bucket layouts, in seconds: vLLM V1's TTFT, ITL and request-latency (REQ)
// lists (engine-metrics.md). ScheduleLagBuckets is llmbench's own: schedule
// lag is healthy below a millisecond, so it starts at 100 µs.
var (
	TTFTBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
		7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	ITLBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
		10.0, 20.0, 40.0, 80.0}
	E2EBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
		120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	ScheduleLagBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
		0.25, 0.5, 1.0, 2.5, 5.0, 10.0}
)

// errorClasses are the client's known failure classes: their series exist
// (at 0) from the start, so a rate panel shows them before the first failure.
var errorClasses = append(client.FailureClasses(), client.ErrCanceled)

// Metrics is one run's exporter. Its methods are safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	requests  *prometheus.CounterVec
	ok        prometheus.Counter
	byClass   map[client.ErrorClass]prometheus.Counter // the known classes, resolved once
	inFlight  prometheus.Gauge
	ttft      prometheus.Histogram
	itl       prometheus.Histogram
	e2e       prometheus.Histogram
	lag       prometheus.Histogram
	tokens    prometheus.Counter
	scrapeOK  prometheus.Counter
	scrapeBad prometheus.Counter
	phase     *phaseCollector
}

// itlBufs recycles ITL slices between Observe calls.
var itlBufs = sync.Pool{New: func() any { b := make([]time.Duration, 0, 256); return &b }}

// New returns an exporter with every metric registered in its own registry.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: RequestsName,
		Help: `Requests finished, by outcome: "ok" or the client's error class.`,
	}, []string{"outcome"})
	m.ok = m.requests.WithLabelValues(OutcomeOK)
	m.byClass = make(map[client.ErrorClass]prometheus.Counter, len(errorClasses))
	for _, c := range errorClasses {
		m.byClass[c] = m.requests.WithLabelValues(string(c))
	}
	m.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: InFlightName,
		Help: "Requests sent and not yet finished.",
	})
	m.ttft = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    TTFTName,
		Help:    "Client time to first token of successful requests (from the request on the wire), seconds; vLLM's buckets.",
		Buckets: TTFTBuckets,
	})
	m.itl = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    ITLName,
		Help:    "Client inter-token latency of successful requests, one observation per output token after the first, seconds; vLLM's buckets.",
		Buckets: ITLBuckets,
	})
	m.e2e = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    E2EName,
		Help:    "Client end-to-end latency of successful requests (from the request on the wire to the end of the stream), seconds; vLLM's request-latency buckets.",
		Buckets: E2EBuckets,
	})
	m.lag = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    ScheduleLagName,
		Help:    "How late requests were handed to the transport compared with the plan, seconds (early counts as 0); open-loop requests only (a closed loop has no plan to lag behind).",
		Buckets: ScheduleLagBuckets,
	})
	m.tokens = prometheus.NewCounter(prometheus.CounterOpts{
		Name: OutputTokensName,
		Help: "Output tokens received, from every finished request (failed ones included).",
	})
	scrapes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: ScrapesName,
		Help: `Scrapes of the engine's metrics, by result: "ok" or "failed".`,
	}, []string{"result"})
	m.scrapeOK = scrapes.WithLabelValues(ScrapeOK)
	m.scrapeBad = scrapes.WithLabelValues(ScrapeFailed)
	m.phase = &phaseCollector{desc: prometheus.NewDesc(PhaseName,
		"The run's current phase: 1 on the series of the phase under way.", []string{"phase"}, nil)}
	m.reg.MustRegister(m.requests, m.inFlight, m.ttft, m.itl, m.e2e, m.lag, m.tokens, scrapes, m.phase)
	return m
}

// Registry is the exporter's own registry (for tests, or to add collectors).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Begin counts a request in flight; call it when the request is sent.
func (m *Metrics) Begin() {
	if m != nil {
		m.inFlight.Inc()
	}
}

// End takes a request out of flight; call it once per Begin.
func (m *Metrics) End() {
	if m != nil {
		m.inFlight.Dec()
	}
}

// Observe records one finished request: its outcome, output tokens and
// schedule lag always; TTFT, per-token ITLs and E2E when it succeeded (a
// failure's times measure the failure, not the service). It does not touch
// the in-flight gauge (Begin/End do).
func (m *Metrics) Observe(r *client.Record) {
	if m == nil || r == nil {
		return
	}
	if r.OK() {
		m.ok.Inc()
	} else if c, ok := m.byClass[r.ErrorClass]; ok {
		c.Inc()
	} else { // a class this package does not know yet (the client's set is small and fixed)
		m.requests.WithLabelValues(string(r.ErrorClass)).Inc()
	}
	if r.OutputTokens > 0 {
		m.tokens.Add(float64(r.OutputTokens))
	}
	if r.Sent > 0 && r.Scheduled() { // a closed loop has no schedule: no sample, like the summary's
		m.lag.Observe(max(r.ScheduleLag(), 0).Seconds())
	}
	if !r.OK() {
		return
	}
	if d, ok := r.TTFT(); ok {
		m.ttft.Observe(d.Seconds())
	}
	if len(r.Chunks) > 1 {
		bp := itlBufs.Get().(*[]time.Duration)
		itls := r.ITLs((*bp)[:0])
		for _, d := range itls {
			m.itl.Observe(d.Seconds())
		}
		if cap(itls) <= 1<<16 { // do not pin a huge buffer
			*bp = itls[:0]
			itlBufs.Put(bp)
		}
	}
	m.e2e.Observe(r.E2E().Seconds())
}

// ObserveScrape counts one scrape of the engine's metrics.
func (m *Metrics) ObserveScrape(ok bool) {
	if m == nil {
		return
	}
	if ok {
		m.scrapeOK.Inc()
	} else {
		m.scrapeBad.Inc()
	}
}

// SetPhase makes name the current phase: llmbench_phase{phase=name} 1, and no
// other phase series. An empty name means no phase (no series).
func (m *Metrics) SetPhase(name string) {
	if m == nil {
		return
	}
	m.phase.cur.Store(&name)
}

// Handler serves the exporter's registry in the Prometheus exposition
// formats (text, or OpenMetrics when asked).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorHandling:     promhttp.ContinueOnError,
		EnableOpenMetrics: true,
	})
}

// Serve listens on addr (such as "127.0.0.1:0" or ":9464") and serves
// Handler at /metrics (and at /, for convenience) until ctx ends. It returns
// once listening, with the address actually bound; the server shuts down in
// the background when ctx is done.
func (m *Metrics) Serve(ctx context.Context, addr string) (string, error) {
	if m == nil {
		return "", errors.New("selfmetrics: Serve on a nil *Metrics")
	}
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	h := m.Handler()
	mux.Handle("/metrics", h)
	mux.Handle("/{$}", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			_ = srv.Close()
		}
	}()
	return l.Addr().String(), nil
}

// phaseCollector exposes the current phase as one constant series.
type phaseCollector struct {
	desc *prometheus.Desc
	cur  atomic.Pointer[string]
}

func (c *phaseCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *phaseCollector) Collect(ch chan<- prometheus.Metric) {
	p := c.cur.Load()
	if p == nil || *p == "" {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, 1, *p)
}
