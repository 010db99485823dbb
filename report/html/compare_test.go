package html

import (
	"bytes"
	"strings"
	"testing"

	nethtml "golang.org/x/net/html"

	"github.com/llmbench-org/llmbench/internal/quiet"
	"github.com/llmbench-org/llmbench/internal/realtest"
	"github.com/llmbench-org/llmbench/report/comparison"
	"github.com/llmbench-org/llmbench/report/gates"
)

// comparedGolden compares the golden run with a slower copy of itself
// (every phase stretched: the same seed, other latencies).
func comparedGolden(t *testing.T) (comparison.Comparison, []Input) {
	t.Helper()
	a, b := goldenRun.input(), synth{seed: 42, rateScale: 1, stretch: 1.5, chunks: 12, failEvery: 37}.input()
	side := func(in Input) gates.Run { // gates.LoadSide keeps the measured phases' records only
		measured := measuredPhases(in.Summary)
		r := gates.Run{Summary: in.Summary}
		for _, rec := range in.Records {
			if measured[rec.Phase] {
				r.Records = append(r.Records, rec)
			}
		}
		return r
	}
	runs := []comparison.Run{{Dir: "a", Gates: side(a)}, {Dir: "b", Gates: side(b)}}
	return comparison.Compare(gates.Bootstrap{Resamples: 200, Confidence: 0.95}, runs...), []Input{a, b}
}

// compare --format html overlays both runs' CDFs of TTFT, ITL and E2E,
// one line per run, each line ending at 100 % (every sample counted), and
// lays out the comparison's tables; the page fetches and runs nothing.
func TestRenderComparison(t *testing.T) {
	t.Parallel()
	c, ins := comparedGolden(t)
	if len(c.Samples) != 2 || len(c.Samples[0].TTFT) == 0 || len(c.Samples[1].ITL) == 0 {
		t.Fatalf("the comparison carries no samples: %d sides", len(c.Samples))
	}
	if n, want := len(c.Samples[0].E2E), ins[0].Summary.Client.Requests.OK; n != want {
		t.Errorf("run 1 has %d E2E samples, its summary %d successful requests", n, want)
	}
	var b bytes.Buffer
	if err := RenderComparison(&b, c); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	doc, err := nethtml.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	if bad := selfContained(doc); len(bad) > 0 {
		t.Errorf("the page runs or fetches something: %v", bad)
	}
	charts := compareCDFs(c)
	for _, ch := range charts {
		if ch.Empty != "" || len(ch.Paths) != 2 {
			t.Errorf("%s: %d lines (%q), want one per run", ch.ID, len(ch.Paths), ch.Empty)
			continue
		}
		for _, p := range ch.Paths {
			// The last point of each line is the top of the plot: 100 %.
			if !strings.HasSuffix(p.D, " "+coord(ch.Plot.Y)) {
				t.Errorf("%s: the line %q does not reach 100 %%: …%s", ch.ID, p.Title, p.D[max(0, len(p.D)-30):])
			}
		}
		if !strings.Contains(page, `id="`+ch.ID+`"`) {
			t.Errorf("the page lacks chart %s", ch.ID)
		}
	}
	for _, want := range []string{"Run 2 against run 1", "client.ttft.p99", c.Runs[0].ID, c.Runs[1].ID} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// An absent side still draws the other.
	c.Samples[1] = comparison.Samples{}
	if ch := overlaidCDF("ttft", [][]float64{c.Samples[0].TTFT, nil}); ch.Empty != "" || len(ch.Paths) != 1 {
		t.Errorf("one side without samples: %d lines, %q", len(ch.Paths), ch.Empty)
	}
}

// The comparison page fits 1,280 and 1,920 px as report.html does.
func TestComparisonLayout(t *testing.T) {
	bin := realtest.Require(t, "chromium", "apt-get install -y chromium")
	t.Parallel()
	quiet.Busy(t)
	c, _ := comparedGolden(t)
	var b bytes.Buffer
	if err := RenderComparison(&b, c); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{1280, 1920} {
		r := probeLayout(t, bin, b.String(), width, 800)
		if r.Seen < 50 || r.PageWidth > width || len(r.Wide) > 0 || len(r.Scrolls) > 0 {
			t.Errorf("at %d px: %+v", width, r)
		}
	}
}
