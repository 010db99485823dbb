package html

import (
	"fmt"
	"strings"

	"github.com/llmbench-org/llmbench/report"
)

// withEndpointTiles is tiles with the per-endpoint ones after them, and,
// when every request went to a pooling endpoint, the TTFT and ITL tiles
// saying they do not apply rather than showing no figure.
func withEndpointTiles(tiles []tile, c report.ClientSide) []tile {
	pooling := len(c.Endpoints) > 0
	for _, e := range c.Endpoints {
		pooling = pooling && len(e.NotApplicable) > 0
	}
	for i, t := range tiles {
		if pooling && (t.Label == "TTFT p50" || t.Label == "ITL p50") {
			tiles[i] = tile{Label: strings.TrimSuffix(t.Label, " p50"), Value: "n/a", Sub: "does not apply: nothing is generated (embeddings, rerank); latency is E2E"}
		}
	}
	return append(tiles, endpointTiles(c)...)
}

// endpointTiles are the per-endpoint figures (report.EndpointSide,
// decision 1403) as tiles: each endpoint's throughput in its inputs (or
// requests) with requests/s and input tokens/s under it, its E2E with
// intervals, and, for a pooling endpoint, the latencies that do not apply.
func endpointTiles(c report.ClientSide) []tile {
	var out []tile
	for _, e := range c.Endpoints {
		t := tile{Label: e.Endpoint + " throughput", Value: num(e.RequestsPerSec), Unit: "req/s",
			Sub: fmt.Sprintf("%s ok · %s failed", count(e.OK), count(e.Failed))}
		if e.InputUnit != "" {
			t.Value, t.Unit = num(e.InputsPerSec), e.InputUnit+"/s"
			t.Sub = fmt.Sprintf("%s req/s · %s", num(e.RequestsPerSec), t.Sub)
		}
		if e.InputTokensRequests > 0 {
			t.Sub += fmt.Sprintf(" · %s input tok/s", num(e.InputTokensPerSec))
		}
		if e.Failed > 0 {
			t.Class = "bad"
		}
		out = append(out, t, latencyTile(e.Endpoint+" E2E", e.Latency.E2E))
		if len(e.NotApplicable) > 0 {
			out = append(out, tile{Label: e.Endpoint + " " + strings.ToUpper(strings.Join(e.NotApplicable, ", ")),
				Value: "n/a", Sub: "do not apply: nothing is generated, latency is E2E"})
		}
	}
	return out
}
