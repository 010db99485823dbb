package report

import (
	"fmt"
	"time"

	"github.com/llmbench-org/llmbench/internal/errwriter"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/outages"
	"github.com/llmbench-org/llmbench/rundir"
)

// Outages is when the engine could not be reached (package outages says
// what counts), and the run's figures outside those windows. It is absent
// from a summary whose run met no outage.
type Outages struct {
	Windows []OutageWindow `json:"windows"`
	Count   int            `json:"count"`
	Total   float64        `json:"total_s"` // the windows' summed length
	// Attempts are the requests that could not reach the engine; Arrivals
	// those of them that were open-loop arrivals (each fails once, on its
	// schedule); Affected every failed request that ended in a window.
	Attempts int `json:"attempts"`
	Arrivals int `json:"open_loop_arrivals"`
	Affected int `json:"requests_affected"`
	// Outside are the measured phases' figures away from the windows.
	Outside OutsideOutages `json:"outside"`
}

// OutageWindow is one outage, on the run clock (seconds).
type OutageWindow struct {
	Start  float64 `json:"start_s"`
	Length float64 `json:"length_s"`
	// Open: no request reached the engine after it; it lasted at least
	// this long, until the run ended.
	Open     bool `json:"open,omitempty"`
	Attempts int  `json:"attempts"`
	Arrivals int  `json:"open_loop_arrivals"`
	Affected int  `json:"requests_affected"`
}

// OutsideOutages are the measured phases' throughput and latency with the
// outages taken out: Duration is the measured time less the windows' time
// within it; the requests are the successful ones whose whole life (send
// to end) touched no window.
type OutsideOutages struct {
	Covers     string  `json:"covers"`
	Duration   float64 `json:"duration_s"`
	OK         int     `json:"ok"`
	Throughput float64 `json:"requests_per_s"`
	OutputRate float64 `json:"output_tokens_per_s"`
	TTFT       Dist    `json:"ttft_s"`
	E2E        Dist    `json:"e2e_s"`
}

// outsideCovers says in words what OutsideOutages covers, in every report.
const outsideCovers = "measured phases less the outage windows; successful requests whose send-to-end touched no window"

// outagesOf finds the outages among all records and the figures outside
// them over the measured ones (nil: the run met none).
func outagesOf(records []client.Record, measured []request, phases []rundir.PhaseMeta, measuredDur time.Duration, ps []float64) *Outages {
	ws := outages.Find(records)
	if len(ws) == 0 {
		return nil
	}
	o := &Outages{Count: len(ws), Total: outages.Total(ws).Seconds()}
	for _, w := range ws {
		o.Windows = append(o.Windows, OutageWindow{Start: w.Start.Seconds(), Length: w.Length().Seconds(), Open: w.Open,
			Attempts: w.Attempts, Arrivals: w.Arrivals, Affected: w.Affected})
		o.Attempts += w.Attempts
		o.Arrivals += w.Arrivals
		o.Affected += w.Affected
	}
	up := max(0, measuredDur-downWithin(ws, phases))
	out := OutsideOutages{Covers: outsideCovers, Duration: up.Seconds()}
	var ttft, e2e []time.Duration
	tokens := 0
	for _, r := range measured {
		if !r.OK() || !outages.Clear(ws, r.SentOnWire(), r.End) {
			continue
		}
		out.OK++
		tokens += r.OutputTokens
		e2e = append(e2e, r.E2E())
		if d, ok := r.TTFT(); ok {
			ttft = append(ttft, d)
		}
	}
	if up > 0 {
		out.Throughput = float64(out.OK) / up.Seconds()
		out.OutputRate = float64(tokens) / up.Seconds()
	}
	out.TTFT, out.E2E = durationDist(ttft, ps), durationDist(e2e, ps)
	o.Outside = out
	return o
}

// downWithin is the windows' time inside the measured phases (all of it
// when the run has no phase bookkeeping).
func downWithin(ws []outages.Window, phases []rundir.PhaseMeta) time.Duration {
	var spans [][2]time.Duration
	for _, ph := range phases {
		if ph.Measured {
			spans = append(spans, [2]time.Duration{ph.Start, ph.End})
		}
	}
	if len(spans) == 0 {
		return outages.Total(ws)
	}
	var d time.Duration
	for _, w := range ws {
		for _, sp := range spans {
			if lo, hi := max(w.Start, sp[0]), min(w.End, sp[1]); hi > lo {
				d += hi - lo
			}
		}
	}
	return d
}

// maxOutageLines bounds the windows a report lists one by one; the rest
// are counted (summary.json has them all).
const maxOutageLines = 20

// outagesLine is the outages in one line of words, "" when none.
func outagesLine(o *Outages) string {
	if o == nil {
		return ""
	}
	return fmt.Sprintf("%d %s, %.2f s in all: %d failed %s to reach the engine (%d of them open-loop arrivals, each failed once), %d requests affected",
		o.Count, plural(o.Count, "outage", "outages"), o.Total, o.Attempts, plural(o.Attempts, "attempt", "attempts"), o.Arrivals, o.Affected)
}

// outageWindowLine is one window in words.
func outageWindowLine(w OutageWindow) string {
	still := ""
	if w.Open {
		still = " (still down when the run ended: at least)"
	}
	return fmt.Sprintf("at %.2f s for %.3f s%s: %d failed %s, %d requests affected",
		w.Start, w.Length, still, w.Attempts, plural(w.Attempts, "attempt", "attempts"), w.Affected)
}

// outsideLine is the figures outside the outages in one line.
func outsideLine(o OutsideOutages) string {
	return fmt.Sprintf("%.2f requests/s, %.1f output tokens/s over %.1f s (%d ok); TTFT p50 %s p99 %s ms, E2E p50 %s p99 %s ms",
		o.Throughput, o.OutputRate, o.Duration, o.OK, ms(o.TTFT.P50), ms(o.TTFT.P99), ms(o.E2E.P50), ms(o.E2E.P99))
}

// outagesText writes the outage section of the text report.
func outagesText(ew *errwriter.Writer, o *Outages) {
	if o == nil {
		return
	}
	ew.Printf("outages: %s\n", outagesLine(o))
	for i, w := range o.Windows {
		if i == maxOutageLines {
			ew.Printf("  … and %d more (summary.json lists them all)\n", len(o.Windows)-i)
			break
		}
		ew.Printf("  %s\n", outageWindowLine(w))
	}
	ew.Printf("outside outages (%s): %s\n", o.Outside.Covers, outsideLine(o.Outside))
}

// outagesMarkdown writes the outage section of report.md.
func outagesMarkdown(ew *errwriter.Writer, o *Outages) {
	if o == nil {
		return
	}
	ew.Printf("**Outages**: %s.\n\n", mdText(outagesLine(o)))
	ew.Printf("| outage at (s) | length (s) | failed attempts | open-loop arrivals | requests affected |\n|---:|---:|---:|---:|---:|\n")
	for i, w := range o.Windows {
		if i == maxOutageLines {
			ew.Printf("| … %d more (summary.json) | | | | |\n", len(o.Windows)-i)
			break
		}
		open := ""
		if w.Open {
			open = " (still down at the end)"
		}
		ew.Printf("| %.2f | %.3f%s | %d | %d | %d |\n", w.Start, w.Length, open, w.Attempts, w.Arrivals, w.Affected)
	}
	ew.Printf("\nOutside outages (%s): %s.\n\n", mdText(o.Outside.Covers), mdText(outsideLine(o.Outside)))
}
