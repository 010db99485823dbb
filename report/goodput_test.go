package report

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/rundir"
)

// rec is a successful request sent at 0 with its first token at ttft, its
// end at e2e and n output tokens.
func rec(ttft, e2e time.Duration, n int) client.Record {
	return client.Record{Sent: 0, Wrote: 0, FirstToken: ttft, End: e2e, OutputTokens: n}
}

func TestGoodput(t *testing.T) {
	ms := time.Millisecond
	failed := rec(10*ms, 100*ms, 10)
	failed.ErrorClass = client.ErrHTTPStatus
	// tpot = (e2e − ttft)/(n − 1): 100 ms − 10 ms over 9 = 10 ms.
	records := []client.Record{
		rec(10*ms, 100*ms, 10),         // good everywhere
		rec(300*ms, 390*ms, 10),        // ttft over 200 ms
		rec(10*ms, 460*ms, 10),         // tpot 50 ms, over 20 ms
		rec(10*ms, 3*time.Second, 301), // tpot 10 ms, e2e over 2 s
		rec(0, 50*ms, 0),               // no token at all: misses a ttft bound
		rec(10*ms, 10*ms, 1),           // one token: no tpot to miss
		failed,                         // never good
	}
	tests := []struct {
		name   string
		slo    *rundir.SLO
		want   *Goodput
		inLine []string
	}{
		{name: "no slo", slo: nil, want: nil},
		{name: "empty slo", slo: &rundir.SLO{}, want: nil},
		{name: "all bounds", slo: &rundir.SLO{TTFT: 200 * ms, TPOT: 20 * ms, E2E: 2 * time.Second},
			want: &Goodput{SLO: SLOSeconds{TTFT: 0.2, TPOT: 0.02, E2E: 2}, Good: 2, Fraction: 2.0 / 7, FractionCI: wilson(2, 7), RequestsPerS: 1,
				Missed: map[string]int{"ttft": 2, "tpot": 1, "e2e": 1}},
			inLine: []string{"1.00 requests/s", "2 of 7 requests (28.6%, 95% CI 8.2–64.1%)", "TTFT ≤ 200ms, TPOT ≤ 20ms, E2E ≤ 2s", "over the bound: ttft 2, tpot 1, e2e 1"}},
		{name: "e2e only", slo: &rundir.SLO{E2E: 2 * time.Second},
			want: &Goodput{SLO: SLOSeconds{E2E: 2}, Good: 5, Fraction: 5.0 / 7, FractionCI: wilson(5, 7), RequestsPerS: 2.5, Missed: map[string]int{"e2e": 1}}},
		{name: "generous", slo: &rundir.SLO{TTFT: time.Minute},
			want: &Goodput{SLO: SLOSeconds{TTFT: 60}, Good: 5, Fraction: 5.0 / 7, FractionCI: wilson(5, 7), RequestsPerS: 2.5, Missed: map[string]int{"ttft": 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := goodputOf(requestsOf(records), 2*time.Second, tt.slo)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("goodput (-want +got):\n%s", diff)
			}
			if got == nil {
				return
			}
			line := goodputLine(got, len(records))
			for _, s := range tt.inLine {
				if !strings.Contains(line, s) {
					t.Errorf("line %q lacks %q", line, s)
				}
			}
		})
	}
}
