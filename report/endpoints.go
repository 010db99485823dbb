package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/internal/errwriter"
)

// EndpointSide is one endpoint's figures over the measured phases
// (ClientSide.Endpoints, decision 1403): its requests, its throughput in
// requests, inputs and input tokens, and its latency. A pooling endpoint
// (embeddings, rerank) generates nothing: its latency is E2E, and TTFT,
// TTFC, ITL and TPOT are listed as not applying, not shown as zeros.
type EndpointSide struct {
	Endpoint string `json:"endpoint"` // its name (package endpoints); chat for records without one
	Kind     string `json:"kind"`     // its wire shape: chat, completion, embeddings, rerank
	Sent     int    `json:"sent"`
	OK       int    `json:"ok"`
	Failed   int    `json:"failed"` // sent − ok − canceled
	// InputUnit names what Inputs counts: "inputs" (embeddings),
	// "documents" (rerank); absent for generation endpoints.
	InputUnit string `json:"input_unit,omitempty"`
	// Inputs sums the successful requests' inputs, Results what their
	// answers gave back (vectors; rerank results, fewer with top_n).
	Inputs  int `json:"inputs,omitempty"`
	Results int `json:"results,omitempty"`
	// InputTokens sums the engine's prompt tokens (usage) over the
	// successful requests that reported them (InputTokensRequests of OK:
	// TEI's rerank reports none).
	InputTokens         int `json:"input_tokens"`
	InputTokensRequests int `json:"input_tokens_requests"`
	// OutputTokens sums generated tokens (0 for a pooling endpoint).
	OutputTokens int `json:"output_tokens"`

	RequestsPerSec    float64 `json:"requests_per_s"`
	InputsPerSec      float64 `json:"inputs_per_s,omitempty"`
	InputTokensPerSec float64 `json:"input_tokens_per_s"`
	// Latency is E2E over the successful requests, with its intervals; TTFT
	// too for a generation endpoint.
	Latency EndpointLatency `json:"latency_s"`
	// NotApplicable are the latencies that do not apply to the endpoint
	// (a pooling one: ttft, ttfc, itl, tpot).
	NotApplicable []string `json:"not_applicable,omitempty"`
}

// EndpointLatency is an endpoint's latency distributions, in seconds.
type EndpointLatency struct {
	E2E  Dist  `json:"e2e"`
	TTFT *Dist `json:"ttft,omitempty"` // generation endpoints only
}

// poolingNotApplicable are the latencies a pooling request has none of.
var poolingNotApplicable = []string{"ttft", "ttfc", "itl", "tpot"}

// poolingUnmeasured is why a pooling request has no TTFT, TTFC, ITL or
// TPOT (ClientSide.Unmeasured): not a failure to measure, none exists.
var poolingUnmeasured = map[string]string{"ttft": "does not apply (pooling: nothing generated)",
	"ttfc": "does not apply (pooling: nothing generated)", "itl": "does not apply (pooling: nothing generated)",
	"tpot": "does not apply (pooling: nothing generated)"}

// endpointSides are the records' figures per endpoint, in the registry's
// order (unknown names last, sorted): present when a record went to an
// endpoint other than chat and completions, or the records went to more
// than one; nil otherwise, so a chat run's summary is as it was.
func endpointSides(records []request, dur time.Duration, ps []float64) []EndpointSide {
	by := map[string][]int{}
	for i, r := range records {
		name := r.Endpoint
		if name == "" {
			name = endpoints.Default
		}
		by[name] = append(by[name], i)
	}
	_, chat := by[endpoints.Chat]
	_, completions := by[endpoints.Completions]
	if len(by) == 0 || (len(by) == 1 && (chat || completions)) {
		return nil
	}
	names := make([]string, 0, len(by))
	for name := range by {
		names = append(names, name)
	}
	order := endpoints.Names()
	slices.SortFunc(names, func(a, b string) int {
		ia, ib := slices.Index(order, a), slices.Index(order, b)
		switch {
		case ia >= 0 && ib >= 0:
			return ia - ib
		case ia >= 0:
			return -1
		case ib >= 0:
			return 1
		}
		return strings.Compare(a, b)
	})
	out := make([]EndpointSide, 0, len(names))
	for _, name := range names {
		out = append(out, endpointSide(name, records, by[name], dur, ps))
	}
	return out
}

// endpointSide is one endpoint's figures over records[idx].
func endpointSide(name string, records []request, idx []int, dur time.Duration, ps []float64) EndpointSide {
	e := EndpointSide{Endpoint: name}
	ep, known := endpoints.Lookup(name)
	if known == nil {
		e.Kind = string(ep.Kind)
		if ep.Pooling() {
			e.InputUnit, e.NotApplicable = "inputs", poolingNotApplicable
			if ep.Kind == endpoints.KindRerank {
				e.InputUnit = "documents"
			}
		}
	}
	e2e := make([]time.Duration, 0, len(idx))
	var ttft []time.Duration
	for _, i := range idx {
		r := &records[i]
		e.Sent++
		switch {
		case r.ErrorClass == client.ErrCanceled:
			continue
		case !r.OK():
			e.Failed++
			continue
		}
		e.OK++
		e.Inputs += r.Inputs
		e.Results += r.Results
		e.OutputTokens += r.OutputTokens
		if r.TokenSource == client.TokensFromUsage {
			e.InputTokens += r.PromptTokens
			e.InputTokensRequests++
		}
		e2e = append(e2e, r.E2E())
		if d, ok := r.TTFT(); ok && e.NotApplicable == nil {
			ttft = append(ttft, d)
		}
	}
	if sec := dur.Seconds(); sec > 0 {
		e.RequestsPerSec = float64(e.OK) / sec
		e.InputsPerSec = float64(e.Inputs) / sec
		e.InputTokensPerSec = float64(e.InputTokens) / sec
	}
	e.Latency.E2E = durationDist(e2e, ps)
	if e.NotApplicable == nil {
		d := durationDist(ttft, ps)
		e.Latency.TTFT = &d
	}
	return e
}

