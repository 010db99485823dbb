package report

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/llmbench-org/llmbench/internal/errwriter"
	"github.com/llmbench-org/llmbench/internal/textwidth"
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

// RenderText writes the short terminal summary at DefaultTextWidth: the
// answer first (verdict, headline figures), then throughput, the client's
// latency quantiles beside the engine's, health, one line per warning and
// one for the checks that agree.
//
// Text that came from outside (model ids, error samples, the scenario's
// description, URLs) is printed through Printable: no control character or
// escape sequence reaches the terminal.
func RenderText(w io.Writer, s Summary) error { return RenderTextWith(w, s, TextOptions{}) }

// RenderTextVerbose is RenderText with each finding whole: its full verdict
// and its evidence (the reports always carry both).
func RenderTextVerbose(w io.Writer, s Summary) error {
	return RenderTextWith(w, s, TextOptions{Verbose: true})
}

// DefaultTextWidth is the text summary's width in columns when the
// options name none: what a terminal of 100 columns or more shows without
// wrapping, and what a CI log shows in full (docs/decisions/0050).
const DefaultTextWidth = 100

// TextOptions shape the text summary.
type TextOptions struct {
	// Width is the most columns a line takes (0: DefaultTextWidth): a
	// longer paragraph wraps with a hanging indent, a table too wide goes
	// in blocks of columns, and a warning is cut to one line.
	Width int
	// Verbose prints every finding and warning whole (wrapped), with the
	// findings' evidence, instead of one cut line each.
	Verbose bool
	// RunDir, when set, is printed last with the path of its report.html:
	// where the whole report is.
	RunDir string
}

// RenderTextWith writes the text summary as o says.
func RenderTextWith(w io.Writer, s Summary, o TextOptions) error {
	if o.Width <= 0 {
		o.Width = DefaultTextWidth
	}
	// Sanitize first, then fit: an escaped control character is wider than
	// the byte it replaced.
	var body bytes.Buffer
	ew := &errwriter.Writer{W: redact.PrintableWriter(&body)}
	t := textRun{ew: ew, s: s, o: o}
	t.render()
	if ew.Err != nil {
		return ew.Err
	}
	out := &errwriter.Writer{W: w}
	for _, line := range strings.Split(strings.TrimSuffix(body.String(), "\n"), "\n") {
		for _, l := range textwidth.Wrap(strings.TrimRight(line, " "), o.Width) {
			out.Printf("%s\n", l)
		}
	}
	return out.Err
}

// textRun is one rendering of the text summary.
type textRun struct {
	ew  *errwriter.Writer
	s   Summary
	o   TextOptions
	cut bool // a line was cut to the width: the tail says where it is whole
}

// table writes t fitted to the width.
func (t *textRun) table(tt textTable) {
	for _, l := range fitTable(tt, t.o.Width) {
		t.ew.Printf("%s\n", l)
	}
}

// oneLine writes a line cut to the width (whole, to be wrapped, when
// verbose).
func (t *textRun) oneLine(line string) {
	indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
	line = indent + strings.Join(strings.Fields(line), " ")
	if !t.o.Verbose && textwidth.Len(line) > t.o.Width {
		line, t.cut = textwidth.Cut(line, t.o.Width), true
	}
	t.ew.Printf("%s\n", line)
}

