package html

import (
	"bytes"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/report"
)

// The capacity search renders as its answer, a probe table and a chart
// with a point per probe coloured by verdict and the capacity marked.
func TestSearchSection(t *testing.T) {
	t.Parallel()
	in := goldenRun.input()
	hi := 17.2
	in.Summary.Search = &report.SearchResult{Over: "rate", LoadUnit: "requests/s", Target: 0.9, SLO: "TPOT ≤ 50ms",
		Capacity: 15.7, CapacityLo: 15.7, CapacityHi: &hi, Status: "bracketed", ProbesUsed: 3, MaxProbes: 8,
		Probes: []report.SearchProbe{
			{Phase: "search-rate-8.9", Load: 8.9, Attempt: 1, Verdict: "pass", Judged: 63, Good: 63, GoodFraction: 1, GoodLo: 0.94, GoodHi: 1},
			{Phase: "search-rate-17.2", Load: 17.2, Attempt: 1, Verdict: "fail", Judged: 90, Good: 60, GoodFraction: 0.67, GoodLo: 0.56, GoodHi: 0.75},
			{Phase: "search-rate-15.7", Load: 15.7, Attempt: 1, Verdict: "pass", Judged: 71, Good: 71, GoodFraction: 1, GoodLo: 0.95, GoodHi: 1},
		}}
	var b bytes.Buffer
	if err := Render(&b, in); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	sec := page[strings.Index(page, `<section id="search">`):]
	sec = sec[:strings.Index(sec, "</section>")]
	for _, want := range []string{"Capacity search", "capacity 15.7 requests/s (interval [15.7, 17.2]", `<span class="badge bad">fail</span>`,
		"63/63 (100.0%)"} {
		if !strings.Contains(sec, want) {
			t.Errorf("search section lacks %q", want)
		}
	}
	// The answer and the probes' chart lead the page (decision 0801).
	answer := page[strings.Index(page, `<section id="answer"`):]
	answer = answer[:strings.Index(answer, "</section>")]
	for _, want := range []string{"capacity 15.7 requests/s (interval [15.7, 17.2]", `id="search-probes"`, `class="rule knee"`,
		"search-rate-17.2: fail at 17.2 requests/s, 67.0% good [56.0%, 75.0%] of 90"} {
		if !strings.Contains(answer, want) {
			t.Errorf("the first section lacks %q", want)
		}
	}
	probes := answer[strings.Index(answer, `id="search-probes"`):]
	probes = probes[:strings.Index(probes, "</figure>")]
	if n := strings.Count(probes, `<circle class="pt `); n != 3 {
		t.Errorf("%d points, want one per probe", n)
	}
}