// Headline is the endpoint's answer in a few words: "embeddings 40.1
// requests/s, 320.8 inputs/s, 20531 input tokens/s, E2E p99 25.1 ms".
func (e EndpointSide) Headline() string {
	s := fmt.Sprintf("%s %.2f requests/s", e.Endpoint, e.RequestsPerSec)
	if e.InputUnit != "" {
		s += fmt.Sprintf(", %.1f %s/s", e.InputsPerSec, e.InputUnit)
	}
	if e.InputTokensRequests > 0 {
		s += fmt.Sprintf(", %.0f input tokens/s", e.InputTokensPerSec)
	}
	if d := e.Latency.E2E; d.N > 0 {
		s += fmt.Sprintf(", E2E p99 %s ms", ms(d.P99))
	}
	return s
}

// endpointsText writes the per-endpoint section of the text summary: a
// line per endpoint, its E2E quantiles with their intervals, and what does
// not apply to it.
func endpointsText(ew *errwriter.Writer, eps []EndpointSide) {
	if len(eps) == 0 {
		return
	}
	ew.Printf("endpoints:\n")
	for _, e := range eps {
		ew.Printf("  %s: %d ok, %d failed; %s\n", e.Endpoint, e.OK, e.Failed, strings.TrimPrefix(e.Headline(), e.Endpoint+" "))
		if e.InputUnit != "" {
			ew.Printf("    %d %s (%.1f a request), %d answered; input tokens %d (usage of %d of %d requests)\n",
				e.Inputs, e.InputUnit, ratioOr0(e.Inputs, e.OK), e.Results, e.InputTokens, e.InputTokensRequests, e.OK)
		}
		ew.Printf("    E2E %s\n", distLine(e.Latency.E2E))
		if len(e.NotApplicable) > 0 {
			ew.Printf("    %s: do not apply (nothing is generated; latency is E2E)\n", strings.ToUpper(strings.Join(e.NotApplicable, ", ")))
		}
	}
}

// distLine is a distribution's quantiles in ms with their 95 % intervals:
// "p50 12.9 (12.8–13.0) p99 165.3 (113.1–170.7) ms, n 1376".
func distLine(d Dist) string {
	if d.N == 0 {
		return "— (no successful request)"
	}
	var parts []string
	for _, q := range []struct {
		name string
		p, v float64
	}{{"p50", 50, d.P50}, {"p90", 90, d.P90}, {"p99", 99, d.P99}} {
		part := q.name + " " + ms(q.v)
		if iv, ok := d.QuantileCI(q.p); ok && iv.Bounded() {
			part += fmt.Sprintf(" (%s–%s)", ms(iv.Lo), ms(iv.Hi))
		}
		parts = append(parts, part)
	}
	return fmt.Sprintf("%s ms, n %d", strings.Join(parts, " "), d.N)
}

// ratioOr0 is a ÷ b, 0 when b is 0.
func ratioOr0(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// endpointsAnswer is the summary's answer line: line as it is, unless the
// run has a per-endpoint section, whose headlines then answer (a pooling
// run's output tokens/s is 0 by nature and says nothing).
func endpointsAnswer(c ClientSide, line string) string {
	if len(c.Endpoints) == 0 {
		return line
	}
	parts := make([]string, len(c.Endpoints))
	for i, e := range c.Endpoints {
		parts[i] = e.Headline()
	}
	return "answer: " + strings.Join(parts, "; ")
}

// endpointsMarkdown writes report.md's per-endpoint table: each endpoint's
// requests, throughput in requests, inputs and input tokens, its E2E
// quantiles with their 95 % intervals, and what does not apply to it.
func endpointsMarkdown(ew *errwriter.Writer, s Summary) {
	eps := s.Client.Endpoints
	if len(eps) == 0 {
		return
	}
	ew.Printf("### Per endpoint (95 %% intervals)\n\n")
	ew.Printf("| endpoint | ok | failed | requests/s | inputs/s | input tokens/s | E2E | does not apply |\n|---|---:|---:|---:|---:|---:|---|---|\n")
	for _, e := range eps {
		inputs := "—"
		if e.InputUnit != "" {
			inputs = fmt.Sprintf("%.1f %s/s", e.InputsPerSec, e.InputUnit)
		}
		tokens := "— (no usage)"
		if e.InputTokensRequests > 0 {
			tokens = fmt.Sprintf("%.0f", e.InputTokensPerSec)
		}
		na := "—"
		if len(e.NotApplicable) > 0 {
			na = strings.ToUpper(strings.Join(e.NotApplicable, ", "))
		}
		ew.Printf("| %s | %d | %d | %.2f | %s | %s | %s | %s |\n", mdText(e.Endpoint), e.OK, e.Failed, e.RequestsPerSec, inputs, tokens, mdText(distLine(e.Latency.E2E)), na)
	}
	ew.Printf("\n")
}
