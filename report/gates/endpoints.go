package gates

import (
	"fmt"
	"strings"

	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/report"
)

// EndpointMetricName is the name an endpoint's metrics go under:
// client.<name>.…, its "-" written "_" (a "-" in a gate is a minus):
// client.embeddings.e2e.p99, client.tei_rerank.inputs_per_s (decision 1403).
func EndpointMetricName(endpoint string) string {
	return "client." + strings.ReplaceAll(endpoint, "-", "_")
}

// clientEndpoints: each registered endpoint's figures of the summary's
// per-endpoint section (report.EndpointSide): requests_per_s, ok, failed
// and E2E for every endpoint, TTFT for a generation one, inputs_per_s and
// input_tokens_per_s for a pooling one. They read absent when the run sent
// the endpoint nothing, or has no per-endpoint section (a run on chat or
// completions alone: client.throughput.* and client.e2e.* are its). Their
// quantiles are not bootstrapped: a regression gate on them compares
// values, without an interval from the records.
func (v vocabularyBuilder) clientEndpoints() {
	for _, ep := range endpoints.All() {
		prefix, name := EndpointMetricName(ep.Name), ep.Name
		side := func(s *report.Summary) (report.EndpointSide, string) {
			for _, e := range s.Client.Endpoints {
				if e.Endpoint == name {
					return e, ""
				}
			}
			if len(s.Client.Endpoints) == 0 {
				return report.EndpointSide{}, "the run has no per-endpoint figures (it sent chat or completions alone: read client.throughput and client.e2e)"
			}
			return report.EndpointSide{}, "the run sent no request to " + name
		}
		per := func(suffix string, unit measure, better direction, doc string, get func(report.EndpointSide) float64) {
			v.add(metric{name: prefix + "." + suffix, unit: unit, better: better, doc: name + ": " + doc,
				read: func(s *report.Summary) reading {
					e, why := side(s)
					if why != "" {
						return absent("%s", why)
					}
					return value(get(e))
				}})
		}
		per("requests_per_s", rate, higher, "successful requests per second", func(e report.EndpointSide) float64 { return e.RequestsPerSec })
		per("ok", count, higher, "requests that succeeded", func(e report.EndpointSide) float64 { return float64(e.OK) })
		per("failed", count, lower, "requests that failed", func(e report.EndpointSide) float64 { return float64(e.Failed) })
		v.endpointDist(prefix+".e2e", name+": client end-to-end latency", side, func(e report.EndpointSide) *report.Dist { return &e.Latency.E2E })
		if ep.Pooling() {
			unit := "inputs"
			if ep.Kind == endpoints.KindRerank {
				unit = "documents"
			}
			per("inputs_per_s", rate, higher, unit+" of successful requests per second", func(e report.EndpointSide) float64 { return e.InputsPerSec })
			per("input_tokens_per_s", rate, higher, "input tokens (the engine's usage) per second", func(e report.EndpointSide) float64 { return e.InputTokensPerSec })
			continue
		}
		v.endpointDist(prefix+".ttft", name+": client TTFT", side, func(e report.EndpointSide) *report.Dist { return e.Latency.TTFT })
	}
}

// endpointDist adds an endpoint's latency distribution as dist does a
// run's, read from its per-endpoint figures.
func (v vocabularyBuilder) endpointDist(prefix, what string, side func(*report.Summary) (report.EndpointSide, string), get func(report.EndpointSide) *report.Dist) {
	dist := func(s *report.Summary) report.Dist {
		e, why := side(s)
		if d := get(e); why == "" && d != nil {
			return *d
		}
		return report.Dist{}
	}
	v.plain(prefix+".n", count, neither, "number of "+what+" samples", func(s *report.Summary) float64 { return float64(dist(s).N) })
	for _, st := range distStats {
		v.add(metric{name: prefix + "." + st.name, unit: seconds, better: lower, doc: st.name + " of " + what, dist: dist,
			read: func(s *report.Summary) reading {
				if _, why := side(s); why != "" {
					return absent("%s", why)
				}
				d := dist(s)
				if d.N == 0 {
					return absent("no request succeeded")
				}
				return value(st.get(d))
			}})
	}
}

// notApplicable is why a pooling endpoint's generation latency is no
// metric ("" for any other name): client.embeddings.ttft.p99 names a TTFT
// a pooling endpoint never has (nothing is generated), and the gate should
// say so rather than suggest the nearest name.
func notApplicable(name string) string {
	for _, ep := range endpoints.All() {
		rest, ok := strings.CutPrefix(name, EndpointMetricName(ep.Name)+".")
		if !ok || !ep.Pooling() {
			continue
		}
		latency, _, _ := strings.Cut(rest, ".")
		switch latency {
		case "ttft", "ttfc", "itl", "tpot":
			return fmt.Sprintf(": %s does not apply to %s (a pooling endpoint generates nothing; its latency is %s.e2e.*)",
				strings.ToUpper(latency), ep.Name, EndpointMetricName(ep.Name))
		}
	}
	return ""
}
