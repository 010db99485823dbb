package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/llmbench-org/llmbench/internal/errwriter"
	"github.com/llmbench-org/llmbench/redact"
	"github.com/llmbench-org/llmbench/report/latencytable"
	"github.com/llmbench-org/llmbench/report/reconcile"
	"github.com/llmbench-org/llmbench/report/validity"
	"github.com/llmbench-org/llmbench/rundir"
)

// Renderer writes a Summary in one format.
type Renderer func(w io.Writer, s Summary) error

var (
	_ Renderer = RenderText
	_ Renderer = RenderJSON
)

// RenderText writes the short terminal summary: outcome, throughput, and the
// client's latency quantiles beside the engine's, each server quantile with
// the histogram bucket that bounds it.
//
// Text that came from outside (model ids, error samples, the scenario's
// description, URLs) is printed through Printable: no control character or
// escape sequence reaches the terminal.
func RenderText(w io.Writer, s Summary) error { return renderText(w, s, false) }

// RenderTextVerbose is RenderText with each finding whole: its full verdict
// and its evidence (the reports always carry both).
func RenderTextVerbose(w io.Writer, s Summary) error { return renderText(w, s, true) }

// briefVerdict is how much of a finding's verdict the brief summary prints.
const briefVerdict = 96

func renderText(w io.Writer, s Summary, verbose bool) error {
	ew := &errwriter.Writer{W: redact.PrintableWriter(w)}
	c := s.Client
	ew.Printf("llmbench %s — %s (seed %d), %.1f s measured\n", s.Run.Scenario, s.Run.ID, s.Run.Seed, s.Run.Duration)
	if d := s.Run.Description; d != "" {
		ew.Printf("%s\n", oneLine(d, 200))
	}
	ew.Printf("engine: %s, dialect %s, %s\n", s.Engine.Kind, orDash(s.Engine.Dialect), s.Engine.BaseURL)
	for _, n := range s.Engine.Notes {
		ew.Printf("  %s\n", n)
	}
	for _, lead := range leadText {
		if err := lead(ew, s); err != nil {
			return err
		}
	}
	if s.Sweep != nil {
		ew.Printf("\n%s\n", PooledHeading)
	}
	ew.Printf("requests: %d ok, %d failed%s%s%s\n", c.Requests.OK, c.Requests.Failed, errorList(c.Requests.Errors), canceledNote(c.Requests), failedRate(c.Requests))
	for _, class := range sortedKeys(c.Requests.ErrorSamples) {
		ew.Printf("  %s, e.g.: %s\n", class, oneLine(c.Requests.ErrorSamples[class], 160))
	}
	ew.Printf("throughput: %.1f output tokens/s, %.2f requests/s (tokens from %s)",
		c.Throughput.OutputTokensPerSec, c.Throughput.RequestsPerSec, c.Tokens.Source)
	if c.PeakConcurrency > 0 {
		ew.Printf("; peak %.0f output tokens/s, %d requests in flight", c.Throughput.PeakOutputTokensPerSec, c.PeakConcurrency)
	}
	ew.Printf("\n")
	if g := c.Goodput; g != nil {
		ew.Printf("goodput: %s\n", goodputLine(g, c.Requests.Sent))
	}
	outagesText(ew, s.Outages)
	ew.Printf("tokens: prompt %d (the plan aimed for %d), output %d (max_tokens %d), cached %d",
		c.Tokens.Prompt, c.Tokens.PromptTarget, c.Tokens.Output, c.Tokens.OutputTarget, c.Tokens.Cached)
	if c.Tokens.Reasoning > 0 {
		ew.Printf(", reasoning %d (part of output)", c.Tokens.Reasoning)
	}
	ew.Printf("\n")
	if n := promptNote(c.Tokens); n != "" {
		ew.Printf("  %s\n", n)
	}
	if n := c.Tokens.PromptCalibration; n != "" {
		ew.Printf("  prompt calibration: %s\n", oneLine(n, 300))
	}
	if n := outputShortWarning(c.Tokens); n != "" {
		ew.Printf("WARN %s\n", n)
	}
	if n := contextNote(c.Tokens); n != "" {
		ew.Printf("  %s\n", n)
	}

	if err := renderLatencyText(ew, LatencyTable(s)); err != nil {
		return err
	}
	ew.Printf("%s\n", firstTokenNote(c))
	if n := chunksNote(c.Tokens); n != "" {
		ew.Printf("%s\n", n)
	}
	if st := c.ServerTimings; st != nil {
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "llama.cpp timings (%d requests), ms\tn\tp50\tp99\n", st.Requests)
		for _, r := range serverTimingRows(st) {
			n, p50, p99 := distCols(r.d)
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", r.name, n, p50, p99)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if s.Server != nil {
		ew.Printf("server means are exact (sum ÷ count); server quantiles are interpolated inside histogram buckets [low–high ms]; %s\n", serverNote(s.Server))
	} else {
		ew.Printf("server: no /metrics view\n")
	}
	h := s.Health
	ew.Printf("health: schedule lag p99 %s ms, send delay p99 %s ms, %d retries, %d scrapes ok / %d failed, client CPU %.0f%% of %d cores, %d GCs",
		ms(h.ScheduleLag.P99), ms(h.SendDelay.P99), h.Retries, h.ScrapeOK, h.ScrapeFailures, 100*h.Client.CPUUtilization, h.Client.CPUCores, h.Client.GCCycles)
	if h.Client.SchedLatencyP99_s > 0 {
		ew.Printf(", Go scheduler delay p99 %s ms (how late the client's goroutines ran: a lower bound on its timestamps' error)", ms(h.Client.SchedLatencyP99_s))
	}
	if o := h.Client.HostOtherCPU; o != nil {
		ew.Printf(", other processes used %.0f%% of the machine", 100**o)
	}
	if c := h.Client; c.Throttled_s > 0 {
		ew.Printf(", its container's CPU limit%s stopped it %d times (%s ms)", validity.QuotaText(c.CPUQuota), c.ThrottledPeriods, ms(c.Throttled_s))
	}
	ew.Printf("\n")
	if n := streamsNote(h); n != "" {
		ew.Printf("streams: %s\n", n)
	}
	if n := recordsNote(h); n != "" {
		ew.Printf("records: %s\n", n)
	}
	for _, st := range h.States {
		label := "NOT VALID"
		if st.Severity == validity.Warning {
			label = "WARNING"
		}
		ew.Printf("%s: %s\n", label, validity.Line(st))
	}
	if w := s.Waterfall; w != nil {
		renderWaterfall(ew, w)
	}
	for _, f := range s.Findings {
		if !verbose {
			ew.Printf("%-4s %s: %s\n", strings.ToUpper(string(f.Severity)), f.ID, oneLine(f.Verdict, briefVerdict))
			continue
		}
		ew.Printf("%-4s %s: %s\n", strings.ToUpper(string(f.Severity)), f.ID, f.Verdict)
		for _, k := range sortedKeys(f.Evidence) {
			ew.Printf("       %s = %.6g\n", k, f.Evidence[k])
		}
	}
	if !verbose && len(s.Findings) > 0 {
		ew.Printf("(findings in brief: --verbose, report.md and report.html have them whole, with their evidence)\n")
	}
	return ew.Err
}

