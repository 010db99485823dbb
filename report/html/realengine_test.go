package html

import (
	"html"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
)

// TestRealEngines: a page computed from what real engines send shows the
// TTFC row, llama.cpp's timings, the cautions and the token facts; a plain
// run shows none of them.
func TestRealEngines(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	var recs []client.Record
	for i := range 4 {
		sent := time.Duration(100+50*i) * ms
		r := client.Record{Index: i, Phase: "main", Sent: sent, FirstToken: sent + 20*ms, FirstContent: sent + 60*ms, End: sent + 120*ms,
			OutputTokens: 8, MaxTokens: 10, PromptTokens: 44, TargetPromptTokens: 32, ReasoningTokens: 2,
			TokenSource: client.TokensFromUsage, TokensPerChunkSource: client.ChunkTokensUsageTotal,
			Timings: &client.Timings{PromptMS: 15, PredictedPerTokenMS: 12, PredictedN: 8}}
		for k := range 4 {
			r.Chunks = append(r.Chunks, client.Chunk{At: r.FirstToken + time.Duration(30*k)*ms, Tokens: 2})
		}
		recs = append(recs, r)
	}
	recs[1].NoDone = true
	recs[2].NoStream, recs[2].Chunks, recs[2].FirstToken, recs[2].FirstContent = true, nil, 0, 0
	meta := rundir.RunMeta{Scenario: "real", SLO: &rundir.SLO{TTFT: 200 * ms},
		Phases: []rundir.PhaseMeta{{Name: "main", Measured: true, Start: 100 * ms, End: 500 * ms}}}
	real := renderString(t, Input{Summary: report.Compute(meta, recs, nil, nil, 0), Records: recs})
	if err := wellFormed(real); err != nil {
		t.Fatal(err)
	}
	text := html.UnescapeString(real)
	for _, want := range []string{
		`<span class="metric">TTFC</span>`, "llama.cpp's own timings (4 requests)", "client TTFT − server prefill",
		"Lengths were not enforced: 4 of 4 requests stopped early", "1 requests were not streamed",
		"1 streams ended after their finish_reason without [DONE]", "reasoning tokens", "output chunks",
		"The engine counted 37.5 % more prompt tokens than planned", "1 unmeasured, not counted",
		"Chunks carry several tokens (0.50 chunks per output token)", "TTFC to the first content: 3 of 4 successful requests reasoned",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("page lacks %q", want)
		}
	}

	for i := range recs {
		r := &recs[i]
		r.FirstContent, r.ReasoningTokens, r.Timings, r.NoDone, r.NoStream, r.MaxTokens, r.PromptTokens = r.FirstToken, 0, nil, false, false, 8, 32
		for k := range r.Chunks {
			r.Chunks[k].Tokens = 1
		}
		if r.FirstToken == 0 { // the request that was not streamed
			r.FirstToken, r.FirstContent = r.Sent+20*ms, r.Sent+20*ms
			r.Chunks = slices.Clone(recs[0].Chunks)
			for k := range r.Chunks {
				r.Chunks[k].At += r.Sent - recs[0].Sent
			}
		}
		r.OutputTokens = len(r.Chunks)
		r.MaxTokens = r.OutputTokens
	}
	plain := html.UnescapeString(renderString(t, Input{Summary: report.Compute(meta, recs, nil, nil, 0), Records: recs}))
	for _, not := range []string{`<span class="metric">TTFC</span>`, "llama.cpp's own timings", "not enforced", "not streamed (", "reasoning tokens", "prompt lengths", "unmeasured, not counted"} {
		if strings.Contains(plain, not) {
			t.Errorf("a plain run's page shows %q", not)
		}
	}
}
