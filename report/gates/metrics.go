package gates

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/didyoumean"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/reconcile"
	"github.com/llmbench-org/llmbench/report/validity"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// measure is what kind of quantity a metric is, which decides the units its
// values may be written in and how it is printed.
type measure int

const (
	count    measure = iota // a plain number of things
	seconds                 // a duration; literals need us, ms or s
	fraction                // 0–1; literals plain or in %
	rate                    // per second; literals plain
	boolean                 // true or false
	joules                  // an energy; literals need J, mJ, kJ or Wh (energy.go)
)

func (m measure) String() string {
	return [...]string{"count", "s", "fraction", "per_s", "bool", "J"}[m]
}

func (m measure) describe() string {
	return [...]string{"a count", "a duration", "a fraction", "a rate per second", "true or false", "an energy"}[m]
}

func (m measure) example() string {
	return [...]string{"0", "500ms", "1%", "100", "true", "0.5J"}[m]
}

// format prints a value of this measure for people: durations in ms (µs
// below 1 ms, s from 10 s), fractions in %.
func (m measure) format(v float64) string {
	switch {
	case math.IsInf(v, 0) || math.IsNaN(v):
		return fmt.Sprint(v)
	case m == seconds:
		switch a := math.Abs(v); {
		case a >= 10:
			return fmt.Sprintf("%.2fs", v)
		case a >= 1e-3 || a == 0:
			return fmt.Sprintf("%.1fms", v*1e3)
		default:
			return fmt.Sprintf("%.1fµs", v*1e6)
		}
	case m == fraction:
		return fmt.Sprintf("%.2f%%", v*100)
	case m == boolean:
		return fmt.Sprint(v != 0)
	case m == rate:
		return fmt.Sprintf("%.2f/s", v)
	case m == joules:
		return formatJoules(v)
	}
	return fmt.Sprintf("%g", v)
}

// direction says which way a metric gets better, so that "regression"
// means the same thing for a latency (up) and a throughput (down).
type direction int

const (
	neither direction = iota // no better way: counts of what was sent, token sums
	lower
	higher
)

func (d direction) String() string { return [...]string{"", "lower", "higher"}[d] }

// reading is a metric's value in one summary.
type reading struct {
	v      float64
	absent string // why the summary has no value (empty when it has one)
	// Server quantiles are bucket estimates: the true value lies in bucket;
	// aboveTop means it fell in +Inf and is somewhere above v.
	bucket    [2]float64
	hasBucket bool
	aboveTop  bool
}

func value(v float64) reading { return reading{v: v} }

func absent(format string, args ...any) reading {
	return reading{absent: fmt.Sprintf(format, args...)}
}

// family names a set of raw per-request samples a metric is a statistic of,
// so a regression gate can bootstrap it from both runs' records.
type family string

const (
	noSamples   family = ""
	ttftSamples family = "ttft"
	ttfcSamples family = "ttfc"
	itlSamples  family = "itl"
	tpotSamples family = "tpot"
	e2eSamples  family = "e2e"
	lagSamples  family = "schedule_lag"
	connSamples family = "connect"
	sendSamples family = "send_delay"
)

type metric struct {
	name   string
	phase  string // "" for the run's measured phases; else the one phase it reads (phase[NAME].…)
	unit   measure
	better direction
	doc    string
	read   func(*report.Summary) reading
	// With raw records: the statistic (mean or a quantile p) of a family.
	family family
	stat   string  // "mean" | "p50" ...
	p      float64 // the quantile of stat, 0 for the mean
	// dist reads the distribution of a latency (client ones): any of the
	// run's report percentiles can then be gated (client.ttft.p99.9).
	dist func(*report.Summary) report.Dist
	// server reads an engine histogram (or says why it is absent), for the
	// same reason: server.ttft.p99.9.
	server func(*report.Summary) (report.ServerDist, string)
}

// bootstrappable reports whether a regression gate on m can be given a
// confidence interval from raw records (not for n or max: the bootstrap
// distribution of a maximum is degenerate).
func (m metric) bootstrappable() bool { return m.family != noSamples && m.stat != "" }

