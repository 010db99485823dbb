package report

import (
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/reconcile"
	"github.com/llmbench-org/llmbench/rundir"
)

// The text summary gives each finding one line; --verbose gives it whole,
// with its evidence.
func TestFindingsBriefAndVerbose(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("the engine and the client agree on this count ", 5)
	s := Summary{Findings: []Finding{{ID: "token_conservation", Severity: reconcile.Info, Verdict: long, Evidence: map[string]float64{"client_prompt_tokens": 220}}}}
	var brief, verbose strings.Builder
	if err := RenderText(&brief, s); err != nil {
		t.Fatal(err)
	}
	if err := RenderTextVerbose(&verbose, s); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(brief.String(), "\n") {
		if strings.HasPrefix(l, "INFO") && len([]rune(l)) > 130 {
			t.Errorf("a brief finding line of %d characters: %q", len([]rune(l)), l)
		}
	}
	if !hasText(verbose.String(), long) || !strings.Contains(verbose.String(), "client_prompt_tokens = 220") {
		t.Errorf("verbose summary lacks the whole verdict or its evidence:\n%s", verbose.String())
	}
}

// Peaks: the most output tokens in one second, the most requests in flight.
func TestPeaks(t *testing.T) {
	t.Parallel()
	s := time.Second
	records := []client.Record{
		{Sent: 1 * s, End: 3 * s, Chunks: []client.Chunk{{At: 1500 * time.Millisecond, Tokens: 4}, {At: 2100 * time.Millisecond, Tokens: 2}}},
		{Sent: 2 * s, End: 4 * s, Chunks: []client.Chunk{{At: 2200 * time.Millisecond}, {At: 2300 * time.Millisecond, Tokens: 3}}},
		{Sent: 4 * s, End: 5 * s},
	}
	req := rundir.DigestRecords(records, nil)
	tok, conc := peaks(requestsOf(req.Records), &req.Digest.Of(nil).Arrivals)
	if tok != 6 || conc != 2 {
		t.Errorf("peaks %g tokens/s, %d in flight; want 6 (second 2: 2+1+3) and 2 (the third starts as the second ends)", tok, conc)
	}
	if d := distOf([]float64{1, 2, 3, 4}); d.StdDev < 1.29 || d.StdDev > 1.30 {
		t.Errorf("stddev %g, want the sample standard deviation 1.291", d.StdDev)
	}
}