// PooledHeading introduces, in a sweep's reports, the figures pooled over
// all its points: after the per-point table, capacity and knee, never
// before them (docs/decisions/0039).
const PooledHeading = "all points (pooled: no single load produced these)"

// leadText are the sections the text summary opens with after the run's
// header: the per-load answer a reader came for, before any figure pooled
// over loads. Each writes nothing when the run has nothing of it; a new
// answer-first section (a capacity search's probe table) is added here.
var leadText = []func(*errwriter.Writer, Summary) error{
	func(ew *errwriter.Writer, s Summary) error { return renderSearch(ew, s.Search) },
	sweepText,
}

// sweepText writes a sweep's per-point table, its capacity and knee and its
// goodput peak.
func sweepText(ew *errwriter.Writer, s Summary) error {
	if s.Sweep == nil {
		return nil
	}
	ew.Printf("\nper point (each load on its own; 95 %% intervals):\n")
	if err := renderSweep(ew, s.Sweep); err != nil {
		return err
	}
	return ew.Err
}

func renderSweep(w io.Writer, sw *SweepResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	goodput := len(sw.Points) > 0 && sw.Points[0].GoodputPerS != nil
	head := "sweep phase\toffered\tachieved req/s\toutput tok/s\tn\tTTFT p50 ms\tTTFT p99 ms\tITL n\tITL p50 ms\tITL p99 ms"
	if goodput {
		head += "\tgoodput req/s\twithin SLO"
	}
	fmt.Fprintln(tw, head+"\tserver queue")
	tooFew := false
	for _, p := range sw.Points {
		row := fmt.Sprintf("%s\t%.4g %s\t%.2f\t%.0f\t%d\t%s\t%s\t%d\t%s\t%s", p.Phase, p.Load, p.LoadUnit, p.RequestsPerS, p.OutputTokPerS,
			p.N["ttft"], pointFigure(p, "ttft", 50, p.TTFTp50), pointFigure(p, "ttft", 99, p.TTFTp99),
			p.N["itl"], pointFigure(p, "itl", 50, p.ITLp50), pointFigure(p, "itl", 99, p.ITLp99))
		if goodput {
			g := "—"
			if p.GoodputPerS != nil {
				g = fmt.Sprintf("%.2f", *p.GoodputPerS)
			}
			row += "\t" + g + "\t" + goodFraction(p)
		}
		queue := "absent"
		if p.QueueMean >= 0 {
			queue = fmt.Sprintf("%.1f", p.QueueMean)
		}
		mark := ""
		if sw.Saturation.Found && p.Phase == sw.Saturation.Phase {
			mark = "  ← knee"
		}
		fmt.Fprintf(tw, "%s\t%s%s\n", row, queue, mark)
		tooFew = tooFew || len(p.TooFew) > 0
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var err error
	if tooFew {
		_, err = fmt.Fprintf(w, "  %s\n", latencytable.TooFewLegend)
	}
	if err == nil && sw.Saturation.Found {
		_, err = fmt.Fprintf(w, "saturation: capacity %.2f requests/s, knee at %s (%s)\n", sw.Saturation.Capacity, sw.Saturation.Phase, sw.Saturation.Reason)
	} else if err == nil {
		_, err = fmt.Fprintf(w, "saturation: not reached (%s)\n", sw.Saturation.Reason)
	}
	if g := sw.GoodputPeak; g != nil && err == nil {
		_, err = fmt.Fprintf(w, "%s\n", g)
	}
	return err
}

// pointFigure is a sweep point's quantile in ms with its interval and
// mark (msFigure); "—" without samples.
func pointFigure(p SweepPoint, latency string, q, v float64) string {
	if p.N != nil && p.N[latency] == 0 { // a summary with intervals, no samples of it
		return "—"
	}
	b, ok := p.Interval(latency, q)
	return msFigure(v, latencytable.Interval{Lo: b.Lo, Hi: b.Hi, Known: ok})
}

// goodFraction is a point's share of requests within the SLO with its
// interval: "92.0% (85.1–96.0%)"; "—" without.
func goodFraction(p SweepPoint) string {
	if p.GoodFraction == nil {
		return "—"
	}
	out := fmt.Sprintf("%.1f%%", 100**p.GoodFraction)
	if b := p.GoodFractionCI; b != nil {
		out += fmt.Sprintf(" (%.1f–%.1f%%)", 100*b.Lo, 100*b.Hi)
	}
	return out
}

// failedRate is the error rate with its interval, "; error rate 5.0%, 95%
// CI 2.2–11.0%", when any request failed ("" otherwise).
func failedRate(r RequestCounts) string {
	if r.Failed == 0 || r.FailedCI == nil || r.Sent-r.Canceled <= 0 {
		return ""
	}
	return fmt.Sprintf("; error rate %.1f%%%s", 100*float64(r.Failed)/float64(r.Sent-r.Canceled), percentCI(r.FailedCI))
}

// renderLatencyText writes the latency table as aligned columns, in ms:
// each latency's client row (n, mean and quantiles, each with its 95 %
// interval, a figure too small a sample for its rank marked) and under it
// the engine's row (each quantile with its histogram bucket), so both
// sides' figures of one quantile share a column.
func renderLatencyText(w io.Writer, t latencytable.Table) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	names := make([]string, len(t.Percentiles))
	for i, p := range t.Percentiles {
		names[i] = rundir.PercentileName(p)
	}
	fmt.Fprintln(tw, "latency (ms)\tn\tmean\t"+strings.Join(names, "\t"))
	for _, r := range t.Rows {
		fmt.Fprintf(tw, "%s\t%s\n", r.Name, clientCols(r.Client, "\t"))
		if !t.NoServer {
			fmt.Fprintf(tw, "  engine\t%s\n", serverCols(r.Server, len(t.Percentiles), "\t"))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range latencyLegend(t) {
		fmt.Fprintf(w, "  %s\n", l)
	}
	return nil
}

// latencyLegend are the lines that read the table's marks: the intervals,
// the mark of a figure too small a sample for its rank (when one is
// shown), and how ITL's intervals were read (when they were).
func latencyLegend(t latencytable.Table) []string {
	out := []string{latencytable.IntervalLegend}
	tooFew, sketched := false, false
	for _, r := range t.Rows {
		for _, q := range r.Client.Quantiles {
			tooFew = tooFew || (q.OK && q.CI.TooFew())
		}
		sketched = sketched || (r.Client.Sketched && r.Client.N > 0)
	}
	if tooFew {
		out = append(out, latencytable.TooFewLegend)
	}
	if sketched {
		out = append(out, latencytable.SketchLegend)
	}
	return out
}

// clientCols are the client's n, mean and quantiles in ms, each with its
// interval (msFigure), joined by sep; a dash for each without samples.
func clientCols(c latencytable.Client, sep string) string {
	if c.N == 0 {
		return "0" + sep + "—" + strings.Repeat(sep+"—", len(c.Quantiles))
	}
	out := fmt.Sprint(c.N) + sep + msFigure(c.Mean, c.MeanCI)
	for _, q := range c.Quantiles {
		if q.OK {
			out += sep + msFigure(q.V, q.CI)
		} else {
			out += sep + "—"
		}
	}
	return out
}

// msFigure is a figure in ms with its interval, marked when its sample is
// too small for its rank: "412.0 (398.0–431.0)", "460.0† (455.0–∞)".
func msFigure(v float64, ci latencytable.Interval) string {
	out := ms(v)
	if ci.TooFew() {
		out += latencytable.TooFewMark
	}
	if r := ci.Range(ms); r != "" {
		out += " (" + r + ")"
	}
	return out
}

// serverCols are the engine's n, mean and its n quantiles, joined by sep,
// each quantile with its bucket: "50.0 [0.0–100.0]".
func serverCols(sv latencytable.Server, n int, sep string) string {
	// A row without figures still fills its cells: the columns after it
	// stay aligned.
	switch sv.State {
	case latencytable.NotKept:
		return "—" + sep + "no engine metric" + strings.Repeat(sep, n)
	case latencytable.NoMetrics:
		return "—" + sep + "no /metrics" + strings.Repeat(sep, n)
	case latencytable.Absent:
		return "—" + sep + "absent" + strings.Repeat(sep, n)
	}
	out := fmt.Sprintf("%.0f", sv.N) + sep + ms(sv.Mean)
	for _, q := range sv.Quantiles {
		if q.OK {
			out += sep + bucketCol(q)
		} else {
			out += sep + "—"
		}
	}
	return out
}

func bucketCol(e latencytable.Bucket) string {
	if e.AboveTop {
		return fmt.Sprintf(">%s [top bucket]", ms(e.Low))
	}
	return fmt.Sprintf("%s [%s–%s]", ms(e.Value), ms(e.Low), ms(e.High))
}

func serverNote(s *ServerSide) string {
	keys := make([]string, 0, len(s.Counters))
	for k := range s.Counters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s Δ%.0f", k, s.Counters[k]))
	}
	return "server counters: " + strings.Join(parts, ", ")
}

// oneLine folds a message onto one line of at most n runes, for the terminal.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func errorList(errs map[string]int) string {
	if len(errs) == 0 {
		return ""
	}
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, errs[k])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func ms(sec float64) string {
	return fmt.Sprintf("%.1f", sec*1000)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// canceledNote says how many requests the run's abort cancelled, apart
// from the failures ("" when none).
func canceledNote(r RequestCounts) string {
	if r.Canceled == 0 {
		return ""
	}
	return fmt.Sprintf(", %d canceled by the abort (not failures)", r.Canceled)
}

// recordsNote says what was dropped while reading the raw files ("" when
// nothing was).
func recordsNote(h Health) string {
	var parts []string
	if h.PartialLines > 0 {
		parts = append(parts, fmt.Sprintf("%d torn %s skipped", h.PartialLines, plural(h.PartialLines, "line", "lines")))
	}
	if h.DuplicateRecords > 0 {
		parts = append(parts, fmt.Sprintf("%d duplicate %s dropped (same request id; the first kept)", h.DuplicateRecords, plural(h.DuplicateRecords, "record", "records")))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%d read, ", h.Records) + strings.Join(parts, ", ")
}

// renderWaterfall prints where requests' time went, phase by phase, from the
// engine's trace joined to the client's records.
func renderWaterfall(ew *errwriter.Writer, w *reconcile.WaterfallSummary) {
	ew.Printf("waterfall: %d of %d requests joined to the engine's trace (%d add up to their E2E within %s ms)\n",
		w.Joined, w.Requests, w.WithinTolerance, ms(w.Tolerance))
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  phase\tmean ms\tp50\tp99\tshare")
	for _, p := range w.Phases {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%.0f%%\n", p.Name, ms(p.Mean), ms(p.P50), ms(p.P99), 100*p.Share)
	}
	tw.Flush()
}