// Metric describes one name of the gate vocabulary.
type Metric struct {
	Name   string `json:"name"`
	Unit   string `json:"unit"`             // count | s | fraction | per_s | bool
	Better string `json:"better,omitempty"` // lower | higher: the direction "regression" measures against
	Doc    string `json:"doc"`
}

// Metrics lists the vocabulary gates may name, sorted by name.
func Metrics() []Metric {
	out := make([]Metric, 0, len(vocabulary))
	for _, m := range vocabulary {
		out = append(out, Metric{Name: m.name, Unit: m.unit.String(), Better: m.better.String(), Doc: m.doc})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func lookupMetric(name string) (metric, bool) {
	if m, ok := vocabulary[name]; ok {
		return m, true
	}
	if m, ok := percentileMetric(name); ok {
		return m, true
	}
	phase, inner, ok := splitPhase(name)
	if !ok || !perPhase(inner) {
		return metric{}, false
	}
	m, ok := vocabulary[inner]
	if !ok {
		if m, ok = percentileMetric(inner); !ok {
			return metric{}, false
		}
	}
	m.name, m.phase = name, phase
	read := m.read
	m.read = func(s *report.Summary) reading {
		var names []string
		for _, ph := range s.Phases {
			if ph.Name == phase {
				// The phase as a run of its own: the metrics read only
				// the client and server views.
				view := report.Summary{Run: s.Run, Engine: s.Engine, Client: ph.Client, Server: ph.Server, GPU: ph.GPU}
				return read(&view)
			}
			names = append(names, ph.Name)
		}
		return absent("the run has no phase %q (its phases: %s)", phase, strings.Join(names, ", "))
	}
	return m, true
}

// phasePrefix opens a metric over one phase: phase[NAME].client.ttft.p99.
const phasePrefix = "phase["

// splitPhase splits phase[NAME].metric.
func splitPhase(name string) (phase, inner string, ok bool) {
	rest, ok := strings.CutPrefix(name, phasePrefix)
	if !ok {
		return "", "", false
	}
	phase, inner, ok = strings.Cut(rest, "].")
	return phase, inner, ok && phase != ""
}

// perPhase reports whether a metric has a value per phase: the client's and
// the server's views do; health, findings, run and sweep are the run's.
func perPhase(name string) bool {
	return strings.HasPrefix(name, "client.") || strings.HasPrefix(name, "server.")
}

// suggestion is ": did you mean X?" for the nearest known name, if near enough.
func suggestion(name string) string {
	prefix := ""
	if phase, inner, ok := splitPhase(name); ok {
		prefix, name = phasePrefix+phase+"].", inner
	}
	if why := notApplicable(name); why != "" { // endpoints.go
		return why
	}
	names := make([]string, 0, len(vocabulary))
	for n := range vocabulary {
		if prefix == "" || perPhase(n) {
			names = append(names, n)
		}
	}
	best := didyoumean.Closest(name, names, len(name)/3+2)
	if best == "" {
		if prefix != "" {
			return " (a phase reads client.* and server.* metrics; llmbench gate --metrics lists them)"
		}
		return " (llmbench gate --metrics lists them)"
	}
	return fmt.Sprintf(": did you mean %s%s?", prefix, best)
}

// percentileMetric is a latency at any percentile the run reports (its
// scenario's report.percentiles): client.ttft.p99.9, client.e2e.p75, and
// the engine's histograms' bucket estimates, server.ttft.p99.9.
func percentileMetric(name string) (metric, bool) {
	i := strings.LastIndex(name, ".p")
	for i > 0 {
		if p, err := strconv.ParseFloat(name[i+2:], 64); err == nil && p > 0 && p < 100 {
			base, ok := vocabulary[name[:i]+".p99"]
			if !ok || base.dist == nil && base.server == nil {
				return metric{}, false
			}
			label := rundir.PercentileName(p)
			m := base
			m.name, m.doc = name, strings.Replace(base.doc, "p99", label, 1)
			notReported := func(s *report.Summary) reading {
				return absent("%s is not among the run's report.percentiles (%v)", label, s.Percentiles)
			}
			if hist := base.server; hist != nil {
				m.read = func(s *report.Summary) reading {
					d, why := hist(s)
					if why != "" {
						return absent("%s", why)
					}
					e, ok := d.Quantile(p)
					if !ok {
						return notReported(s)
					}
					return reading{v: e.Value, bucket: e.Bucket, hasBucket: true, aboveTop: e.AboveTop}
				}
				return m, true
			}
			get := base.dist
			m.stat, m.p = label, p/100
			m.read = func(s *report.Summary) reading {
				d := get(s)
				if d.N == 0 {
					return absent("no samples")
				}
				v, ok := d.Quantile(p)
				if !ok {
					return notReported(s)
				}
				return value(v)
			}
			return m, true
		}
		i = strings.LastIndex(name[:i], ".p")
	}
	return metric{}, false
}

// vocabulary is every metric name, derived from report.Summary's fields.
var vocabulary = buildVocabulary()

// distStats are the statistics of a report.Dist, with the quantile each is.
var distStats = []struct {
	name string
	p    float64
	get  func(report.Dist) float64
}{
	{"mean", 0, func(d report.Dist) float64 { return d.Mean }},
	{"p50", 0.5, func(d report.Dist) float64 { return d.P50 }},
	{"p90", 0.9, func(d report.Dist) float64 { return d.P90 }},
	{"p95", 0.95, func(d report.Dist) float64 { return d.P95 }},
	{"p99", 0.99, func(d report.Dist) float64 { return d.P99 }},
	{"max", 0, func(d report.Dist) float64 { return d.Max }},
}

// buildVocabulary defines every metric once, section by section; a name
// defined twice panics at start-up.
func buildVocabulary() map[string]metric {
	v := vocabularyBuilder{}
	v.clientRequests()
	v.clientTokens()
	v.clientLatencies()
	v.clientEndpoints() // endpoints.go
	v.sessionMetrics()  // sessions.go
	v.imageMetrics()    // images.go
	v.serverHistograms()
	v.serverCounters()
	v.serverGauges()
	v.gpuMetrics()
	v.health()
	v.findingsRunSweep()
	v.searchMetrics()
	return v
}

// vocabularyBuilder is the vocabulary being built, with the shapes most of
// its metrics share.
type vocabularyBuilder map[string]metric

func (v vocabularyBuilder) add(m metric) {
	if _, dup := v[m.name]; dup {
		panic("gates: metric " + m.name + " defined twice")
	}
	v[m.name] = m
}

// plain adds a metric that is always present.
func (v vocabularyBuilder) plain(name string, unit measure, better direction, doc string, read func(*report.Summary) float64) {
	v.add(metric{name: name, unit: unit, better: better, doc: doc, read: func(s *report.Summary) reading { return value(read(s)) }})
}

// dist adds a distribution of seconds: n, then each statistic (absent
// without samples; for a client latency, the absence says how many
// successful requests could not be measured, and why).
func (v vocabularyBuilder) dist(prefix, what string, fam family, get func(*report.Summary) report.Dist, none string) {
	v.plain(prefix+".n", count, neither, "number of "+what+" samples", func(s *report.Summary) float64 { return float64(get(s).N) })
	latency, isClient := strings.CutPrefix(prefix, "client.")
	for _, st := range distStats {
		m := metric{name: prefix + "." + st.name, unit: seconds, better: lower, doc: st.name + " of " + what,
			read: func(s *report.Summary) reading {
				d := get(s)
				if d.N == 0 {
					if isClient {
						return absent("%s%s", none, unmeasuredNote(s, latency))
					}
					return absent("%s", none)
				}
				return value(st.get(d))
			}}
		if st.name != "max" {
			m.family, m.stat, m.p = fam, st.name, st.p
		}
		m.dist = get
		v.add(m)
	}
}

// clientRequests: client.requests, client.errors, client.error_rate.
func (v vocabularyBuilder) clientRequests() {
	v.plain("client.requests.sent", count, neither, "requests sent in the measured phases", func(s *report.Summary) float64 { return float64(s.Client.Requests.Sent) })
	v.plain("client.requests.ok", count, higher, "requests that succeeded", func(s *report.Summary) float64 { return float64(s.Client.Requests.OK) })
	v.plain("client.requests.failed", count, lower, "requests that failed (cancelled ones are not failures)", func(s *report.Summary) float64 { return float64(s.Client.Requests.Failed) })
	v.plain("client.requests.canceled", count, neither, "requests the run's abort cancelled in flight (not failures)", func(s *report.Summary) float64 { return float64(s.Client.Requests.Canceled) })
	for _, class := range client.FailureClasses() {
		v.plain("client.errors."+string(class), count, lower, "requests that failed with error class "+string(class),
			func(s *report.Summary) float64 { return float64(s.Client.Requests.Errors[string(class)]) })
	}
	// Kept for gates written before cancelled requests were counted apart:
	// the same number as client.requests.canceled, and no failure.
	v.plain("client.errors.canceled", count, neither, "requests the run's abort cancelled in flight (not failures: client.requests.canceled)",
		func(s *report.Summary) float64 {
			return float64(s.Client.Requests.Canceled + s.Client.Requests.Errors["canceled"])
		})
	v.add(metric{name: "client.error_rate", unit: fraction, better: lower, doc: "failed ÷ (sent − canceled): cancelled requests are neither",
		read: func(s *report.Summary) reading {
			r := s.Client.Requests
			if r.Sent-r.Canceled <= 0 {
				if r.Sent > 0 {
					return absent("every request sent was cancelled")
				}
				return absent("no request was sent")
			}
			return value(float64(r.Failed) / float64(r.Sent-r.Canceled))
		}})
}

// clientTokens: client.tokens, client.throughput, client.goodput.
func (v vocabularyBuilder) clientTokens() {
	v.plain("client.tokens.prompt", count, neither, "prompt tokens of successful requests", func(s *report.Summary) float64 { return float64(s.Client.Tokens.Prompt) })
	v.plain("client.tokens.output", count, neither, "output tokens of successful requests", func(s *report.Summary) float64 { return float64(s.Client.Tokens.Output) })
	v.plain("client.tokens.cached", count, neither, "cached prompt tokens of successful requests", func(s *report.Summary) float64 { return float64(s.Client.Tokens.Cached) })
	v.plain("client.tokens.reasoning", count, neither, "reasoning tokens of successful requests (part of output)", func(s *report.Summary) float64 { return float64(s.Client.Tokens.Reasoning) })
	v.plain("client.tokens.chunks", count, neither, "output chunks of successful streamed requests", func(s *report.Summary) float64 { return float64(s.Client.Tokens.Chunks) })
	v.plain("client.tokens.output_short", count, lower, "successful requests whose output fell short of their max_tokens", func(s *report.Summary) float64 {
		if o := s.Client.Tokens.OutputShort; o != nil {
			return float64(o.Requests)
		}
		return 0
	})
	v.plain("client.throughput.requests_per_s", rate, higher, "successful requests per second", func(s *report.Summary) float64 { return s.Client.Throughput.RequestsPerSec })
	v.plain("client.throughput.output_tokens_per_s", rate, higher, "output tokens per second", func(s *report.Summary) float64 { return s.Client.Throughput.OutputTokensPerSec })
	v.plain("client.throughput.total_tokens_per_s", rate, higher, "prompt + output tokens per second", func(s *report.Summary) float64 { return s.Client.Throughput.TotalTokensPerSec })
	for _, g := range []struct {
		name string
		unit measure
		doc  string
		get  func(*report.Goodput) float64
	}{
		{"client.goodput.requests_per_s", rate, "requests per second that succeeded and met the scenario's slo", func(g *report.Goodput) float64 { return g.RequestsPerS }},
		{"client.goodput.fraction", fraction, "good ÷ sent: the share of requests that met the scenario's slo", func(g *report.Goodput) float64 { return g.Fraction }},
		{"client.goodput.good", count, "requests that succeeded and met the scenario's slo", func(g *report.Goodput) float64 { return float64(g.Good) }},
		{"client.goodput.unmeasured", count, "successful requests that missed no bound of the slo but could not be measured against one (not streamed, no chunks): left out of the fraction", func(g *report.Goodput) float64 { return float64(g.Unmeasured) }},
	} {
		v.add(metric{name: g.name, unit: g.unit, better: higher, doc: g.doc,
			read: func(s *report.Summary) reading {
				if s.Client.Goodput == nil {
					return absent("the scenario sets no slo")
				}
				return value(g.get(s.Client.Goodput))
			}})
	}
}

func (v vocabularyBuilder) clientLatencies() {
	v.dist("client.ttft", "client TTFT", ttftSamples, func(s *report.Summary) report.Dist { return s.Client.Latency.TTFT }, "no request produced a first token")
	v.dist("client.ttfc", "client time to first content (reasoning and tool calls excluded)", ttfcSamples, func(s *report.Summary) report.Dist { return s.Client.Latency.TTFC }, "no request produced content")
	v.dist("client.itl", "client inter-token latency", itlSamples, func(s *report.Summary) report.Dist { return s.Client.Latency.ITL }, "no request streamed two content chunks")
	v.dist("client.tpot", "client time per output token", tpotSamples, func(s *report.Summary) report.Dist { return s.Client.Latency.TPOT }, "no request produced two output tokens")
	v.dist("client.e2e", "client end-to-end latency", e2eSamples, func(s *report.Summary) report.Dist { return s.Client.Latency.E2E }, "no request succeeded")
}

// serverHistograms: the engine's latency histograms, each's count, mean and
// bucket-estimated quantiles.
func (v vocabularyBuilder) serverHistograms() {
	for _, c := range []scrape.Concept{scrape.TTFT, scrape.ITL, scrape.TPOT, scrape.E2E, scrape.Queue, scrape.Prefill, scrape.Decode, scrape.Inference} {
		name := string(c)
		hist := func(s *report.Summary) (report.ServerDist, string) {
			if s.Server == nil {
				return report.ServerDist{}, "the run has no /metrics view"
			}
			d, ok := s.Server.Latency[name]
			if !ok {
				return d, fmt.Sprintf("the engine has no %s histogram (or it saw no observations)", name)
			}
			return d, ""
		}
		v.add(metric{name: "server." + name + ".n", unit: count, better: neither, doc: "observations in the engine's " + name + " histogram",
			read: func(s *report.Summary) reading {
				d, why := hist(s)
				if why != "" {
					return absent("%s", why)
				}
				return value(d.N)
			}})
		v.add(metric{name: "server." + name + ".mean", unit: seconds, better: lower, doc: "the engine's " + name + " mean (sum ÷ count)",
			read: func(s *report.Summary) reading {
				d, why := hist(s)
				if why != "" {
					return absent("%s", why)
				}
				return value(d.Mean)
			}})
		for _, q := range []struct {
			name string
			get  func(report.ServerDist) report.BucketEstimate
		}{
			{"p50", func(d report.ServerDist) report.BucketEstimate { return d.P50 }},
			{"p90", func(d report.ServerDist) report.BucketEstimate { return d.P90 }},
			{"p99", func(d report.ServerDist) report.BucketEstimate { return d.P99 }},
		} {
			v.add(metric{name: "server." + name + "." + q.name, unit: seconds, better: lower, server: hist,
				doc: "the engine's " + name + " " + q.name + ": the bucket estimate's value",
				read: func(s *report.Summary) reading {
					d, why := hist(s)
					if why != "" {
						return absent("%s", why)
					}
					e := q.get(d)
					return reading{v: e.Value, bucket: e.Bucket, hasBucket: true, aboveTop: e.AboveTop}
				}})
		}
	}
}

// serverCounters: the engine's counters, Δ over the measured phases.
func (v vocabularyBuilder) serverCounters() {
	for _, c := range []scrape.Concept{scrape.PromptTokens, scrape.GenerationTokens, scrape.CachedTokens, scrape.PrefixQueries, scrape.PrefixHits,
		scrape.RequestsReceived, scrape.RequestsFinished, scrape.RequestsAborted, scrape.Preemptions} {
		name := string(c)
		better := neither
		if c == scrape.RequestsAborted || c == scrape.Preemptions {
			better = lower
		}
		v.add(metric{name: "server.counters." + name, unit: count, better: better, doc: "the engine's " + name + " counter, Δ over the measured phases",
			read: func(s *report.Summary) reading {
				if s.Server == nil {
					return absent("the run has no /metrics view")
				}
				v, ok := s.Server.Counters[name]
				if !ok {
					return absent("the engine has no %s counter", name)
				}
				return value(v)
			}})
	}
}

// serverGauges: the engine's gauges, mean, max and last over the measured
// phases' scrapes.
func (v vocabularyBuilder) serverGauges() {
	for _, c := range []scrape.Concept{scrape.RequestsRunning, scrape.RequestsWaiting, scrape.KVCacheUsage, scrape.PrefixCacheHit, scrape.GenThroughput, scrape.BatchSize} {
		name := string(c)
		unit := count
		switch c {
		case scrape.KVCacheUsage, scrape.PrefixCacheHit:
			unit = fraction
		case scrape.GenThroughput:
			unit = rate
		}
		for _, st := range []struct {
			name string
			get  func(report.GaugeStat) float64
		}{
			{"mean", func(g report.GaugeStat) float64 { return g.Mean }},
			{"max", func(g report.GaugeStat) float64 { return g.Max }},
			{"last", func(g report.GaugeStat) float64 { return g.Last }},
		} {
			v.add(metric{name: "server.gauges." + name + "." + st.name, unit: unit, better: neither,
				doc: "the engine's " + name + " gauge, " + st.name + " over the measured phases' scrapes",
				read: func(s *report.Summary) reading {
					if s.Server == nil {
						return absent("the run has no /metrics view")
					}
					g, ok := s.Server.Gauges[name]
					if !ok || g.N == 0 {
						return absent("the engine has no %s gauge", name)
					}
					return value(st.get(g))
				}})
		}
	}
}

func (v vocabularyBuilder) health() {
	v.add(metric{name: "health.valid", unit: boolean, doc: "the run's numbers are representative: no invalid validity state (health.states)",
		read: func(s *report.Summary) reading { return value(b2f(s.Health.Valid)) }})
	// One metric per validity state, true when the run is in it, so a gate
	// can hold a run to one state (health.state.failures_over_bound ==
	// false) or tolerate a warning the scenario provokes on purpose.
	for _, name := range validity.Names {
		v.add(metric{name: "health.state." + name, unit: boolean, doc: "the run is in the validity state " + name + " (docs/summary-schema.md)",
			read: func(s *report.Summary) reading {
				return value(b2f(slices.ContainsFunc(s.Health.States, func(st validity.State) bool { return st.Name == name })))
			}})
	}
	v.plain("health.problems", count, lower, "reasons the run is not valid", func(s *report.Summary) float64 { return float64(len(s.Health.Problems)) })
	v.dist("health.schedule_lag", "schedule lag (actual − intended send, open-loop requests)", lagSamples,
		func(s *report.Summary) report.Dist { return s.Health.ScheduleLag }, "no open-loop request: nothing had a schedule to lag behind")
	v.dist("health.connect", "connection set-up time", connSamples,
		func(s *report.Summary) report.Dist { return s.Health.Connect }, "no request opened a new connection")
	v.dist("health.send_delay", "the client's send delay", sendSamples,
		func(s *report.Summary) report.Dist { return s.Health.SendDelay }, "no request was sent")
	v.plain("health.retries", count, lower, "resends after a dead kept-alive connection", func(s *report.Summary) float64 { return float64(s.Health.Retries) })
	v.plain("health.dropped_arrivals", count, lower, "open-loop arrivals never sent", func(s *report.Summary) float64 { return float64(s.Health.DroppedArrivals) })
	v.plain("health.late_arrivals", count, lower, "open-loop arrivals sent late", func(s *report.Summary) float64 { return float64(s.Health.LateArrivals) })
	v.plain("health.scrape_ok", count, neither, "successful scrapes", func(s *report.Summary) float64 { return float64(s.Health.ScrapeOK) })
	v.plain("health.scrape_failures", count, lower, "failed scrapes", func(s *report.Summary) float64 { return float64(s.Health.ScrapeFailures) })
	v.plain("health.streams_without_done", count, lower, "successful streams that ended without [DONE]", func(s *report.Summary) float64 { return float64(s.Health.StreamsWithoutDone) })
	v.plain("health.not_streamed", count, neither, "requests sent with stream:false (no TTFT, ITL or TPOT)", func(s *report.Summary) float64 { return float64(s.Health.NotStreamed) })
	v.plain("health.partial_lines", count, lower, "torn JSONL lines skipped", func(s *report.Summary) float64 { return float64(s.Health.PartialLines) })
	v.plain("health.client.cpu_utilization", fraction, lower, "the client's CPU use ÷ its cores", func(s *report.Summary) float64 { return s.Health.Client.CPUUtilization })
	v.plain("health.client.sched_latency_p99", seconds, lower, "the Go scheduler's runnable → running delay, p99", func(s *report.Summary) float64 { return s.Health.Client.SchedLatencyP99_s })
	v.plain("health.client.throttled", seconds, lower, "time the CPU limit of the client's container stopped it", func(s *report.Summary) float64 { return s.Health.Client.Throttled_s })
	v.add(metric{name: "health.client.saturated", unit: boolean, doc: "the client itself was likely a bottleneck",
		read: func(s *report.Summary) reading { return value(b2f(s.Health.Client.Saturated)) }})
	v.plain("health.client.gc_cycles", count, lower, "garbage collections in the client during the run", func(s *report.Summary) float64 { return float64(s.Health.Client.GCCycles) })
}

func (v vocabularyBuilder) findingsRunSweep() {
	for _, sev := range []reconcile.Severity{reconcile.Info, reconcile.Warn, reconcile.Fail} {
		better := lower
		if sev == reconcile.Info {
			better = neither
		}
		v.plain("findings."+string(sev), count, better, "findings of severity "+string(sev), func(s *report.Summary) float64 {
			n := 0
			for _, f := range s.Findings {
				if f.Severity == sev {
					n++
				}
			}
			return float64(n)
		})
	}
	v.plain("run.duration", seconds, neither, "the measured phases' duration", func(s *report.Summary) float64 { return s.Run.Duration })
	v.add(metric{name: "sweep.goodput_peak", unit: rate, better: higher, doc: "a sweep's best goodput: requests/s within the slo at its best point",
		read: func(s *report.Summary) reading {
			switch {
			case s.Sweep == nil:
				return absent("the run is not a sweep")
			case s.Sweep.GoodputPeak == nil:
				return absent("the scenario sets no slo")
			}
			return value(s.Sweep.GoodputPeak.RequestsPerS)
		}})
	v.add(metric{name: "sweep.capacity", unit: rate, better: higher, doc: "a sweep's capacity: requests/s at the saturation knee",
		read: func(s *report.Summary) reading {
			switch {
			case s.Sweep == nil:
				return absent("the run is not a sweep")
			case !s.Sweep.Saturation.Found:
				return absent("the sweep found no saturation: %s", s.Sweep.Saturation.Reason)
			}
			return value(s.Sweep.Saturation.Capacity)
		}})
}

// unmeasuredNote says how many successful requests had no sample of a client
// latency, and why: ": 12 of 12 successful requests unmeasured (not
// streamed 12)"; "" when the summary does not say.
func unmeasuredNote(s *report.Summary, latency string) string {
	why := s.Client.Unmeasured[latency]
	if len(why) == 0 {
		return ""
	}
	n := 0
	keys := make([]string, 0, len(why))
	for k, v := range why {
		n += v
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, why[k])
	}
	return fmt.Sprintf(": %d of %d successful requests unmeasured (%s)", n, s.Client.Requests.OK, strings.Join(parts, ", "))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
