package live

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/internal/textwidth"
	"github.com/llmbench-org/llmbench/redact"
	"github.com/llmbench-org/llmbench/report/reconcile"
	"github.com/llmbench-org/llmbench/rundir"
)

// DefaultWidth is the plain view's width in columns: no line it prints is
// wider (docs/decisions/0050).
const DefaultWidth = 100

// ProgressLine renders a Progress for runs whose output is not a terminal
// (CI logs, pipes), at DefaultWidth: a line for each warning active now
// (WARN and the check, cut to one line), then the figures
// (progressLines): what does not fit on the first line goes on indented
// continuation lines rather than past the width.
func ProgressLine(p Progress) string {
	var pp plainPrinter
	return strings.Join(pp.lines(p), "\n")
}

// plainPrinter renders the plain view's lines one look after another:
// each warning is printed once, when it first appears, and the progress
// lines then count the warnings active rather than repeat them.
type plainPrinter struct {
	width     int             // 0: DefaultWidth
	announced map[string]bool // the warnings printed so far, by check id
}

// lines are the lines for one look: the warnings not printed before, then
// the progress line (and its notes' line when they do not fit on it).
func (pp *plainPrinter) lines(p Progress) []string {
	width := pp.width
	if width <= 0 {
		width = DefaultWidth
	}
	if pp.announced == nil {
		pp.announced = map[string]bool{}
	}
	var out []string
	announce := func(id, text string) {
		if !pp.announced[id] {
			pp.announced[id] = true
			out = append(out, textwidth.Cut(redact.PrintableLine(text), width))
		}
	}
	if w := p.Client.Warning(); w != "" {
		announce("client:"+p.Client.Delay, "WARN client: "+w)
	}
	for _, f := range p.Findings {
		if f.Severity != reconcile.Info {
			announce(f.ID, fmt.Sprintf("%s %s: %s", strings.ToUpper(string(f.Severity)), f.ID, strings.Join(strings.Fields(f.Verdict), " ")))
		}
	}
	return append(out, progressLines(p, width)...)
}

// progressLines are the figures in lines of at most width columns: the
// totals and rates first, then the notes that must stay visible (an
// outage, requests with no byte, the count of active warnings), then the
// other figures in the order they matter, packed onto the first line while
// they fit and onto indented continuation lines after it: a figure is
// never cut off, a line never overruns.
func progressLines(p Progress, width int) []string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%6.1fs] sent %d, in flight %d, ok %d, failed %d", p.Elapsed.Seconds(), p.Sent, p.InFlight, p.OK, p.Failed)
	if p.Canceled > 0 {
		fmt.Fprintf(&b, ", %d canceled", p.Canceled)
	}
	segs := []string{fmt.Sprintf("%.1f req/s, %.0f tok/s", p.RequestsPerSec, p.OutputTokensPerSec)}
	if o := p.Outage; o.Open {
		segs = append(segs, fmt.Sprintf("OUTAGE: engine unreachable for %.1fs (%d failed %s)", max(0, p.Elapsed-o.Since).Seconds(), o.Attempts, plural(o.Attempts, "attempt", "attempts")))
	}
	if s := p.SilentLine(); s != "" {
		segs = append(segs, s)
	}
	if n := activeWarnings(p); n > 0 {
		segs = append(segs, fmt.Sprintf("%d %s", n, plural(n, "warning", "warnings")))
	}
	segs = append(segs, optionalSegments(p)...)
	out := []string{textwidth.Cut(redact.PrintableLine(b.String()), width)}
	const cont = "  "
	for _, seg := range segs {
		seg = redact.PrintableLine(seg)
		last := &out[len(out)-1]
		if textwidth.Len(*last)+3+textwidth.Len(seg) <= width {
			*last += " | " + seg
			continue
		}
		out = append(out, textwidth.Cut(cont+seg, width))
	}
	return out
}

// activeWarnings counts the warnings active in p: the checks that are not
// INFO and the client's own.
func activeWarnings(p Progress) int {
	n := 0
	if p.Client.Warning() != "" {
		n++
	}
	for _, f := range p.Findings {
		if f.Severity != reconcile.Info {
			n++
		}
	}
	return n
}

