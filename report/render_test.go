package report

import (
	"bytes"
	"encoding/csv"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fixedRun is a small run with fixed times: 6 requests (one failed), one
// measured phase, an engine with a TTFT histogram.
func fixedRun() (rundir.RunMeta, []client.Record, []scrape.Row) {
	ms := time.Millisecond
	var recs []client.Record
	for i := range 6 {
		sent := time.Duration(100+50*i) * ms
		r := client.Record{ID: "fixed-1-" + string(rune('0'+i)), Index: i, Phase: "main", Sent: sent, Wrote: sent + ms,
			FirstToken: sent + time.Duration(20+i)*ms, End: sent + 120*ms, PromptTokens: 32, OutputTokens: 4,
			TokenSource: client.TokensFromUsage, Status: 200, TargetPromptTokens: 32, MaxTokens: 4}
		for k := range 4 {
			r.Chunks = append(r.Chunks, client.Chunk{At: r.FirstToken + time.Duration(30*k)*ms, Tokens: 1})
		}
		recs = append(recs, r)
	}
	recs[5].ErrorClass, recs[5].Error, recs[5].Chunks, recs[5].FirstToken = client.ErrHTTPStatus, "status 503: overloaded | try later", nil, 0
	hist := func(count float64) map[scrape.Concept]scrape.Histogram {
		return map[scrape.Concept]scrape.Histogram{scrape.TTFT: {Bounds: []float64{0.01, 0.05, 0.1}, Cumulative: []float64{0, count, count}, Count: count, Sum: count * 0.022}}
	}
	before := scrape.Row{Target: "http://e/metrics", At: 50 * ms, OK: true, Snapshot: &scrape.Snapshot{Dialect: "sglang",
		Counters: map[scrape.Concept]float64{scrape.RequestsFinished: 10, scrape.PromptTokens: 320, scrape.GenerationTokens: 40}, Histograms: hist(10)}}
	after := scrape.Row{Target: "http://e/metrics", At: 600 * ms, OK: true, Snapshot: &scrape.Snapshot{Dialect: "sglang",
		Counters: map[scrape.Concept]float64{scrape.RequestsFinished: 15, scrape.PromptTokens: 480, scrape.GenerationTokens: 60}, Histograms: hist(15)}}
	meta := rundir.RunMeta{ID: "fixed-run", Scenario: "fixed", Description: "A fixed run for the golden files.\nIts second line.", Seed: 1, StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Engine: rundir.EngineMeta{Kind: "sim", Dialect: "sglang", BaseURL: "http://e/v1"},
		Phases: []rundir.PhaseMeta{{Name: "main", Measured: true, Start: 100 * ms, End: 500 * ms, Before: &before, After: &after}},
		// Its one failure in six is declared expected (as a scenario that
		// injects faults declares them): valid, with a warning.
		MaxFailureRate: 0.2}
	return meta, recs, []scrape.Row{before, after}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

func TestRenderersGolden(t *testing.T) {
	meta, recs, rows := fixedRun()
	s := Compute(meta, recs, rows, nil, 0)
	for _, tc := range []struct {
		name   string
		render Renderer
	}{{"summary.golden.md", RenderMarkdown}, {"summary.golden.txt", RenderText}} {
		var buf bytes.Buffer
		if err := tc.render(&buf, s); err != nil {
			t.Fatal(err)
		}
		golden(t, tc.name, buf.Bytes())
	}
	var buf bytes.Buffer
	if err := WriteRequestsCSV(&buf, recs); err != nil {
		t.Fatal(err)
	}
	golden(t, "requests.golden.csv", buf.Bytes())
}

// realEngineRun is fixedRun as a real engine answers it: a reasoning model
// whose first chunks are reasoning, chunks of two tokens (llama.cpp's
// usage_total spread), a stream without [DONE], a stream:false request,
// outputs short of max_tokens, a chat template's extra prompt tokens,
// llama.cpp timings and an SLO on TTFT.
func realEngineRun() (rundir.RunMeta, []client.Record, []scrape.Row) {
	meta, recs, rows := fixedRun()
	ms := time.Millisecond
	meta.ID, meta.Scenario, meta.Description = "real-run", "real", ""
	meta.MaxFailureRate = 0 // the default bound: its one failure in six makes it not valid
	meta.SLO = &rundir.SLO{TTFT: 200 * ms}
	meta.PromptCalibration = "prompts measured with the engine's /tokenize before the run"
	for i := range recs {
		r := &recs[i]
		r.FirstContent = r.FirstToken + 40*ms
		r.ReasoningTokens = 2
		r.TokensPerChunkSource = client.ChunkTokensUsageTotal
		r.PromptTokens = 32 + 12
		r.OutputTokens, r.MaxTokens = 8, 10
		for k := range r.Chunks {
			r.Chunks[k].Tokens = 2
		}
		r.Timings = &client.Timings{PromptMS: 15 + float64(i), PredictedN: 8, PredictedMS: 8 * 12, PredictedPerTokenMS: 12}
	}
	recs[0].MaxTokens = 8 // got its length
	recs[1].NoDone = true
	recs[2].NoStream, recs[2].Chunks, recs[2].FirstToken, recs[2].FirstContent, recs[2].TokensPerChunkSource, recs[2].Timings =
		true, nil, 0, 0, "", nil
	recs[5].FirstContent = 0
	return meta, recs, rows
}

func TestRealEngineGolden(t *testing.T) {
	meta, recs, rows := realEngineRun()
	s := Compute(meta, recs, rows, nil, 0)
	for _, tc := range []struct {
		name   string
		render Renderer
		want   []string
	}{
		{"summary_real.golden.md", RenderMarkdown, []string{"| TTFC |", "**Warning**: lengths were not enforced: 4 of 5 requests stopped early",
			"the chat template's tokens", "1 requests were not streamed", "1 streams ended after their finish_reason without [DONE]",
			"Chunks carry several tokens (0.50 chunks per output token): ITL is per token, each chunk's gap spread over its tokens (source usage_total)",
			"| llama.cpp timings (4 requests), ms |", "1 more could not be measured against it (ttft: not streamed 1)", "Prompt calibration: prompts measured"}},
		{"summary_real.golden.txt", RenderText, []string{"\nTTFC ", "reasoning 10 (part of output)",
			"WARN lengths were not enforced: 4 of 5 requests stopped early, 16.7 % of the planned output tokens missing",
			"the engine counted 37.5 % more prompt tokens than planned (p50 +12, p99 +12 tokens per request): the chat template's tokens",
			"TTFC to the first content: 4 of 5 successful requests reasoned or called a tool first",
			"chunks carry several tokens (0.50 chunks per output token)", "client TTFT − server prefill", "streams: 1 requests were not streamed"}},
	} {
		var buf bytes.Buffer
		if err := tc.render(&buf, s); err != nil {
			t.Fatal(err)
		}
		golden(t, tc.name, buf.Bytes())
		for _, w := range tc.want {
			// The text summary wraps its lines: a phrase may go on over a
			// line break; one that starts a line must.
			if found := hasText(buf.String(), w); strings.HasPrefix(w, "\n") && !bytes.Contains(buf.Bytes(), []byte(w)) || !found {
				t.Errorf("%s lacks %q", tc.name, w)
			}
		}
	}
	// The CSV carries what a notebook needs to redo the findings above:
	// TTFC apart from TTFT, reasoning tokens, streams without [DONE].
	var buf bytes.Buffer
	if err := WriteRequestsCSV(&buf, recs); err != nil {
		t.Fatal(err)
	}
	golden(t, "requests_real.golden.csv", buf.Bytes())
	lines, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, name := range lines[0] {
		col[name] = i
	}
	var ttfc, noDone, reasoning int
	for _, row := range lines[1:] {
		if row[col["ttfc_s"]] != "" && row[col["ttfc_s"]] != row[col["ttft_s"]] {
			ttfc++
		}
		if row[col["no_done"]] == "true" {
			noDone++
		}
		if row[col["reasoning_tokens"]] != "0" {
			reasoning++
		}
	}
	if ttfc != 4 || noDone != 1 || reasoning == 0 {
		t.Errorf("CSV: %d rows with TTFC after TTFT (want 4), %d without [DONE] (want 1), %d with reasoning tokens (want some)", ttfc, noDone, reasoning)
	}
}
