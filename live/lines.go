package live

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/redact"
	"github.com/llmbench-org/llmbench/report/reconcile"
	"github.com/llmbench-org/llmbench/rundir"
)

// ProgressLine renders a Progress as one plain line, for runs whose output is
// not a terminal (CI logs, pipes).
func ProgressLine(p Progress) string {
	return redact.PrintableLine(progressLine(p))
}

func progressLine(p Progress) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%6.1fs] sent %d, in flight %d, ok %d, failed %d | %.1f req/s, %.0f tok/s",
		p.Elapsed.Seconds(), p.Sent, p.InFlight, p.OK, p.Failed, p.RequestsPerSec, p.OutputTokensPerSec)
	if p.Canceled > 0 {
		fmt.Fprintf(&b, ", %d canceled", p.Canceled)
	}
	if p.HasGoodput {
		fmt.Fprintf(&b, ", goodput %.1f req/s (%.0f%%", p.GoodputPerSec, 100*p.GoodFraction)
		if p.Unmeasured > 0 {
			fmt.Fprintf(&b, ", %d unmeasured", p.Unmeasured)
		}
		b.WriteString(")")
	}
	if p.NotStreamed > 0 {
		fmt.Fprintf(&b, ", %d not streamed", p.NotStreamed)
	}
	if p.StreamsWithoutDone > 0 {
		fmt.Fprintf(&b, ", %d streams without [DONE]", p.StreamsWithoutDone)
	}
	if p.TTFT.N > 0 {
		fmt.Fprintf(&b, " | TTFT %s", liveQuantiles(p.Percentiles, p.TTFT))
	}
	if o := p.Outage.Line(p.Elapsed); o != "" {
		fmt.Fprintf(&b, " | OUTAGE: %s", o)
	}
	if s := p.SilentLine(); s != "" {
		fmt.Fprintf(&b, " | %s", s)
	}
	if w := p.Client.Warning(); w != "" {
		fmt.Fprintf(&b, " | WARN client: %s", w)
	}
	if p.TTFCDiffers && p.TTFC.N > 0 {
		fmt.Fprintf(&b, " | TTFC %s", liveQuantiles(p.Percentiles, p.TTFC))
	}
	if p.Server.HasRunning {
		fmt.Fprintf(&b, " | server running %.0f", p.Server.Running)
		if p.Server.HasWait {
			fmt.Fprintf(&b, " waiting %.0f", p.Server.Waiting)
		}
		if p.Server.HasKV {
			fmt.Fprintf(&b, " kv %.0f%%", 100*p.Server.KVUsage)
		}
	}
	if p.ScrapeFailures > 0 {
		fmt.Fprintf(&b, " | scrape failures %d", p.ScrapeFailures)
	}
	for _, f := range p.Findings {
		if f.Severity != reconcile.Info {
			fmt.Fprintf(&b, " | %s: %s", strings.ToUpper(string(f.Severity)), f.Verdict)
		}
	}
	return b.String()
}

func dur(d time.Duration) string {
	return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
}

// PrintProgress writes a ProgressLine of progress() on w every interval
// until ctx is done, then a last one: the live view of a run whose output is
// not a terminal.
func PrintProgress(ctx context.Context, w io.Writer, every time.Duration, progress func() Progress) {
	if every <= 0 {
		every = 2 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	var steady steadyFindings
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(w, ProgressLine(steady.filter(progress())))
			return
		case <-t.C:
			fmt.Fprintln(w, ProgressLine(steady.filter(progress())))
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
