package html

import (
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/report"
)

// TestEndpointTiles: each endpoint's throughput in its inputs, its E2E
// with intervals, and for a pooling endpoint the latencies that do not
// apply; a run without per-endpoint figures has no such tile.
func TestEndpointTiles(t *testing.T) {
	t.Parallel()
	e2e := report.Dist{N: 100, P50: 0.02, P99: 0.05}
	s := report.Summary{Client: report.ClientSide{Endpoints: []report.EndpointSide{
		{Endpoint: "rerank", OK: 100, Failed: 2, RequestsPerSec: 10, InputsPerSec: 160, InputUnit: "documents", InputTokensPerSec: 9000, InputTokensRequests: 100,
			Latency: report.EndpointLatency{E2E: e2e}, NotApplicable: []string{"ttft", "ttfc", "itl", "tpot"}},
		{Endpoint: "chat", OK: 5, RequestsPerSec: 0.5, Latency: report.EndpointLatency{E2E: e2e}},
	}}}
	var got []string
	for _, tl := range tilesOf(s) {
		got = append(got, tl.Label+"="+tl.Value+" "+tl.Unit+" | "+tl.Sub+" | "+tl.Class)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"rerank throughput=160 documents/s | 10 req/s · 100 ok · 2 failed · 9", "input tok/s | bad",
		"rerank E2E p50=20.0 ms", "rerank TTFT, TTFC, ITL, TPOT=n/a", "chat throughput=0.50 req/s | 5 ok · 0 failed |", "chat E2E p50="} {
		if !strings.Contains(all, want) {
			t.Errorf("tiles lack %q:\n%s", want, all)
		}
	}
	if n := len(tilesOf(report.Summary{})); n != len(got)-5 {
		t.Errorf("a run without per-endpoint figures has %d tiles, want %d", n, len(got)-5)
	}
	// Every request to a pooling endpoint: TTFT and ITL say they do not
	// apply; with chat beside them they are chat's.
	if !strings.Contains(all, "TTFT p50=") {
		t.Error("a run with chat lost its TTFT tile")
	}
	s.Client.Endpoints = s.Client.Endpoints[:1]
	for _, tl := range tilesOf(s) {
		if (tl.Label == "TTFT" || tl.Label == "ITL") && tl.Value != "n/a" || tl.Label == "TTFT p50" || tl.Label == "ITL p50" {
			t.Errorf("a pooling run's tile %+v", tl)
		}
	}
}
