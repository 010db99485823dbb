package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/llmbench-org/llmbench/capacity"
	"github.com/llmbench-org/llmbench/internal/interval"
	"github.com/llmbench-org/llmbench/rundir"
)

// SearchResult is a capacity search's answer: the largest load whose SLO
// verdict passed, inside its interval [CapacityLo, CapacityHi] = [largest
// pass, smallest fail], and every probe (docs/decisions/0040).
type SearchResult struct {
	Over      string  `json:"over"`      // rate or concurrency
	LoadUnit  string  `json:"load_unit"` // requests/s or users
	Target    float64 `json:"target"`    // the share of requests that must be good
	SLO       string  `json:"slo"`       // the per-request bounds, in words
	Tolerance float64 `json:"tolerance"`
	// Capacity is the largest load that passed (0: none did).
	Capacity   float64 `json:"capacity"`
	CapacityLo float64 `json:"capacity_lo"`
	// CapacityHi is the smallest load that failed; null when none did
	// (the capacity is at least the largest load probed).
	CapacityHi *float64 `json:"capacity_hi"`
	// Status: bracketed (to the tolerance), at_least_max, below_min,
	// out_of_probes, or unfinished (the run ended first).
	Status     string        `json:"status"`
	ProbesUsed int           `json:"probes_used"`
	MaxProbes  int           `json:"max_probes"`
	Probes     []SearchProbe `json:"probes"`
}

// SearchProbe is one probe: its load, verdict, the good fraction with its
// 95 % Wilson interval, and its key latencies (seconds).
type SearchProbe struct {
	Phase        string  `json:"phase"`
	Load         float64 `json:"load"`
	Attempt      int     `json:"attempt"`
	Verdict      string  `json:"verdict"`
	Judged       int     `json:"judged"`
	Good         int     `json:"good"`
	GoodFraction float64 `json:"good_fraction"`
	GoodLo       float64 `json:"good_fraction_lo"`
	GoodHi       float64 `json:"good_fraction_hi"`
	RequestsPerS float64 `json:"requests_per_s"`
	TTFTp99      float64 `json:"ttft_p99_s"`
	TPOTp99      float64 `json:"tpot_p99_s"`
	E2Ep99       float64 `json:"e2e_p99_s"`
}

// searchOf recomputes each probe's verdict from its requests, and the
// search's answer from the verdicts (nil without a search).
func searchOf(meta rundir.RunMeta, byPhase map[string][]request, phases []PhaseResult) *SearchResult {
	sm := meta.Search
	if sm == nil || meta.SLO == nil {
		return nil
	}
	obj := capacity.Objective{SLO: *meta.SLO, Target: meta.SLO.Target}
	unit := map[string]string{"rate": "requests/s", "concurrency": "users"}[sm.Over]
	out := &SearchResult{Over: sm.Over, LoadUnit: unit, SLO: SLOSeconds{TTFT: meta.SLO.TTFT.Seconds(), TPOT: meta.SLO.TPOT.Seconds(), E2E: meta.SLO.E2E.Seconds()}.String(), Tolerance: sm.Tolerance,
		MaxProbes: sm.MaxProbes, Probes: []SearchProbe{}}
	search := capacity.NewSearch(capacity.Spec{Min: sm.Min, Max: sm.Max, Tolerance: sm.Tolerance, MaxProbes: sm.MaxProbes,
		Integer: sm.Over == "concurrency"})
	for _, p := range sm.Probes {
		var t capacity.Tally
		for _, r := range byPhase[p.Phase] {
			t.Add(*meta.SLO, r.Record)
		}
		d := obj.Decide(t, interval.Confidence)
		out.Target = d.Target
		sp := SearchProbe{Phase: p.Phase, Load: p.Load, Attempt: p.Attempt, Verdict: string(d.Verdict),
			Judged: d.Judged, Good: d.Good, GoodFraction: d.Fraction, GoodLo: d.Interval.Lo, GoodHi: d.Interval.Hi}
		for _, ph := range phases {
			if ph.Name == p.Phase {
				l := ph.Client.Latency
				sp.RequestsPerS, sp.TTFTp99, sp.TPOTp99, sp.E2Ep99 = ph.Client.Throughput.RequestsPerSec, l.TTFT.P99, l.TPOT.P99, l.E2E.P99
			}
		}
		out.Probes = append(out.Probes, sp)
		search.Observe(capacity.Probe{Load: p.Load, Attempt: p.Attempt, Verdict: d.Verdict})
	}
	if out.Target == 0 {
		out.Target = obj.Decide(capacity.Tally{}, interval.Confidence).Target
	}
	res := search.Result()
	out.Capacity, out.CapacityLo, out.Status, out.ProbesUsed = res.Capacity, res.Lo, string(res.Status), res.Probes
	if !math.IsInf(res.Hi, 1) {
		hi := res.Hi
		out.CapacityHi = &hi
	}
	return out
}

