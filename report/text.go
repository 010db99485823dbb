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
	ew.Printf("requests: %d ok, %d failed%s%s\n", c.Requests.OK, c.Requests.Failed, errorList(c.Requests.Errors), canceledNote(c.Requests))
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
	if s.Sweep != nil {
		if err := renderSweep(ew, s.Sweep); err != nil {
			return err
		}
	}
	if err := renderSearch(ew, s.Search); err != nil {
		return err
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

func renderSweep(w io.Writer, sw *SweepResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	goodput := len(sw.Points) > 0 && sw.Points[0].GoodputPerS != nil
	head := "sweep phase\toffered\tachieved req/s\toutput tok/s\tTTFT p50 ms\tTTFT p99 ms\tserver queue"
	if goodput {
		head += "\tgoodput req/s"
	}
	fmt.Fprintln(tw, head)
	for _, p := range sw.Points {
		queue := "absent"
		if p.QueueMean >= 0 {
			queue = fmt.Sprintf("%.1f", p.QueueMean)
		}
		if goodput && p.GoodputPerS != nil {
			queue += fmt.Sprintf("\t%.2f", *p.GoodputPerS)
		}
		mark := ""
		if sw.Saturation.Found && p.Phase == sw.Saturation.Phase {
			mark = "  ← knee"
		}
		fmt.Fprintf(tw, "%s\t%.4g %s\t%.2f\t%.0f\t%s\t%s\t%s%s\n", p.Phase, p.Load, p.LoadUnit, p.RequestsPerS, p.OutputTokPerS,
			ms(p.TTFTp50), ms(p.TTFTp99), queue, mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var err error
	if sw.Saturation.Found {
		_, err = fmt.Fprintf(w, "saturation: capacity %.2f requests/s, knee at %s (%s)\n", sw.Saturation.Capacity, sw.Saturation.Phase, sw.Saturation.Reason)
	} else {
		_, err = fmt.Fprintf(w, "saturation: not reached (%s)\n", sw.Saturation.Reason)
	}
	if g := sw.GoodputPeak; g != nil && err == nil {
		_, err = fmt.Fprintf(w, "%s\n", g)
	}
	return err
}

// renderLatencyText writes the latency table as aligned columns, in ms.
func renderLatencyText(w io.Writer, t latencytable.Table) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	names := make([]string, len(t.Percentiles))
	for i, p := range t.Percentiles {
		names[i] = rundir.PercentileName(p)
	}
	cols := strings.Join(names, "\t")
	fmt.Fprintln(tw, "latency (ms)\tclient mean\t"+cols+"\t\tserver mean\t"+cols)
	for _, r := range t.Rows {
		fmt.Fprintf(tw, "%s\t%s\t\t%s\n", r.Name, clientCols(r.Client, "\t"), serverCols(r.Server, len(t.Percentiles)))
	}
	return tw.Flush()
}

// clientCols are the client's mean and quantiles in ms, joined by sep; a
// dash for each without samples.
func clientCols(c latencytable.Client, sep string) string {
	if c.N == 0 {
		return "—" + strings.Repeat(sep+"—", len(c.Quantiles))
	}
	out := ms(c.Mean)
	for _, q := range c.Quantiles {
		if q.OK {
			out += sep + ms(q.V)
		} else {
			out += sep + "—"
		}
	}
	return out
}

// serverCols are the engine's mean and its n quantiles, tab-separated, each
// quantile with its bucket: "50.0 [0.0–100.0]".
func serverCols(sv latencytable.Server, n int) string {
	switch sv.State {
	case latencytable.NotKept:
		return "—" + strings.Repeat("\t", n)
	case latencytable.NoMetrics:
		return "—" + strings.Repeat("\t—", n)
	case latencytable.Absent:
		return "absent" + strings.Repeat("\t", n)
	}
	out := ms(sv.Mean)
	for _, q := range sv.Quantiles {
		if q.OK {
			out += "\t" + bucketCol(q)
		} else {
			out += "\t—"
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