func (t *textRun) render() {
	ew, s, c := t.ew, t.s, t.s.Client
	ew.Printf("llmbench %s — %s (seed %d), %.1f s measured\n", s.Run.Scenario, s.Run.ID, s.Run.Seed, s.Run.Duration)
	t.answer()
	if d := s.Run.Description; d != "" {
		ew.Printf("%s\n", oneLine(d, 200))
	}
	ew.Printf("engine: %s, dialect %s, %s\n", s.Engine.Kind, orDash(s.Engine.Dialect), s.Engine.BaseURL)
	for _, n := range s.Engine.Notes {
		ew.Printf("  %s\n", n)
	}
	for _, lead := range leadText {
		if err := lead(t); err != nil {
			ew.Err = cmpErr(ew.Err, err)
			return
		}
	}
	if s.Sweep != nil {
		ew.Printf("\n%s\n", PooledHeading)
	}
	ew.Printf("requests: %d ok, %d failed%s%s%s\n", c.Requests.OK, c.Requests.Failed, errorList(c.Requests.Errors), canceledNote(c.Requests), failedRate(c.Requests))
	for _, class := range sortedKeys(c.Requests.ErrorSamples) {
		t.oneLine(fmt.Sprintf("  %s, e.g.: %s", class, c.Requests.ErrorSamples[class]))
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
	endpointsText(ew, c.Endpoints) // endpoints.go
	outagesText(ew, s.Outages)
	t.tokens()
	t.latency()
	t.health()
	if w := s.Waterfall; w != nil {
		t.waterfall(w)
	}
	t.serverTimeline(s.Timeline) // timelinetext.go
	t.warnings()
	t.tail()
}

// cmpErr is the first error of two.
func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// answer writes what a reader came for, under the header: the verdict
// (with the gates' when the run has gates) and the headline figures, or a
// sweep's or a search's capacity.
func (t *textRun) answer() {
	h, s := t.s.Health, t.s
	warnings := 0
	for _, st := range h.States {
		if st.Severity == validity.Warning {
			warnings++
		}
	}
	for _, f := range s.Findings {
		if f.Severity != reconcile.Info {
			warnings++
		}
	}
	verdict := "valid"
	if !h.Valid {
		verdict = fmt.Sprintf("NOT VALID (%d %s below)", len(h.Problems), plural(len(h.Problems), "reason", "reasons"))
	}
	if warnings > 0 {
		verdict += fmt.Sprintf(", %d %s below", warnings, plural(warnings, "warning", "warnings"))
	}
	if g := s.Gates; g != nil {
		state := "passed"
		if !g.Passed {
			state = "FAILED"
		}
		verdict += fmt.Sprintf("; gates %s (%d pass, %d fail)", state, g.Pass, g.Fail)
	}
	t.oneLine("verdict: " + verdict)
	switch {
	case s.Search != nil:
		t.ew.Printf("answer: %s\n", s.Search.String())
	case s.Sweep != nil && s.Sweep.Saturation.Found:
		t.ew.Printf("answer: capacity %.2f requests/s, knee at %s\n", s.Sweep.Saturation.Capacity, s.Sweep.Saturation.Phase)
	default:
		c := s.Client
		line := fmt.Sprintf("answer: %.2f requests/s, %.1f output tokens/s", c.Throughput.RequestsPerSec, c.Throughput.OutputTokensPerSec)
		for _, q := range headlineQuantiles(LatencyTable(s)) {
			line += "; " + q
		}
		t.ew.Printf("%s\n", endpointsAnswer(c, line))
	}
}

// headlineQuantiles are TTFT's and ITL's first and last quantiles in ms
// ("TTFT p50 20.5 p99 23.0 ms"), those with samples.
func headlineQuantiles(tab latencytable.Table) []string {
	var out []string
	for _, r := range tab.Rows {
		if (r.Name != "TTFT" && r.Name != "ITL") || r.Client.N == 0 || len(r.Client.Quantiles) == 0 {
			continue
		}
		idx := []int{0, len(r.Client.Quantiles) - 1}
		if idx[1] == 0 {
			idx = idx[:1]
		}
		parts := []string{r.Name}
		for _, i := range idx {
			if q := r.Client.Quantiles[i]; q.OK && i < len(tab.Percentiles) {
				parts = append(parts, rundir.PercentileName(tab.Percentiles[i])+" "+ms(q.V))
			}
		}
		if len(parts) > 1 {
			out = append(out, strings.Join(parts, " ")+" ms")
		}
	}
	return out
}

// tokens writes the token counts and what to make of them.
func (t *textRun) tokens() {
	ew, c := t.ew, t.s.Client
	ew.Printf("tokens: prompt %d (the plan aimed for %d), output %d (max_tokens %d), cached %d",
		c.Tokens.Prompt, c.Tokens.PromptTarget, c.Tokens.Output, c.Tokens.OutputTarget, c.Tokens.Cached)
	if c.Tokens.Reasoning > 0 {
		ew.Printf(", reasoning %d (part of output)", c.Tokens.Reasoning)
	}
	ew.Printf("\n")
	if n := promptNote(c.Tokens); n != "" {
		ew.Printf("  %s\n", n)
	}
	if n := imagesNote(c.Tokens); n != "" {
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
	if n := t.s.Sessions.String(); n != "" {
		ew.Printf("  %s\n", n)
	}
}

// latency writes the latency table, its legend and notes, and the
// engine's own timings.
func (t *textRun) latency() {
	ew, s, c := t.ew, t.s, t.s.Client
	t.latencyTable(LatencyTable(s))
	ew.Printf("%s\n", firstTokenNote(c))
	if n := chunksNote(c.Tokens); n != "" {
		ew.Printf("%s\n", n)
	}
	if st := c.ServerTimings; st != nil {
		tab := textTable{keyCols: 1}
		tab.add(fmt.Sprintf("llama.cpp timings (%d requests), ms", st.Requests), "n", "p50", "p99")
		for _, r := range serverTimingRows(st) {
			n, p50, p99 := distCols(r.d)
			tab.add("  "+r.name, n, p50, p99)
		}
		t.table(tab)
	}
	if s.Server != nil {
		ew.Printf("server means are exact (sum ÷ count); server quantiles are interpolated inside histogram buckets [low–high ms]; %s\n", serverNote(s.Server))
	} else {
		ew.Printf("server: no /metrics view\n")
	}
}

// health writes the client's health line and what was dropped.
func (t *textRun) health() {
	ew, h := t.ew, t.s.Health
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
}

// warnings writes each validity state whole, each finding that is not
// INFO on one line (whole, with its evidence, when verbose), then the
// checks without a warning in one line.
func (t *textRun) warnings() {
	ew, s := t.ew, t.s
	for _, st := range s.Health.States {
		// A validity state is the verdict's reason, and says what the
		// latencies cover: whole (wrapped), where a finding gets one line.
		label := "NOT VALID"
		if st.Severity == validity.Warning {
			label = "WARNING"
		}
		ew.Printf("%s: %s\n", label, validity.Line(st))
	}
	var agree []string
	for _, f := range s.Findings {
		if f.Severity == reconcile.Info && !t.o.Verbose {
			agree = append(agree, f.ID)
			continue
		}
		t.oneLine(fmt.Sprintf("%s %s: %s", strings.ToUpper(string(f.Severity)), f.ID, f.Verdict))
		if t.o.Verbose {
			for _, k := range sortedKeys(f.Evidence) {
				ew.Printf("       %s = %.6g\n", k, f.Evidence[k])
			}
		}
	}
	if len(agree) > 0 {
		ew.Printf("checks without a warning: %s\n", strings.Join(agree, ", "))
	}
}

// tail says where the rest is: the whole findings, the run directory and
// its report.html, last, where a reader looks for them.
func (t *textRun) tail() {
	if !t.o.Verbose && (t.cut || len(t.s.Findings) > 0) {
		t.ew.Printf("(one line each: --verbose, report.md and report.html have them whole, with evidence)\n")
	}
	if d := t.o.RunDir; d != "" {
		t.ew.Printf("report: %s\n", filepath.Join(d, rundir.HTMLFile))
		t.ew.Printf("run directory: %s\n", d)
	}
}

// PooledHeading introduces, in a sweep's reports, the figures pooled over
// all its points: after the per-point table, capacity and knee, never
// before them (docs/decisions/0039).
const PooledHeading = "all points (pooled: no single load produced these)"

// leadText are the sections the text summary opens with after the run's
// header: the per-load answer a reader came for, before any figure pooled
// over loads. Each writes nothing when the run has nothing of it; a new
// answer-first section (a capacity search's probe table) is added here.
var leadText = []func(*textRun) error{
	func(t *textRun) error { return renderSearch(t.ew, t.s.Search, t.o.Width) },
	sweepText,
	gpuCacheText,
}

// sweepText writes a sweep's per-point table, its capacity and knee and its
// goodput peak.
func sweepText(t *textRun) error {
	sw := t.s.Sweep
	if sw == nil {
		return nil
	}
	t.ew.Printf("\nper point (each load on its own; 95 %% intervals):\n")
	t.table(sweepTable(sw))
	if sweepTooFew(sw) {
		legend := latencytable.TooFewLegend
		if !t.o.Verbose {
			legend = tooFewBrief
		}
		t.ew.Printf("  %s\n", legend)
	}
	if sw.Saturation.Found {
		t.ew.Printf("saturation: capacity %.2f requests/s, knee at %s (%s)\n", sw.Saturation.Capacity, sw.Saturation.Phase, sw.Saturation.Reason)
	} else {
		t.ew.Printf("saturation: not reached (%s)\n", sw.Saturation.Reason)
	}
	if g := sw.GoodputPeak; g != nil {
		t.ew.Printf("%s\n", g)
	}
	return t.ew.Err
}

// sweepTable is a sweep's per-point table, keyed by phase.
func sweepTable(sw *SweepResult) textTable {
	tab := textTable{keyCols: 1}
	goodput := len(sw.Points) > 0 && sw.Points[0].GoodputPerS != nil
	head := []string{"sweep phase", "offered", "achieved req/s", "output tok/s", "n", "TTFT p50 ms", "TTFT p99 ms", "ITL n", "ITL p50 ms", "ITL p99 ms"}
	if goodput {
		head = append(head, "goodput req/s", "within SLO")
	}
	gpu := sweepHasGPU(sw)
	if gpu {
		head = append(head, "GPU util", "energy/token")
	}
	tab.add(append(head, "server queue")...)
	for _, p := range sw.Points {
		row := []string{p.Phase, fmt.Sprintf("%.4g %s", p.Load, p.LoadUnit), fmt.Sprintf("%.2f", p.RequestsPerS), fmt.Sprintf("%.0f", p.OutputTokPerS),
			fmt.Sprint(p.N["ttft"]), pointFigure(p, "ttft", 50, p.TTFTp50), pointFigure(p, "ttft", 99, p.TTFTp99),
			fmt.Sprint(p.N["itl"]), pointFigure(p, "itl", 50, p.ITLp50), pointFigure(p, "itl", 99, p.ITLp99)}
		if goodput {
			g := "—"
			if p.GoodputPerS != nil {
				g = fmt.Sprintf("%.2f", *p.GoodputPerS)
			}
			row = append(row, g, goodFraction(p))
		}
		if gpu {
			row = append(row, percentOr(p.GPUUtilization), joulesOr(p.EnergyPerOutputTokenJ))
		}
		queue := "absent"
		if p.QueueMean >= 0 {
			queue = fmt.Sprintf("%.1f", p.QueueMean)
		}
		if sw.Saturation.Found && p.Phase == sw.Saturation.Phase {
			queue += "  ← knee"
		}
		tab.add(append(row, queue)...)
	}
	return tab
}

// sweepTooFew reports whether a point's figure is marked too few samples.
func sweepTooFew(sw *SweepResult) bool {
	for _, p := range sw.Points {
		if len(p.TooFew) > 0 {
			return true
		}
	}
	return false
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

// renderLatencyText writes the latency table at DefaultTextWidth.
func renderLatencyText(w io.Writer, tab latencytable.Table) error {
	ew := &errwriter.Writer{W: w}
	t := textRun{ew: ew, o: TextOptions{Width: DefaultTextWidth}}
	t.latencyTable(tab)
	return ew.Err
}

// latencyTable writes the latency table as aligned columns, in ms: each
// latency's client row (n, mean and quantiles, each with its 95 % interval,
// a figure too small a sample for its rank marked) and under it the
// engine's row (each quantile with its histogram bucket), so both sides'
// figures of one quantile share a column. Too wide for the width, its
// columns go in blocks (fitTable).
func (t *textRun) latencyTable(lt latencytable.Table) {
	tab := textTable{keyCols: 1}
	head := []string{"latency (ms)", "n", "mean"}
	for _, p := range lt.Percentiles {
		head = append(head, rundir.PercentileName(p))
	}
	tab.add(head...)
	for _, r := range lt.Rows {
		tab.add(append([]string{r.Name}, strings.Split(clientCols(r.Client, "\t"), "\t")...)...)
		if !lt.NoServer {
			tab.add(append([]string{"  engine"}, strings.Split(serverCols(r.Server, len(lt.Percentiles), "\t"), "\t")...)...)
		}
	}
	t.table(tab)
	if !t.o.Verbose {
		t.ew.Printf("  %s\n", briefLegend(lt))
		return
	}
	for _, l := range latencyLegend(lt) {
		t.ew.Printf("  %s\n", l)
	}
}

// tooFewBrief is latencytable.TooFewLegend in brief.
const tooFewBrief = latencytable.TooFewMark + " too few samples for this percentile's rank (a side open, ∞)"

// briefLegend is latencyLegend in one line, for the brief summary: the
// marks named, --verbose and the reports say the rest.
func briefLegend(lt latencytable.Table) string {
	parts := []string{"value (95 % interval)"}
	for _, l := range latencyLegend(lt)[1:] {
		switch l {
		case latencytable.TooFewLegend:
			parts = append(parts, tooFewBrief)
		case latencytable.SketchLegend:
			parts = append(parts, "ITL's intervals read from a sketch")
		}
	}
	return strings.Join(parts, "; ") + " (--verbose explains)"
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

// waterfall writes where requests' time went, phase by phase, from the
// engine's trace joined to the client's records.
func (t *textRun) waterfall(w *reconcile.WaterfallSummary) {
	t.ew.Printf("waterfall: %d of %d requests joined to the engine's trace (%d add up to their E2E within %s ms)\n",
		w.Joined, w.Requests, w.WithinTolerance, ms(w.Tolerance))
	tab := textTable{keyCols: 1}
	tab.add("  phase", "mean ms", "p50", "p99", "share")
	for _, p := range w.Phases {
		tab.add("  "+p.Name, ms(p.Mean), ms(p.P50), ms(p.P99), fmt.Sprintf("%.0f%%", 100*p.Share))
	}
	t.table(tab)
}