// String is the answer in one line.
func (s *SearchResult) String() string {
	var b strings.Builder
	switch s.Status {
	case string(capacity.BelowMin):
		fmt.Fprintf(&b, "capacity below %s %s: the smallest load probed failed the SLO", num4(s.CapacityHiOr()), s.LoadUnit)
	case string(capacity.AtLeastMax):
		fmt.Fprintf(&b, "capacity at least %s %s: the largest load probed passed the SLO", num4(s.Capacity), s.LoadUnit)
	default:
		fmt.Fprintf(&b, "capacity %s %s (interval [%s, %s]: the largest load that passed, the smallest that failed)",
			num4(s.Capacity), s.LoadUnit, num4(s.CapacityLo), hiText(s.CapacityHi))
		if s.Status != string(capacity.Bracketed) {
			fmt.Fprintf(&b, "; %s", strings.ReplaceAll(s.Status, "_", " "))
		}
	}
	fmt.Fprintf(&b, "; %d of %d probes; SLO: %g%% of requests within %s", s.ProbesUsed, s.MaxProbes, 100*s.Target, s.SLO)
	return b.String()
}

// CapacityHiOr is CapacityHi, or +Inf when no load failed.
func (s *SearchResult) CapacityHiOr() float64 {
	if s.CapacityHi == nil {
		return math.Inf(1)
	}
	return *s.CapacityHi
}

func hiText(hi *float64) string {
	if hi == nil {
		return "∞"
	}
	return num4(*hi)
}

func num4(v float64) string { return fmt.Sprintf("%.4g", v) }

// renderSearch is the text summary's probe table and answer.
// A table wider than width (0: no limit) is split into blocks of columns,
// each repeating the probe and its load (fitTable), never word-wrapped.
func renderSearch(w io.Writer, s *SearchResult, width int) error {
	if s == nil {
		return nil
	}
	t := textTable{keyCols: 2}
	t.add("search probe", s.LoadUnit, "verdict", "good", "95% interval", "req/s", "TTFT p99 ms", "TPOT p99 ms")
	for _, p := range s.Probes {
		t.add(p.Phase, num4(p.Load), p.Verdict, fmt.Sprintf("%d/%d %.1f%%", p.Good, p.Judged, 100*p.GoodFraction),
			fmt.Sprintf("[%.1f%%, %.1f%%]", 100*p.GoodLo, 100*p.GoodHi), fmt.Sprintf("%.2f", p.RequestsPerS), ms(p.TTFTp99), ms(p.TPOTp99))
	}
	for _, l := range fitTable(t, width) {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "%s\n", s.String())
	return err
}

// markdownSearch is report.md's probe table and answer.
func markdownSearch(w io.Writer, s *SearchResult) {
	if s == nil {
		return
	}
	fmt.Fprintf(w, "**Capacity**: %s.\n\n", mdText(s.String()))
	fmt.Fprintf(w, "| search probe | %s | verdict | good | 95%% interval | requests/s | TTFT p99 ms | TPOT p99 ms |\n|---|---:|---|---:|---:|---:|---:|---:|\n", s.LoadUnit)
	for _, p := range s.Probes {
		fmt.Fprintf(w, "| %s | %s | %s | %d/%d (%.1f%%) | [%.1f%%, %.1f%%] | %.2f | %s | %s |\n", mdText(p.Phase), num4(p.Load), p.Verdict,
			p.Good, p.Judged, 100*p.GoodFraction, 100*p.GoodLo, 100*p.GoodHi, p.RequestsPerS, ms(p.TTFTp99), ms(p.TPOTp99))
	}
	fmt.Fprintln(w)
}

// SLOVerdict is a stretch of requests judged against the SLO and its target
// (package capacity): pass, fail or inconclusive, on the good fraction's
// 95 % Wilson interval.
type SLOVerdict struct {
	Verdict      string  `json:"verdict"`
	Target       float64 `json:"target"`
	Judged       int     `json:"judged"`
	Good         int     `json:"good"`
	GoodFraction float64 `json:"good_fraction"`
	GoodLo       float64 `json:"good_fraction_lo"`
	GoodHi       float64 `json:"good_fraction_hi"`
}

// sloVerdictOf is a measured phase's verdict (nil without an slo, or for a
// phase that is not measured).
func sloVerdictOf(slo *rundir.SLO, measured bool, records []request) *SLOVerdict {
	if slo == nil || !measured {
		return nil
	}
	var t capacity.Tally
	for _, r := range records {
		t.Add(*slo, r.Record)
	}
	d := capacity.Objective{SLO: *slo, Target: slo.Target}.Decide(t, interval.Confidence)
	return &SLOVerdict{Verdict: string(d.Verdict), Target: d.Target, Judged: d.Judged, Good: d.Good,
		GoodFraction: d.Fraction, GoodLo: d.Interval.Lo, GoodHi: d.Interval.Hi}
}
