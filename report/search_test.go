package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/textwidth"
	"github.com/llmbench-org/llmbench/rundir"
)

// probeRecords is n requests of which good meet a 100 ms TTFT bound.
func probeRecords(phase string, n, good int) []client.Record {
	out := make([]client.Record, n)
	for i := range out {
		ttft := 50 * time.Millisecond
		if i >= good {
			ttft = 500 * time.Millisecond
		}
		out[i] = rec(ttft, ttft+100*time.Millisecond, 10)
		out[i].Phase = phase
	}
	return out
}

func TestSearchOf(t *testing.T) {
	slo := &rundir.SLO{TTFT: 100 * time.Millisecond, Target: 0.9}
	byPhase := map[string][]request{
		"search-rate-8":       requestsOf(probeRecords("search-rate-8", 100, 100)),
		"search-rate-16":      requestsOf(probeRecords("search-rate-16", 100, 40)),
		"search-rate-11.3":    requestsOf(probeRecords("search-rate-11.3", 100, 90)), // straddles 90 %
		"search-rate-11.3-r2": requestsOf(probeRecords("search-rate-11.3-r2", 200, 198)),
	}
	meta := rundir.RunMeta{SLO: slo, Search: &rundir.Search{Over: "rate", Min: 2, Max: 32, Tolerance: 0.5, MaxProbes: 8,
		Probes: []rundir.SearchProbe{
			{Phase: "search-rate-8", Load: 8, Attempt: 1, Verdict: "fail"}, // the run's word is not taken: recomputed
			{Phase: "search-rate-16", Load: 16, Attempt: 1},
			{Phase: "search-rate-11.3", Load: 11.3, Attempt: 1},
			{Phase: "search-rate-11.3-r2", Load: 11.3, Attempt: 2},
		}}}
	s := searchOf(meta, byPhase, nil)
	var verdicts []string
	for _, p := range s.Probes {
		verdicts = append(verdicts, p.Verdict)
	}
	if got := strings.Join(verdicts, " "); got != "pass fail inconclusive pass" {
		t.Errorf("verdicts %q, want pass fail inconclusive pass", got)
	}
	if s.Capacity != 11.3 || s.CapacityLo != 11.3 || s.CapacityHi == nil || *s.CapacityHi != 16 || s.Status != "bracketed" || s.ProbesUsed != 4 || s.Target != 0.9 {
		t.Errorf("search %+v, want capacity 11.3 in [11.3, 16], bracketed after 4 probes", s)
	}
	if p := s.Probes[1]; p.Good != 40 || p.Judged != 100 || p.GoodLo > 0.4 || p.GoodHi < 0.4 || p.GoodHi > 0.5 {
		t.Errorf("probe %+v: want 40 of 100 good, its interval around 40 %%", p)
	}
	var text, md bytes.Buffer
	if err := renderSearch(&text, s, 0); err != nil {
		t.Fatal(err)
	}
	markdownSearch(&md, s)
	for _, want := range []string{"search-rate-11.3-r2", "inconclusive", "40/100 40.0%", "capacity 11.3 requests/s (interval [11.3, 16]",
		"4 of 8 probes; SLO: 90% of requests within TTFT ≤ 100ms"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if !strings.Contains(md.String(), "| search-rate-16 | 16 | fail | 40/100 (40.0%) |") {
		t.Errorf("markdown:\n%s", md.String())
	}

	// Every probe passed: the capacity is at least the largest, with no
	// upper end; none did: below the smallest.
	meta.Search.Probes = meta.Search.Probes[:1]
	meta.Search.Probes[0].Load = 32
	if s := searchOf(meta, byPhase, nil); s.Status != "at_least_max" || s.CapacityHi != nil || !strings.Contains(s.String(), "capacity at least 32") {
		t.Errorf("all passed: %+v %s", s, s)
	}
	meta.Search.Probes[0] = rundir.SearchProbe{Phase: "search-rate-16", Load: 2, Attempt: 1}
	if s := searchOf(meta, byPhase, nil); s.Status != "below_min" || s.Capacity != 0 || !strings.Contains(s.String(), "capacity below 2") {
		t.Errorf("none passed: %+v %s", s, s)
	}
	if searchOf(rundir.RunMeta{SLO: slo}, byPhase, nil) != nil {
		t.Error("a run without a search has a search section")
	}
}

func TestSLOVerdictOf(t *testing.T) {
	slo := &rundir.SLO{TTFT: 100 * time.Millisecond, Target: 0.9}
	if v := sloVerdictOf(slo, true, requestsOf(probeRecords("p", 100, 70))); v == nil || v.Verdict != "fail" || v.Good != 70 || v.Judged != 100 || v.Target != 0.9 {
		t.Errorf("70 of 100 against 90%%: %+v, want fail", v)
	}
	if v := sloVerdictOf(slo, true, requestsOf(probeRecords("p", 100, 100))); v == nil || v.Verdict != "pass" || v.GoodLo < 0.95 {
		t.Errorf("100 of 100: %+v, want pass", v)
	}
	if sloVerdictOf(nil, true, nil) != nil || sloVerdictOf(slo, false, nil) != nil {
		t.Error("a verdict without an slo, or for a phase that is not measured")
	}
}

// A probe table wider than the text is split into blocks of columns, each
// repeating the probe and its load, never word-wrapped: every table line
// fits, and every probe's name starts a line in each block.
func TestSearchTableFitsInBlocks(t *testing.T) {
	t.Parallel()
	hi := 64.0
	s := &SearchResult{LoadUnit: "requests/s", Status: "bracketed", Capacity: 32, CapacityLo: 32, CapacityHi: &hi, ProbesUsed: 2, MaxProbes: 8, Target: 0.9, SLO: "TTFT ≤ 100ms"}
	for _, load := range []float64{32, 64} {
		s.Probes = append(s.Probes, SearchProbe{Phase: fmt.Sprintf("search-rate-%g-with-a-long-phase-name", load), Load: load, Verdict: "inconclusive",
			Judged: 123456, Good: 12345, GoodFraction: 0.1, GoodLo: 0.09, GoodHi: 0.11, RequestsPerS: 12345.67, TTFTp99: 123456.7, TPOTp99: 1234.5})
	}
	var whole, narrow bytes.Buffer
	if err := renderSearch(&whole, s, 0); err != nil {
		t.Fatal(err)
	}
	if err := renderSearch(&narrow, s, 80); err != nil {
		t.Fatal(err)
	}
	wholeLines := strings.Split(strings.TrimSuffix(whole.String(), "\n"), "\n")
	if w := textwidth.Len(wholeLines[0]); w <= 80 {
		t.Fatalf("the unlimited table is %d columns: the case does not test a split", w)
	}
	lines := strings.Split(strings.TrimSuffix(narrow.String(), "\n"), "\n")
	table := lines[:len(lines)-1] // the answer line after it is wrapped by the text summary
	starts := 0
	for _, l := range table {
		if textwidth.Len(l) > 80 {
			t.Errorf("a table line of %d columns at width 80: %q", textwidth.Len(l), l)
		}
		if strings.HasPrefix(l, s.Probes[1].Phase+"  64") {
			starts++
		}
	}
	if starts < 2 {
		t.Errorf("the second probe starts %d lines, want one in each of at least 2 blocks:\n%s", starts, narrow.String())
	}
}
