package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/errwriter"
	"github.com/llmbench-org/llmbench/redact"
	"github.com/llmbench-org/llmbench/report/chunkdigest"
	"github.com/llmbench-org/llmbench/report/latencytable"
	"github.com/llmbench-org/llmbench/report/validity"
	"github.com/llmbench-org/llmbench/rundir"
)

var _ Renderer = RenderMarkdown

// RenderMarkdown writes the summary as Markdown: the same content as the
// terminal summary, in tables a CI job can post as a pull-request comment or
// a job summary.
func RenderMarkdown(w io.Writer, s Summary) error {
	ew := &errwriter.Writer{W: redact.PrintableWriter(w)}
	c := s.Client
	ew.Printf("## llmbench: %s\n\n", mdText(s.Run.Scenario))
	if d := s.Run.Description; d != "" {
		ew.Printf("%s\n\n", mdText(oneLine(d, 500)))
	}
	ew.Printf("Run `%s`, seed %d, %.1f s measured; engine %s (%s) at `%s`.\n\n",
		mdText(s.Run.ID), s.Run.Seed, s.Run.Duration, mdText(s.Engine.Kind), mdText(orDash(s.Engine.Dialect)), mdText(s.Engine.BaseURL))
	for _, n := range s.Engine.Notes {
		ew.Printf("- %s\n", mdText(n))
	}
	if len(s.Engine.Notes) > 0 {
		ew.Printf("\n")
	}
	if g := s.Gates; g != nil {
		renderGatesMarkdown(ew, g)
	}
	renderValidityMarkdown(ew, s.Health)
	for _, lead := range leadMarkdown {
		lead(ew, s)
	}
	if s.Sweep != nil {
		ew.Printf("### %s\n\n", PooledHeading)
	}
	ew.Printf("| requests ok | failed | requests/s | output tokens/s | tokens from |\n|---:|---:|---:|---:|---|\n")
	ew.Printf("| %d | %d %s%s | %.2f | %.1f | %s |\n\n", c.Requests.OK, c.Requests.Failed, mdText(errorList(c.Requests.Errors)), mdText(canceledNote(c.Requests)+failedRate(c.Requests)),
		c.Throughput.RequestsPerSec, c.Throughput.OutputTokensPerSec, c.Tokens.Source)
	if g := c.Goodput; g != nil {
		ew.Printf("**Goodput**: %s.\n\n", mdText(goodputLine(g, c.Requests.Sent)))
	}
	outagesMarkdown(ew, s.Outages)

	var warnings []string
	if n := outputShortWarning(c.Tokens); n != "" {
		warnings = append(warnings, "**Warning**: "+mdText(n)+".")
	}
	for _, n := range []string{contextNote(c.Tokens), promptNote(c.Tokens), imagesNote(c.Tokens), s.Sessions.String(), streamsNote(s.Health)} {
		if n != "" {
			warnings = append(warnings, mdText(upperFirst(n))+".")
		}
	}
	if n := c.Tokens.PromptCalibration; n != "" {
		warnings = append(warnings, "Prompt calibration: "+mdText(strings.TrimSuffix(n, "."))+".")
	}
	for _, w := range warnings {
		ew.Printf("- %s\n", w)
	}
	if len(warnings) > 0 {
		ew.Printf("\n")
	}

	renderLatencyMarkdown(ew, LatencyTable(s))
	ew.Printf("\nEngine means are exact (sum ÷ count); engine quantiles are interpolated inside its histogram buckets, and the true value lies in the bracketed bucket. %s.", mdText(upperFirst(firstTokenNote(c))))
	if n := chunksNote(c.Tokens); n != "" {
		ew.Printf(" %s.", mdText(upperFirst(n)))
	}
	ew.Printf("\n\n")
	if st := c.ServerTimings; st != nil {
		ew.Printf("| llama.cpp timings (%d requests), ms | n | p50 | p99 |\n|---|---:|---:|---:|\n", st.Requests)
		for _, r := range serverTimingRows(st) {
			n, p50, p99 := distCols(r.d)
			ew.Printf("| %s | %s | %s | %s |\n", r.name, n, p50, p99)
		}
		ew.Printf("\n")
	}

	if len(s.Findings) > 0 {
		ew.Printf("| finding | severity | verdict |\n|---|---|---|\n")
		for _, f := range s.Findings {
			ew.Printf("| %s | %s | %s |\n", f.ID, f.Severity, mdText(f.Verdict))
		}
		ew.Printf("\n")
	}
	h := s.Health
	ew.Printf("Client: CPU %.0f%% of %d cores, Go scheduler delay p99 %s ms (a lower bound on its timestamps' error), %d GCs; schedule lag p99 %s ms; %d scrapes ok, %d failed.\n",
		100*h.Client.CPUUtilization, h.Client.CPUCores, ms(h.Client.SchedLatencyP99_s), h.Client.GCCycles, ms(h.ScheduleLag.P99), h.ScrapeOK, h.ScrapeFailures)
	if o := h.Client.HostOtherCPU; o != nil {
		ew.Printf("Other processes used %.0f%% of the machine (the engine too, when it runs on this host).\n", 100**o)
	}
	if c := h.Client; c.Throttled_s > 0 {
		ew.Printf("Its container's CPU limit%s stopped the client %d times, %s ms in all.\n", validity.QuotaText(c.CPUQuota), c.ThrottledPeriods, ms(c.Throttled_s))
	}
	return ew.Err
}