// optionalSegments are the progress line's other figures, most wanted
// first; each is shown when it fits.
func optionalSegments(p Progress) []string {
	out := poolingSegments(p) // pooling.go
	if p.TTFT.N > 0 {
		out = append(out, "TTFT "+liveQuantiles(p.Percentiles, p.TTFT))
	}
	out = append(out, agenticSegments(p)...) // sessions.go
	if p.HasGoodput {
		g := fmt.Sprintf("goodput %.1f req/s (%.0f%%", p.GoodputPerSec, 100*p.GoodFraction)
		if p.Unmeasured > 0 {
			g += fmt.Sprintf(", %d unmeasured", p.Unmeasured)
		}
		out = append(out, g+")")
	}
	if p.NotStreamed > 0 {
		out = append(out, fmt.Sprintf("%d not streamed", p.NotStreamed))
	}
	if p.StreamsWithoutDone > 0 {
		out = append(out, fmt.Sprintf("%d streams without [DONE]", p.StreamsWithoutDone))
	}
	if p.TTFCDiffers && p.TTFC.N > 0 {
		out = append(out, "TTFC "+liveQuantiles(p.Percentiles, p.TTFC))
	}
	if p.Server.HasRunning {
		s := fmt.Sprintf("server running %.0f", p.Server.Running)
		if p.Server.HasWait {
			s += fmt.Sprintf(" waiting %.0f", p.Server.Waiting)
		}
		if p.Server.HasKV {
			s += fmt.Sprintf(" kv %.0f%%", 100*p.Server.KVUsage)
		}
		out = append(out, s)
	}
	if s := gpuSegment(p.GPU); s != "" {
		out = append(out, s)
	}
	if p.ScrapeFailures > 0 {
		out = append(out, fmt.Sprintf("scrape failures %d", p.ScrapeFailures))
	}
	return out
}

func dur(d time.Duration) string {
	return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
}

// PrintProgress writes the progress of progress() on w every interval
// until ctx is done, then a last time: the live view of a run whose output
// is not a terminal. Each warning is printed once, when it has held for two
// looks (steadyFindings); the progress lines count those active. No line
// is wider than width columns (0: DefaultWidth).
func PrintProgress(ctx context.Context, w io.Writer, every time.Duration, width int, progress func() Progress) {
	if every <= 0 {
		every = 2 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	var steady steadyFindings
	pp := plainPrinter{width: width}
	show := func() {
		for _, l := range pp.lines(steady.filter(progress())) {
			fmt.Fprintln(w, l)
		}
	}
	for {
		select {
		case <-ctx.Done():
			show()
			return
		case <-t.C:
			show()
		}
	}
}

// steadyFindings keeps a live warning out of the progress lines until it
// holds in two consecutive looks: one window's blip (a burst at its edge)
// is not worth a WARN that the summary would contradict.
type steadyFindings struct{ last map[string]bool }

func (s *steadyFindings) filter(p Progress) Progress {
	seen := map[string]bool{}
	kept := p.Findings[:0:0]
	for _, f := range p.Findings {
		if f.Severity == reconcile.Info {
			kept = append(kept, f)
			continue
		}
		seen[f.ID] = true
		if s.last[f.ID] {
			kept = append(kept, f)
		}
	}
	s.last = seen
	p.Findings = kept
	return p
}

// liveQuantiles is "p50 X p99 Y" for a plain progress line: the first and
// the last of the run's percentiles (all of them when there are two or fewer).
func liveQuantiles(percentiles []float64, q Quantiles) string {
	idx := []int{0, len(percentiles) - 1}
	if len(percentiles) < 2 {
		idx = idx[:len(percentiles)]
	}
	parts := make([]string, 0, 2)
	for _, i := range idx {
		if i < len(q.Values) {
			parts = append(parts, rundir.PercentileName(percentiles[i])+" "+dur(q.Values[i]))
		}
	}
	return strings.Join(parts, " ")
}
