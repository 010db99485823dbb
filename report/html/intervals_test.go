package html

import (
	"fmt"
	"html/template"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/latencytable"
)

// A sweep's page leads with its per-point section (the table with each
// point's n and intervals, the capacity and the knee, the charts by load):
// the figures pooled over every load (the overview's tiles, the latency
// table, the charts over the run) come after the heading that says no
// single load produced them.
func TestSweepPageLeadsWithItsPoints(t *testing.T) {
	t.Parallel()
	in := goldenRun.input()
	if in.Summary.Sweep == nil {
		t.Fatal("the golden run is not a sweep")
	}
	page := renderString(t, in)
	at := func(s string) int {
		i := strings.Index(page, s)
		if i < 0 {
			t.Fatalf("the page has no %q", s)
		}
		return i
	}
	health, sweep, knee, pooled := at(`<section id="health"`), at(`<section id="sweep">`), at(`class="badge knee"`), at(`<h2 id="pooled" class="pooled">`+report.PooledHeading+`</h2>`)
	if !(health < sweep && sweep < knee && knee < pooled) {
		t.Errorf("health at %d, the per-point section at %d, its knee at %d, the pooled heading at %d: want them in that order", health, sweep, knee, pooled)
	}
	for _, s := range []string{`<section id="overview">`, `<section id="latency">`, `<section id="timeline">`, `<section id="cdf">`} {
		if i := at(s); i < pooled {
			t.Errorf("the pooled %s at %d, before its heading (%d)", s, i, pooled)
		}
	}
	// The capacity sentence leads the page beside the capacity chart
	// (decision 0801) and is said again in the per-point section.
	capacity := `Saturation: the engine stopped scaling`
	if i := at(capacity); i > at(`<section id="answer"`) && i < health {
		t.Logf("the capacity sentence leads the page at %d", i)
	} else {
		t.Errorf("the capacity sentence first at %d, not in the first section (before health at %d)", i, health)
	}
	if i := sweep + strings.Index(page[sweep:], capacity); i < sweep || i > pooled {
		t.Errorf("the capacity sentence at %d, outside the per-point section (%d–%d)", i, sweep, pooled)
	}
	// Each point's TTFT p50 with its interval, and its p99 marked: a
	// golden point has at most a few hundred requests.
	for _, p := range in.Summary.Sweep.Points {
		b := p.CI["ttft_p50_s"]
		cell := fmt.Sprintf(`<td class="num">%s<span class="ci">%s–%s</span></td>`, ms(p.TTFTp50), ms(b.Lo), ms(b.Hi))
		if i := strings.Index(page, cell); i < sweep || i > pooled {
			t.Errorf("point %s: its TTFT p50 cell %q not in the per-point table", p.Phase, cell)
		}
		if p.N["ttft"] < 368 {
			lo := p.CI["ttft_p99_s"].Lo
			cell := fmt.Sprintf(`<td class="num toofew">%s<span class="mark" title="too few samples for this percentile's rank">†</span><span class="ci">%s–∞</span></td>`, ms(p.TTFTp99), ms(lo))
			if !strings.Contains(page, cell) {
				t.Errorf("point %s (n %d): its p99 is not marked: no %q", p.Phase, p.N["ttft"], cell)
			}
		}
	}
}

// A page whose latency table shows a p99 from too few samples marks it and
// says what the mark means; the client's figures carry their intervals.
func TestPageMarksSmallSamples(t *testing.T) {
	t.Parallel()
	in := synth{seed: 7, rateScale: 0.5, stretch: 1, chunks: 4, noMetrics: true}.input()
	d := in.Summary.Client.Latency.TTFT
	if d.N >= 368 || !d.TooFew(99) {
		t.Fatalf("the run's TTFT has %d samples: its p99 is not too few", d.N)
	}
	page := renderString(t, in)
	v := latencyOf(in.Summary)
	if !v.TooFew || !strings.Contains(page, template.HTMLEscapeString(latencytable.TooFewLegend)) {
		t.Errorf("the latency table's legend does not explain the mark (TooFew %v)", v.TooFew)
	}
	iv, _ := d.QuantileCI(99)
	cell := fmt.Sprintf(`%s<span class="mark" title="too few samples for this percentile's rank">†</span><span class="ci">%s–∞</span>`, ms(d.P99), ms(iv.Lo))
	if !strings.Contains(page, cell) {
		t.Errorf("the TTFT p99 is not shown marked with its open interval %q", cell)
	}
	m, _ := d.MeanCI()
	if mean := fmt.Sprintf(`%s<span class="ci">%s–%s</span>`, ms(d.Mean), ms(m.Lo), ms(m.Hi)); !strings.Contains(page, mean) {
		t.Errorf("the TTFT mean lacks its interval %q", mean)
	}
}