// leadMarkdown are the sections report.md opens with after the run's
// header, gates and validity: the per-load answer before any figure pooled
// over loads (see leadText). A new answer-first section is added here.
var leadMarkdown = []func(*errwriter.Writer, Summary){
	func(ew *errwriter.Writer, s Summary) { markdownSearch(ew, s.Search) },
	sweepMarkdown,
	gpuCacheMarkdown,  // gpumarkdown.go
	endpointsMarkdown, // endpoints.go
}

// sweepMarkdown writes a sweep's per-point table with its intervals, its
// capacity and knee and its goodput peak.
func sweepMarkdown(ew *errwriter.Writer, s Summary) {
	sw := s.Sweep
	if sw == nil {
		return
	}
	ew.Printf("### Per point (each load on its own; 95 %% intervals)\n\n")
	gpu, gpuHead, gpuAlign := sweepHasGPU(sw), "", ""
	if gpu {
		gpuHead, gpuAlign = " GPU util | energy/token |", "---:|---:|"
	}
	ew.Printf("| sweep phase | offered | requests/s | output tok/s | n | TTFT p50 ms | TTFT p99 ms | ITL n | ITL p50 ms | ITL p99 ms | goodput/s | within SLO |%s\n", gpuHead)
	ew.Printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|%s\n", gpuAlign)
	tooFew := false
	for _, p := range sw.Points {
		mark := ""
		if sw.Saturation.Found && p.Phase == sw.Saturation.Phase {
			mark = " (knee)"
		}
		goodput := "—"
		if p.GoodputPerS != nil {
			goodput = fmt.Sprintf("%.2f", *p.GoodputPerS)
		}
		gpuCells := ""
		if gpu {
			gpuCells = fmt.Sprintf(" %s | %s |", percentOr(p.GPUUtilization), joulesOr(p.EnergyPerOutputTokenJ))
		}
		ew.Printf("| %s%s | %.4g %s | %.2f | %.0f | %d | %s | %s | %d | %s | %s | %s | %s |%s\n", mdText(p.Phase), mark, p.Load, p.LoadUnit, p.RequestsPerS,
			p.OutputTokPerS, p.N["ttft"], pointFigure(p, "ttft", 50, p.TTFTp50), pointFigure(p, "ttft", 99, p.TTFTp99),
			p.N["itl"], pointFigure(p, "itl", 50, p.ITLp50), pointFigure(p, "itl", 99, p.ITLp99), goodput, goodFraction(p), gpuCells)
		tooFew = tooFew || len(p.TooFew) > 0
	}
	if tooFew {
		ew.Printf("\n- %s\n", mdText(latencytable.TooFewLegend))
	}
	if sw.Saturation.Found {
		ew.Printf("\n**Capacity**: %.2f requests/s; knee at %s. %s.\n\n", sw.Saturation.Capacity, mdText(sw.Saturation.Phase), mdText(upperFirst(sw.Saturation.Reason)))
	} else {
		ew.Printf("\n**Saturation not reached**: %s.\n\n", mdText(sw.Saturation.Reason))
	}
	if g := sw.GoodputPeak; g != nil {
		ew.Printf("**Goodput**: %s.\n\n", mdText(strings.TrimPrefix(g.String(), "goodput ")))
	}
}

