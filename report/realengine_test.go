package report

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/rundir"
)

const msec = time.Millisecond

// streamed is a successful streamed request sent at 0: its first output
// chunk at first, then one chunk every gap carrying per tokens each, n
// chunks in all; the stream ends at the last chunk.
func streamed(first, gap time.Duration, n, per int) client.Record {
	r := client.Record{FirstToken: first, FirstContent: first, TokenSource: client.TokensFromUsage,
		TokensPerChunkSource: client.ChunkTokensUsageGrowth}
	for i := range n {
		r.Chunks = append(r.Chunks, client.Chunk{At: first + time.Duration(i)*gap, Tokens: int32(per)})
	}
	r.OutputTokens = n * per
	r.End = r.Chunks[n-1].At
	return r
}

func with(r client.Record, f func(*client.Record)) client.Record {
	f(&r)
	return r
}

func TestClientSideRealEngines(t *testing.T) {
	reasoning := func(r *client.Record) { r.FirstContent = r.FirstToken + 100*msec; r.ReasoningTokens = 3 }
	noStream := func(r *client.Record) {
		r.NoStream, r.Chunks, r.FirstToken, r.FirstContent, r.TokensPerChunkSource = true, nil, 0, 0, ""
	}
	tests := []struct {
		name    string
		records []client.Record
		check   func(t *testing.T, c ClientSide)
	}{
		{name: "ttfc equals ttft: nothing differs", records: []client.Record{streamed(10*msec, 5*msec, 4, 1), streamed(20*msec, 5*msec, 4, 1)},
			check: func(t *testing.T, c ClientSide) {
				if c.FirstTokenNotContent != 0 || !reflect.DeepEqual(c.Latency.TTFC, c.Latency.TTFT) || c.Tokens.Reasoning != 0 {
					t.Errorf("ttfc %+v vs ttft %+v, %d differ, reasoning %d", c.Latency.TTFC, c.Latency.TTFT, c.FirstTokenNotContent, c.Tokens.Reasoning)
				}
				if c.Unmeasured != nil {
					t.Errorf("unmeasured %v", c.Unmeasured)
				}
			}},
		{name: "reasoning first", records: []client.Record{with(streamed(10*msec, 5*msec, 4, 1), reasoning), streamed(20*msec, 5*msec, 4, 1),
			with(streamed(30*msec, 5*msec, 4, 1), func(r *client.Record) { r.FirstContent = 0 })},
			check: func(t *testing.T, c ClientSide) {
				if c.FirstTokenNotContent != 1 || c.Tokens.Reasoning != 3 {
					t.Errorf("%d first tokens not content, reasoning %d: want 1, 3", c.FirstTokenNotContent, c.Tokens.Reasoning)
				}
				if got := c.Latency.TTFC; got.N != 2 || got.Max != 0.110 {
					t.Errorf("ttfc %+v: want 2 samples, max 110 msec", got)
				}
				if got := c.Unmeasured["ttfc"]; got["no content chunk (reasoning or tool calls only)"] != 1 {
					t.Errorf("unmeasured ttfc %v", got)
				}
			}},
		{name: "chunks of three tokens", records: []client.Record{streamed(10*msec, 30*msec, 4, 3)},
			check: func(t *testing.T, c ClientSide) {
				tk := c.Tokens
				if tk.Chunks != 4 || tk.ChunksPerToken != 4.0/12 || tk.PerChunkSource != "usage_growth" || tk.PerChunkBySource != nil {
					t.Errorf("tokens %+v", tk)
				}
				// Three gaps of 30 msec, each spread over three tokens.
				if l := c.Latency.ITL; l.N != 9 || l.Max != 0.010 {
					t.Errorf("itl %+v: want 9 per-token samples of 10 msec", l)
				}
			}},
		{name: "mixed chunk sources", records: []client.Record{streamed(10*msec, 30*msec, 4, 1),
			with(streamed(10*msec, 30*msec, 4, 1), func(r *client.Record) { r.TokensPerChunkSource = client.ChunkTokensChunks }),
			with(streamed(10*msec, 30*msec, 4, 1), func(r *client.Record) { r.TokensPerChunkSource = "" })},
			check: func(t *testing.T, c ClientSide) {
				want := map[string]int{"usage_growth": 1, "chunks": 1, "unrecorded": 1}
				if c.Tokens.PerChunkSource != "mixed" || !cmp.Equal(c.Tokens.PerChunkBySource, want) || c.Tokens.ChunksPerToken != 1 {
					t.Errorf("tokens %+v", c.Tokens)
				}
			}},
		{name: "not streamed", records: []client.Record{streamed(10*msec, 5*msec, 4, 1), with(streamed(10*msec, 5*msec, 4, 1), noStream)},
			check: func(t *testing.T, c ClientSide) {
				if c.Latency.TTFT.N != 1 || c.Latency.E2E.N != 2 || c.Tokens.Chunks != 4 || c.Tokens.ChunksPerToken != 1 {
					t.Errorf("ttft %d, e2e %d samples, %d chunks, %v chunks per token", c.Latency.TTFT.N, c.Latency.E2E.N, c.Tokens.Chunks, c.Tokens.ChunksPerToken)
				}
				want := map[string]map[string]int{"ttft": {"not streamed": 1}, "ttfc": {"not streamed": 1}, "itl": {"not streamed": 1}, "tpot": {"not streamed": 1}}
				if diff := cmp.Diff(want, c.Unmeasured); diff != "" {
					t.Errorf("unmeasured (-want +got):\n%s", diff)
				}
			}},
		{name: "all max_tokens reached", records: []client.Record{with(streamed(10*msec, 5*msec, 4, 1), func(r *client.Record) { r.MaxTokens = 4 })},
			check: func(t *testing.T, c ClientSide) {
				if c.Tokens.OutputShort != nil {
					t.Errorf("output short %+v", c.Tokens.OutputShort)
				}
			}},
		{name: "output short", records: []client.Record{
			with(streamed(10*msec, 5*msec, 4, 1), func(r *client.Record) { r.MaxTokens = 4 }),
			with(streamed(10*msec, 5*msec, 2, 1), func(r *client.Record) { r.MaxTokens = 8 }),
			with(streamed(10*msec, 5*msec, 1, 1), func(r *client.Record) { r.MaxTokens = 4 }),
			with(streamed(10*msec, 5*msec, 1, 1), func(r *client.Record) { r.MaxTokens = 4; r.ErrorClass = client.ErrTimeout }),
			streamed(10*msec, 5*msec, 1, 1), // no max_tokens: not counted
		},
			check: func(t *testing.T, c ClientSide) {
				want := &OutputShort{Requests: 2, Of: 3, TokensShort: 9, PlannedTokens: 16, MissingFraction: 9.0 / 16, MeanFraction: (2.0/8 + 1.0/4) / 2}
				if diff := cmp.Diff(want, c.Tokens.OutputShort); diff != "" {
					t.Errorf("output short (-want +got):\n%s", diff)
				}
			}},
		{name: "prompt error", records: []client.Record{
			with(streamed(10*msec, 5*msec, 1, 1), func(r *client.Record) { r.TargetPromptTokens, r.PromptTokens = 100, 110 }),
			with(streamed(10*msec, 5*msec, 1, 1), func(r *client.Record) { r.TargetPromptTokens, r.PromptTokens = 200, 210 }),
			with(streamed(10*msec, 5*msec, 1, 1), func(r *client.Record) { r.TargetPromptTokens, r.PromptTokens = 100, 130 }),
			with(streamed(10*msec, 5*msec, 1, 1), func(r *client.Record) { r.TargetPromptTokens, r.PromptTokens = 0, 130 }), // no target
		},
			check: func(t *testing.T, c ClientSide) {
				want := &PromptError{Requests: 3, Mean: 50.0 / 3, P50: 10, P99: 29.4, Min: 10, Max: 30,
					FractionMean: (0.1 + 0.05 + 0.3) / 3, FractionP50: 0.075, FractionP99: 0.294} // quantiles interpolate (gonum LinInterp)
				if diff := cmp.Diff(want, c.Tokens.PromptError, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
					t.Errorf("prompt error (-want +got):\n%s", diff)
				}
			}},
		{name: "llama.cpp timings", records: []client.Record{
			// TTFT 50 msec, prefill 40 msec; 11 tokens over 100 msec: 10 msec per token, the engine says 9.
			with(streamed(50*msec, 10*msec, 11, 1), func(r *client.Record) {
				r.Timings = &client.Timings{PromptMS: 40, PredictedPerTokenMS: 9, PredictedN: 11}
			}),
			with(streamed(50*msec, 10*msec, 11, 1), func(r *client.Record) {
				r.Timings = &client.Timings{PromptMS: 30, PredictedMS: 88, PredictedN: 11}
			}),
			streamed(50*msec, 10*msec, 11, 1), // no timings
		},
			check: func(t *testing.T, c ClientSide) {
				st := c.ServerTimings
				if st == nil {
					t.Fatal("no server timings")
				}
				approx := cmpopts.EquateApprox(0, 1e-9)
				if st.Requests != 2 || !cmp.Equal(st.TTFTMinusPrompt.Mean, 0.015, approx) || !cmp.Equal(st.TTFTMinusPrompt.Max, 0.020, approx) ||
					!cmp.Equal(st.PredictedPerToken.Mean, 0.0085, approx) || !cmp.Equal(st.ClientPerToken.P50, 0.010, approx) || st.Prompt.N != 2 {
					t.Errorf("server timings %+v", st)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, clientSideOf(tt.records, time.Second, rundir.DefaultPercentiles))
		})
	}
}

