package scenarios

import (
	"slices"

	"github.com/llmbench-org/llmbench/endpoints"
)

// DefaultInputs is request.inputs' default: one text a request.
const DefaultInputs = 1

// Pooling says what a request of a pooling endpoint (embeddings, rerank;
// decision 1400) carries: texts, the plan's texts per request (rerank's
// query first, then its documents), and whether it is a rerank, whose
// engine reads the query with each document. texts is 0 for a generation
// endpoint (and an unknown one).
func (r Request) Pooling() (texts int, rerank bool) {
	ep, err := endpoints.Lookup(r.Endpoint)
	if err != nil || !ep.Pooling() {
		return 0, false
	}
	n := r.Inputs
	if n == 0 {
		n = DefaultInputs
	}
	return ep.Texts(n), ep.Kind == endpoints.KindRerank
}

// poolingDatasets are the datasets whose prompts can be a pooling
// request's texts: each text is one of the dataset's requests, its
// messages joined. A trace paces and sizes requests one to one, and a
// conversation's turns need the replies: neither batches.
var poolingDatasets = []string{"", DatasetSynthetic, DatasetSharedPrefix, DatasetShareGPT, DatasetJSONL}

// validatePooling checks request.inputs, and what a pooling endpoint
// cannot do: stream, meet a TTFT or TPOT SLO, replay a trace or a
// conversation. workload.output_tokens and ignore_eos are not sent (the
// resolved scenario writes their defaults, so they are not refused).
func (s *Scenario) validatePooling(d *decoder) {
	ep, err := endpoints.Lookup(s.Request.Endpoint)
	if err != nil {
		return // Request.validate says so
	}
	if !ep.Pooling() {
		if s.Request.Inputs != 0 {
			d.failf("request.inputs", "only a pooling endpoint (%s) takes inputs: %s sends one prompt", orList(poolingNames()), ep.Name)
		}
		return
	}
	if s.Request.Inputs < 0 {
		d.failf("request.inputs", "want 1 or more texts a request, got %d", s.Request.Inputs)
	}
	if s.Request.Stream != nil && *s.Request.Stream {
		d.failf("request.stream", "%s answers whole: it is never streamed", ep.Name)
	}
	if s.Workload.Trace != nil {
		d.failf("workload.trace", "a trace sizes one prompt a request: %s requests carry request.inputs texts", ep.Name)
	}
	if !slices.Contains(poolingDatasets, s.Workload.Dataset.Type) {
		d.failf("workload.dataset.type", "%s takes its texts from %s, not %s", ep.Name, orList(poolingDatasets[1:]), s.Workload.Dataset.Type)
	}
	if s.SLO != nil && (s.SLO.TTFT > 0 || s.SLO.TPOT > 0) {
		d.failf("slo", "%s generates nothing, so TTFT and TPOT do not apply: bound slo.e2e", ep.Name)
	}
	if _, ok := s.Request.ExtraBody["query"]; ok && ep.Kind == endpoints.KindRerank {
		d.failf("request.extra_body.query", "llmbench sets query itself: the dataset makes it")
	}
}

// poolingNames are the pooling endpoints' names.
func poolingNames() []string {
	var out []string
	for _, ep := range endpoints.All() {
		if ep.Pooling() {
			out = append(out, ep.Name)
		}
	}
	return out
}