// renderLatencyMarkdown writes the latency table, in ms, as the terminal
// does: each latency's client row with its intervals, the engine's under it.
func renderLatencyMarkdown(ew *errwriter.Writer, t latencytable.Table) {
	var head, align string
	for _, p := range t.Percentiles {
		head += " " + rundir.PercentileName(p) + " |"
		align += "---:|"
	}
	ew.Printf("| latency (ms) | n | mean |%s\n|---|---:|---:|%s\n", head, align)
	for _, r := range t.Rows {
		ew.Printf("| %s | %s |\n", r.Name, clientCols(r.Client, " | "))
		if !t.NoServer {
			ew.Printf("| %s engine | %s |\n", r.Name, serverCols(r.Server, len(t.Percentiles), " | "))
		}
	}
	ew.Printf("\n")
	for _, l := range latencyLegend(t) {
		ew.Printf("- %s\n", mdText(l))
	}
}

// mdText makes text safe inside a Markdown table cell.
func mdText(s string) string {
	s = strings.ReplaceAll(oneLine(s, 1000), "|", `\|`)
	return strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(s)
}

// RequestsCSVHeader is the header of WriteRequestsCSV's output.
var RequestsCSVHeader = []string{"id", "index", "phase", "intended_s", "sent_s", "ttft_s", "tpot_s", "e2e_s",
	"prompt_tokens", "output_tokens", "chunks", "status", "error_class", "error",
	"ttfc_s", "cached_tokens", "reasoning_tokens", "token_source", "finish_reason", "no_done", "retries", "reused"}

// WriteRequestsCSV writes one line per request — its plan position, send
// times on the run clock, latencies in seconds (empty when undefined) and
// outcome — for spreadsheets and notebooks. Columns added later go at the
// end, so that scripts reading the first ones by position keep working:
// TTFC (first content, not reasoning or a tool call), the token details, where
// the output count came from, whether the stream ended without [DONE], and
// the connection's story (resends, kept-alive).
func WriteRequestsCSV(w io.Writer, records []client.Record) error {
	chunks := make([]chunkdigest.Request, len(records))
	for i := range records {
		chunks[i] = chunkdigest.Of(&records[i])
	}
	return WriteRequestsCSVDigested(w, records, chunks)
}