func TestHealthStreams(t *testing.T) {
	noDone := streamed(10*msec, 5*msec, 2, 1)
	noDone.NoDone = true
	failedNoDone := noDone
	failedNoDone.ErrorClass = client.ErrStreamBroken
	noStream := client.Record{NoStream: true, End: 50 * msec, OutputTokens: 3}
	h := health(rundir.RunMeta{}, requestsOf([]client.Record{noDone, failedNoDone, noStream, streamed(10*msec, 5*msec, 2, 1)}), nil, 0, 0)
	if h.StreamsWithoutDone != 1 || h.NotStreamed != 1 {
		t.Errorf("streams without done %d, not streamed %d: want 1, 1", h.StreamsWithoutDone, h.NotStreamed)
	}
}

// TestGoodputUnmeasured: a request whose bound cannot be measured is
// neither good nor a miss, and is left out of the fraction.
func TestGoodputUnmeasured(t *testing.T) {
	noStream := func(e2e time.Duration, n int) client.Record {
		return client.Record{NoStream: true, End: e2e, OutputTokens: n}
	}
	noChunks := rec(0, 50*msec, 5) // streamed, usage says 5 tokens, no chunk came
	records := []client.Record{
		rec(10*msec, 100*msec, 10),  // good
		noStream(100*msec, 10),      // ttft and tpot unmeasured
		noStream(3*time.Second, 10), // over the e2e bound: a miss all the same
		noStream(100*msec, 1),       // ttft unmeasured, no tpot to miss
		noChunks,                    // streamed without a token: misses ttft when bound; tpot unmeasured
		rec(300*msec, 390*msec, 10), // ttft miss
		rec(10*msec, 10*msec, 1),    // good
	}
	tests := []struct {
		name   string
		slo    rundir.SLO
		want   *Goodput
		inLine []string
	}{
		{name: "ttft and e2e", slo: rundir.SLO{TTFT: 200 * msec, E2E: 2 * time.Second},
			want: &Goodput{SLO: SLOSeconds{TTFT: 0.2, E2E: 2}, Good: 2, Fraction: 2.0 / 5, FractionCI: wilson(2, 5), RequestsPerS: 2,
				Missed: map[string]int{"ttft": 2, "e2e": 1}, Unmeasured: 2, UnmeasuredReasons: map[string]int{"ttft: not streamed": 2}},
			inLine: []string{"2 of 5 requests (40.0%, 95% CI 11.8–76.9%)", "2 more could not be measured against it (ttft: not streamed 2) and are not counted"}},
		{name: "tpot only", slo: rundir.SLO{TPOT: 20 * msec},
			want: &Goodput{SLO: SLOSeconds{TPOT: 0.02}, Good: 4, Fraction: 4.0 / 4, FractionCI: wilson(4, 4), RequestsPerS: 4,
				Missed: map[string]int{}, Unmeasured: 3, UnmeasuredReasons: map[string]int{"tpot: not streamed": 2, "tpot: no chunks": 1}}},
		{name: "e2e only: everything measured", slo: rundir.SLO{E2E: 2 * time.Second},
			want: &Goodput{SLO: SLOSeconds{E2E: 2}, Good: 6, Fraction: 6.0 / 7, FractionCI: wilson(6, 7), RequestsPerS: 6, Missed: map[string]int{"e2e": 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := goodputOf(requestsOf(records), time.Second, &tt.slo)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("goodput (-want +got):\n%s", diff)
			}
			line := goodputLine(got, len(records))
			for _, s := range tt.inLine {
				if !strings.Contains(line, s) {
					t.Errorf("line %q lacks %q", line, s)
				}
			}
			for i := range records {
				good, unmeasured := tt.slo.Judge(&records[i])
				if good && unmeasured {
					t.Errorf("record %d both good and unmeasured", i)
				}
			}
		})
	}
}