// WriteRequestsCSVDigested is WriteRequestsCSV for records read without
// their chunks: chunks[i] is what records[i] kept of them (Requests.Chunks).
func WriteRequestsCSVDigested(w io.Writer, records []client.Record, chunks []chunkdigest.Request) error {
	cw := csv.NewWriter(redact.PrintableWriter(w))
	if err := cw.Write(RequestsCSVHeader); err != nil {
		return err
	}
	sec := func(d float64) string { return strconv.FormatFloat(d, 'f', 6, 64) }
	for i := range records {
		r := &records[i]
		ttft, tpot := "", ""
		if d, ok := r.TTFT(); ok {
			ttft = sec(d.Seconds())
		}
		if d, ok := r.TPOT(); ok {
			tpot = sec(d.Seconds())
		}
		e2e, ttfc := "", ""
		if r.End > 0 {
			e2e = sec(r.E2E().Seconds())
		}
		if d, ok := r.TTFC(); ok {
			ttfc = sec(d.Seconds())
		}
		row := []string{r.ID, strconv.Itoa(r.Index), r.Phase, sec(r.Intended.Seconds()), sec(r.SentOnWire().Seconds()),
			ttft, tpot, e2e, strconv.Itoa(r.PromptTokens), strconv.Itoa(r.OutputTokens), strconv.Itoa(int(chunks[i].Chunks)),
			strconv.Itoa(r.Status), string(r.ErrorClass), redact.Text(r.Error),
			ttfc, strconv.Itoa(r.CachedTokens), strconv.Itoa(r.ReasoningTokens), string(r.TokenSource), r.FinishReason,
			strconv.FormatBool(r.NoDone), strconv.Itoa(r.Retries), strconv.FormatBool(r.Reused)}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("write requests csv: %w", err)
		}
	}
	cw.Flush()
	return cw.Error()
}

// renderGatesMarkdown puts the gates first: a CI job summary built from
// report.md says at once why the job failed.
func renderGatesMarkdown(ew *errwriter.Writer, g *GateVerdicts) {
	verdict := "**Gates passed**"
	switch {
	case g.Fail > 0 || g.Unevaluable > 0:
		verdict = "**Gates failed**"
	case g.Inconclusive > 0 || !g.Passed:
		verdict = "**Gates inconclusive**"
	}
	ew.Printf("%s: %s", verdict, g.Counts())
	if g.Baseline != "" {
		ew.Printf(" (baseline `%s`)", mdText(g.Baseline))
	}
	ew.Printf(".\n\n| | gate | observed | limit | why |\n|---|---|---:|---:|---|\n")
	for _, r := range g.Results {
		mark := map[string]string{"pass": "✅ pass", "fail": "❌ **fail**", "inconclusive": "❔ **inconclusive**", "error": "⚠️ **error**"}[r.Status]
		if mark == "" {
			mark = mdText(r.Status)
		}
		ew.Printf("| %s | `%s` | %s | %s | %s |\n", mark, mdCode(r.Gate), GateNumber(r.Observed, r.Unit, r.Status), GateNumber(r.Limit, r.Unit, ""), mdText(r.Reason))
	}
	ew.Printf("\n")
}

// mdCode is s for a code span inside a table cell: no backticks or line
// breaks, pipes escaped (GitHub's tables split on them even in code).
func mdCode(s string) string {
	s = strings.NewReplacer("`", "'", "\n", " ", "\r", " ", "|", "\\|").Replace(s)
	return redact.Printable(s)
}

// GateNumber shows a gate's value in its unit ("—" when it was not
// evaluated); every report shows gates' numbers this way.
func GateNumber(v float64, unit, status string) string {
	if status == "error" {
		return "—"
	}
	switch unit {
	case "s":
		return fmt.Sprintf("%.4g s", v)
	case "fraction":
		return fmt.Sprintf("%.2f%%", 100*v)
	case "per_s":
		return fmt.Sprintf("%.4g/s", v)
	}
	return fmt.Sprintf("%.4g", v)
}

// renderValidityMarkdown writes the verdict and, under it, each named state
// (docs/decisions/0029): invalid ones first as the problems, then warnings.
func renderValidityMarkdown(ew *errwriter.Writer, h Health) {
	switch {
	case h.Valid && len(h.States) == 0:
		ew.Printf("**Valid**: nothing made the numbers unrepresentative.\n\n")
		return
	case h.Valid:
		ew.Printf("**Valid**, with warnings:\n\n")
	default:
		ew.Printf("**Not valid**: %s.\n\n", mdText(strings.Join(h.Problems, "; ")))
	}
	for _, st := range h.States {
		ew.Printf("- `%s` (%s): %s.\n", st.Name, st.Severity, mdText(stateText(st)))
	}
	ew.Printf("\n")
}
