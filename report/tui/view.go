package tui

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/llmbench-org/llmbench/report/latencytable"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/live"
	"github.com/llmbench-org/llmbench/redact"
	"github.com/llmbench-org/llmbench/report/reconcile"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// Styles are full-colour; bubbletea's renderer downsamples them to what the
// terminal supports (none at all on an ASCII profile).
var (
	styleTitle = lipgloss.NewStyle().Bold(true)
	styleLabel = lipgloss.NewStyle().Faint(true)
	styleBad   = lipgloss.NewStyle().Foreground(lipgloss.Red)
	styleWarn  = lipgloss.NewStyle().Foreground(lipgloss.Yellow).Bold(true)
	styleSpark = lipgloss.NewStyle().Foreground(lipgloss.Cyan)
)

// Column widths of the window section: a label, then right-aligned values.
const (
	labelWidth = 18
	maxBar     = 40
)

// line is one row of the view; when the terminal is too short, the rows with
// the lowest keep go first (spacers are 0, the title and footer never go).
type line struct {
	text string
	keep int
}

// wideWidth is the width from which the panes stand in two columns.
const wideWidth = 120

// View draws on the alternate screen, so no frame ever reaches the
// scrollback (drawn inline, every key that changed the frame's height left
// a stale copy there); Run prints the last frame to the normal screen once
// the program has left it.
func (m model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	return v
}

// render lays the dashboard out for m.width × m.height: the header (title, progress, requests), then the
// panes — on a narrow terminal the latency table and the pane in focus, on a
// wide one every pane in two columns — and the footer. Every row is cut to
// the width, and rows are dropped by priority until they fit.
func (m model) render() string {
	p := m.last
	var rows []line
	add := func(keep int, s string) { rows = append(rows, line{s, keep}) }

	add(10, m.titleRow())
	add(3, label("run")+clean(orDash(m.header.RunDir)))
	add(9, m.progressRow())
	add(9, label("requests")+requestsRow(p))
	if s := streamsRow(p); s != "" {
		add(5, label("streams")+s)
	}
	if s := sessionsRow(p); s != "" { // sessions.go
		add(5, label("sessions")+s)
	}
	if s := imagesRow(p); s != "" {
		add(4, label("images")+s)
	}
	if len(p.Errors) > 0 {
		add(6, label("errors")+styleBad.Render(errorClasses(p.Errors)))
	}
	if o := p.Outage.Line(p.Elapsed); o != "" {
		add(8, label("outage")+styleBad.Render(o))
	}
	if s := p.SilentLine(); s != "" {
		add(7, label("waiting")+styleBad.Render(s))
	}
	if w := p.Client.Warning(); w != "" {
		add(8, label("client")+styleBad.Render(w))
	}
	add(0, "")

	switch {
	case m.help:
		rows = append(rows, m.helpRows()...)
	case m.ended:
		rows = append(rows, m.doneRows()...)
	case m.width >= wideWidth:
		rows = append(rows, m.wideRows()...)
	default:
		rows = append(rows, m.latencyRows(m.height >= tallHeight)...)
		add(0, "")
		add(6, label("engine")+serverGauges(p))
		add(6, label("findings")+m.findingsSummary())
		add(0, "")
		add(4, m.tabs())
		rows = append(rows, m.paneRows(m.pane, m.width, 1)...)
	}
	add(0, "")
	add(10, m.footer())
	return fit(rows, m.width, m.height)
}

// tallHeight is the height from which a narrow terminal has room for the
// engine's bucket rows.
const tallHeight = 40

// doneRows are the last frame's body, the one left in the scrollback: the
// latency table, the engine, and every finding at full width (the keys no
// longer act, so there are no panes to switch).
func (m model) doneRows() []line {
	rows := m.latencyRows(true)
	rows = append(rows, line{"", 0}, line{label("engine") + serverGauges(m.last), 6})
	rows = append(rows, line{"", 0}, m.paneTitle(paneFindings))
	return append(rows, m.findingsRows(true)...)
}

func label(s string) string { return styleLabel.Render(fmt.Sprintf("%-11s", s)) }

func requestsRow(p live.Progress) string {
	failed := fmt.Sprint(p.Failed)
	if p.Failed > 0 {
		failed = styleBad.Render(failed)
	}
	if p.Canceled > 0 {
		failed += fmt.Sprintf(" · canceled %d", p.Canceled)
	}
	return fmt.Sprintf("sent %d · in flight %d · ok %d · failed ", p.Sent, p.InFlight, p.OK) + failed
}

func streamsRow(p live.Progress) string {
	streams := poolingNotes(p) // pooling.go
	if p.NotStreamed > 0 {
		streams = append(streams, fmt.Sprintf("%d not streamed (no TTFT or ITL)", p.NotStreamed))
	}
	if p.StreamsWithoutDone > 0 {
		streams = append(streams, fmt.Sprintf("%d ended without [DONE]", p.StreamsWithoutDone))
	}
	return strings.Join(streams, " · ")
}

// wideRows use a wide terminal's width and height: the latency table
// beside the engine and the phases, then the load charts at full width and
// as tall as the rows left over allow, then the findings at full width.
func (m model) wideRows() []line {
	lw := labelWidth + whoWidth + cellWidth*(len(m.percentiles())+2)
	rw := max(0, m.width-3-lw)
	left := m.latencyRows(true)
	var right []line
	for i, pn := range []pane{paneEngine, panePhases} {
		if i > 0 {
			right = append(right, line{"", 0})
		}
		right = append(right, m.paneTitle(pn))
		right = append(right, m.paneRows(pn, rw, 1)...)
	}
	n := max(len(left), len(right))
	out := make([]line, 0, n)
	sep := styleLabel.Render(" │ ")
	for i := range n {
		var l, r line
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		out = append(out, line{pad(l.text, lw) + sep + r.text, max(l.keep, r.keep)})
	}
	findings := append([]line{{"", 0}, m.paneTitle(paneFindings)}, m.findingsRows(true)...)
	// The header takes about 7 rows and the footer 2: what is left after
	// the table, the findings and the one-row charts goes to the two charts
	// of requests in flight, half each.
	flat := m.paneRows(paneLoad, m.width, 1)
	spare := m.height - 9 - len(out) - 2 - len(flat) - len(findings)
	height := max(1, min(8, 1+spare/2))
	out = append(out, line{"", 0}, m.paneTitle(paneLoad))
	out = append(out, m.paneRows(paneLoad, m.width, height)...)
	return append(out, findings...)
}

// percentiles are the latency table's columns.
func (m model) percentiles() []float64 {
	if len(m.last.Percentiles) == 0 {
		return rundir.DefaultPercentiles
	}
	return m.last.Percentiles
}

// padLeft and padRight fill s with spaces to w cells (styles do not count).
func padLeft(s string, w int) string  { return strings.Repeat(" ", max(0, w-ansi.StringWidth(s))) + s }
func padRight(s string, w int) string { return s + strings.Repeat(" ", max(0, w-ansi.StringWidth(s))) }

// pad cuts or fills s to exactly w cells.
func pad(s string, w int) string {
	s = ansi.Truncate(s, w, "…")
	return s + strings.Repeat(" ", max(0, w-ansi.StringWidth(s)))
}

// tabs names the panes, the one in focus in brackets, with the keys.
func (m model) tabs() string {
	parts := make([]string, paneCount)
	for pn := range paneCount {
		name := fmt.Sprintf("%d %s", pn+1, pn)
		if pn == m.pane {
			parts[pn] = styleTitle.Render("[" + name + "]")
		} else {
			parts[pn] = styleLabel.Render(" " + name + " ")
		}
	}
	return strings.Join(parts, " ") + styleLabel.Render("   tab: next pane · ?: keys")
}

// paneTitle heads a pane in the wide layout; ▸ marks the one in focus.
func (m model) paneTitle(pn pane) line {
	mark := "  "
	if pn == m.pane {
		mark = "▸ "
	}
	return line{styleTitle.Render(fmt.Sprintf("%s%d %s", mark, pn+1, pn)), 5}
}

// paneRows draws pane pn in width cells; chartHeight is the rows each
// in-flight chart of the load pane gets.
func (m model) paneRows(pn pane, width, chartHeight int) []line {
	switch pn {
	case paneFindings:
		return m.findingsRows(chartHeight > 1 || m.width >= wideWidth)
	case panePhases:
		return m.phaseRows()
	case paneEngine:
		return m.engineRows()
	}
	return m.loadRows(width, chartHeight)
}

// latencyRows put the same statistics of the client and of the engine on
// two rows, one above the other, for TTFT, ITL and E2E: the mean, the run's
// percentiles and the count. The engine's come from its histograms' growth
// over the window, its quantiles interpolated inside a bucket; with
// buckets (a wide or tall terminal) a third row names each bucket's bounds.
func (m model) latencyRows(buckets bool) []line {
	p := m.last
	if len(p.Percentiles) == 0 { // no progress yet
		p.Percentiles = rundir.DefaultPercentiles
	}
	head := fmt.Sprintf("%*s", whoWidth, "") + padLeft("mean", cellWidth) + quantileHeader(p.Percentiles) + padLeft("n", cellWidth)
	rows := []line{{styleTitle.Render(fmt.Sprintf("%-*s", labelWidth, "window "+seconds(p.Window))) + styleLabel.Render(head), 7}}
	add := func(name, engineName string, q live.Quantiles, e live.EngineLatency, keep int) {
		rows = append(rows,
			line{quantileRow(name, "client", p.Percentiles, q), keep + 1},
			line{engineRow(engineName, p.Percentiles, e), keep})
		if buckets && e.Has {
			rows = append(rows, line{styleLabel.Render(bucketRow(e)), 1})
		}
	}
	add("TTFT", "", p.TTFT, p.Engine.TTFT, 7)
	if p.TTFCDiffers {
		rows = append(rows, line{quantileRow("TTFC (content)", "client", p.Percentiles, p.TTFC), 6})
	}
	add("ITL per-req mean", "  per token", p.ITLMean, p.Engine.ITL, 6)
	add("E2E", "", p.E2E, p.Engine.E2E, 6)
	rows = append(rows, line{fmt.Sprintf("  %-*s", labelWidth+whoWidth-2, "max schedule lag") + padLeft(latency(p.ScheduleLagMax), cellWidth), 3})
	if marked(p) {
		rows = append(rows, line{styleLabel.Render("  " + latencytable.TooFewLegend), 2})
	}
	return rows
}

// marked reports whether a quantile the latency rows show carries the
// too-few mark: the legend is shown only then.
func marked(p live.Progress) bool {
	shown := []live.Quantiles{p.TTFT, p.ITLMean, p.E2E}
	if p.TTFCDiffers {
		shown = append(shown, p.TTFC)
	}
	for _, q := range shown {
		for i, pc := range p.Percentiles {
			if i < len(q.Values) && tooFewMark(pc, q.N) != "" {
				return true
			}
		}
	}
	return false
}

// Columns of the latency table: the metric, who measured it, then one
// right-aligned cell per statistic (two spaces of each cell are its gap, so
// a bucket range of up to nine characters still stands apart).
const (
	whoWidth  = 8
	cellWidth = 10
)

// engineRow is the engine's side of a latency: "—" in every cell when it
// has no such histogram, or the window has no two scrapes of it yet.
func engineRow(name string, percentiles []float64, e live.EngineLatency) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s %-*s", labelWidth, name, whoWidth-1, "engine")
	if !e.Has {
		for range len(percentiles) + 2 {
			b.WriteString(padLeft("—", cellWidth))
		}
		return b.String()
	}
	b.WriteString(padLeft(latency(e.Mean), cellWidth))
	for i := range percentiles {
		b.WriteString(padLeft(estimateCell(e.Quantiles, i), cellWidth))
	}
	b.WriteString(padLeft(number(math.Round(e.N)), cellWidth))
	return b.String()
}

// estimateCell is an engine quantile: its interpolated value, or, above the
// top finite bucket, ">" that bound (all the histogram knows).
func estimateCell(qs []scrape.Estimate, i int) string {
	if i >= len(qs) || !qs[i].OK() {
		return "—"
	}
	q := qs[i]
	if q.AboveTop {
		return ">" + latency(sec(q.Lower))
	}
	return latency(sec(q.Value))
}

// bucketRow names the bucket each engine quantile was interpolated in.
func bucketRow(e live.EngineLatency) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s %-*s%*s", labelWidth, "", whoWidth-1, "bucket", cellWidth, "")
	for _, q := range e.Quantiles {
		cell := "—"
		switch {
		case !q.OK():
		case q.AboveTop:
			cell = "top"
		default:
			cell = bucketRange(q.Lower, q.Upper)
		}
		b.WriteString(padLeft(cell, cellWidth))
	}
	return b.String()
}

// bucketRange prints a bucket's bounds in one unit: "50–100ms", "1–2.5s".
func bucketRange(lo, hi float64) string {
	if hi < 1 {
		return fmt.Sprintf("%g–%gms", round3(lo*1000), round3(hi*1000))
	}
	return fmt.Sprintf("%g–%gs", round3(lo), round3(hi))
}

// round3 keeps three significant digits, so float noise in a bound
// (0.1*1000 = 100.00000000000001) never reaches the screen.
func round3(v float64) float64 {
	if v == 0 {
		return 0
	}
	scale := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*scale) / scale
}

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// loadRows are the rates, the client's requests in flight against the
// engine's running + waiting on one scale, and the KV cache usage, each with
// its history at one point a second.
func (m model) loadRows(width, height int) []line {
	p := m.last
	const lw, vw = 18, 8
	spark := max(0, width-lw-vw-3)
	row := func(keep int, name, value string, chart string) line {
		return line{"  " + padRight(name, lw-2) + padLeft(value, vw) + "   " + styleSpark.Render(chart), keep}
	}
	rows := []line{
		row(8, "requests/s", fmt.Sprintf("%.1f", p.RequestsPerSec), sparkline(m.reqRate.latest(spark))),
		row(7, "output tokens/s", fmt.Sprintf("%.0f", p.OutputTokensPerSec), sparkline(m.tokRate.latest(spark))),
	}
	if p.HasGoodput {
		share := fmt.Sprintf("%.0f%% of finished requests met the SLO", 100*p.GoodFraction)
		if p.Unmeasured > 0 {
			share += fmt.Sprintf(" (%d unmeasured)", p.Unmeasured)
		}
		if p.GoodFraction < 0.9 {
			share = styleBad.Render(share)
		}
		rows = append(rows, line{"  " + padRight("goodput/s", lw-2) + padLeft(fmt.Sprintf("%.1f", p.GoodputPerSec), vw) + " " + share, 6})
	}

	// In flight against running + waiting: one scale, so a gap between the
	// two (requests queued outside the engine, or foreign traffic) shows.
	cl, en := m.inFlight.latest(spark), m.engineBusy.latest(spark)
	top := 0.0
	for _, v := range append(slices.Clone(cl), en...) {
		if !math.IsNaN(v) {
			top = max(top, v)
		}
	}
	busy := styleLabel.Render("—")
	switch {
	case p.ScrapeOK > 0 && p.Server.HasRunning && p.Server.HasWait:
		busy = number(p.Server.Running) + " + " + number(p.Server.Waiting)
	case p.ScrapeOK > 0 && p.Server.HasRunning:
		busy = number(p.Server.Running) + " + ?"
	case p.ScrapeOK > 0:
		busy = styleLabel.Render("absent")
	}
	scale := strings.Repeat(" ", lw+vw+3) + styleLabel.Render("client and engine on one scale, top "+number(top))
	if height > 1 {
		rows = append(rows, line{scale, 2})
	}
	for i, c := range chart(cl, top, height) {
		name, value := "", ""
		if i == height-1 {
			name, value = "client in flight", fmt.Sprint(p.InFlight)
		}
		rows = append(rows, row(6, name, value, c))
	}
	for i, c := range chart(en, top, height) {
		name, value := "", ""
		if i == height-1 {
			name, value = "engine run+wait", busy
		}
		rows = append(rows, row(6, name, value, c))
	}
	kv := styleLabel.Render("absent")
	if p.ScrapeOK == 0 {
		kv = styleLabel.Render("—")
	} else if p.Server.HasKV {
		kv = fmt.Sprintf("%.1f%%", 100*p.Server.KVUsage)
	}
	rows = append(rows, row(5, "KV cache", kv, chart(m.kv.latest(spark), 1, 1)[0]))
	if g := p.GPU; g.Has {
		rows = append(rows, line{"  " + padRight("GPU util", lw-2) + padLeft(gpuValue(g), vw) + "   " + styleLabel.Render(gpuDetail(g)), 5})
	}
	return rows
}

// chart draws points as a block chart of the given height scaled from zero
// to top, oldest first; a NaN point (not known) is blank.
func chart(points []float64, top float64, height int) []string {
	height = max(1, height)
	rows := make([]strings.Builder, height)
	levels := len(sparkBlocks) * height
	for _, v := range points {
		eighths := 1 // the floor, as the sparkline's
		switch {
		case math.IsNaN(v):
			eighths = 0
		case top > 0 && v > 0:
			eighths = max(1, int(math.Round(min(v, top)/top*float64(levels))))
		}
		for r := range height {
			cell := eighths - (height-1-r)*len(sparkBlocks) // eighths in row r (0 = top)
			switch {
			case cell <= 0:
				rows[r].WriteRune(' ')
			case cell >= len(sparkBlocks):
				rows[r].WriteRune(sparkBlocks[len(sparkBlocks)-1])
			default:
				rows[r].WriteRune(sparkBlocks[cell-1])
			}
		}
	}
	out := make([]string, height)
	for i := range rows {
		out[i] = rows[i].String()
	}
	return out
}

// findingsSummary is the one-row sum of the live reconciliation; a warning
// reported for less than confirmAfter is counted as new, not raised.
func (m model) findingsSummary() string {
	raised, fresh := m.splitFindings()
	s := findingsRow(raised)
	if fresh > 0 { // first, as the verdict after it may be cut
		s = styleLabel.Render(fmt.Sprintf("%d new (unconfirmed) · ", fresh)) + s
	}
	return s
}

func (m model) splitFindings() (raised []reconcile.Finding, fresh int) {
	for _, f := range m.last.Findings {
		if f.Severity != reconcile.Info && !m.warns.confirmed(f.ID, m.last.Elapsed) {
			fresh++
			continue
		}
		raised = append(raised, f)
	}
	return raised, fresh
}

// findingsRows list the live findings, failures then warnings (those seen
// only for a moment after them, marked new), then the checks that agree.
func (m model) findingsRows(wide bool) []line {
	fs := slices.Clone(m.last.Findings)
	if len(fs) == 0 {
		return []line{{"  " + styleLabel.Render("none yet: the live checks need two scrapes in the window"), 4}}
	}
	rank := func(f reconcile.Finding) int {
		switch {
		case f.Severity == reconcile.Fail:
			return 0
		case f.Severity == reconcile.Info:
			return 3
		case m.warns.confirmed(f.ID, m.last.Elapsed):
			return 1
		}
		return 2
	}
	slices.SortStableFunc(fs, func(a, b reconcile.Finding) int { return cmp.Compare(rank(a), rank(b)) })
	rows := []line{{"  " + m.findingsSummary(), 5}}
	for i, f := range fs {
		tag := strings.ToUpper(string(f.Severity))
		switch rank(f) {
		case 0:
			tag = styleBad.Render(fmt.Sprintf("%-4s", tag))
		case 1:
			tag = styleWarn.Render(fmt.Sprintf("%-4s", tag))
		case 2:
			tag = styleLabel.Render("new ")
		default:
			tag = styleLabel.Render(fmt.Sprintf("%-4s", tag))
		}
		keep := 4
		if i > 2 {
			keep = 2
		}
		if rank(f) == 3 && !wide {
			keep = 1
		}
		rows = append(rows, line{"  " + tag + " " + clean(f.ID) + ": " + clean(f.Verdict), keep})
	}
	return rows
}

// phaseRows list the plan's phases, the one being driven marked.
func (m model) phaseRows() []line {
	phases := m.header.Phases
	cur := slices.Index(phases, m.last.Phase)
	if len(phases) == 0 || cur < 0 && m.last.Phase != "" {
		phases = []string{orDash(m.last.Phase)}
		cur = 0
		if m.last.Phase == "" {
			cur = -1
		}
	}
	rows := make([]line, len(phases))
	for i, ph := range phases {
		switch {
		case i == cur && m.ended:
			rows[i] = line{styleLabel.Render("  ✓ " + clean(ph)), 4}
		case i == cur:
			rows[i] = line{styleTitle.Render("  ▸ "+clean(ph)) + styleLabel.Render("  running"), 4}
		case i < cur:
			rows[i] = line{styleLabel.Render("  ✓ " + clean(ph)), 2}
		default:
			rows[i] = line{"    " + clean(ph), 2}
		}
	}
	return rows
}

// engineRows show the engine's gauges and the scrapes behind them.
func (m model) engineRows() []line {
	p := m.last
	return []line{
		{"  " + serverGauges(p), 4},
		{"  " + styleLabel.Render("scrapes ") + scrapeHealth(p), 4},
	}
}

// helpRows replace the panes while ? is on.
func (m model) helpRows() []line {
	keys := [][2]string{
		{"?", "show or hide this help (esc hides it)"},
		{"tab  →  l", "next pane"},
		{"shift+tab  ←  h", "previous pane"},
		{"1 2 3 4", "load · findings · phases · engine"},
		{"q  Ctrl-C", "first: stop arrivals, let requests in flight finish"},
		{"", "again: abort requests in flight (what was measured is kept)"},
	}
	rows := []line{{styleTitle.Render("keys"), 8}}
	for _, k := range keys {
		rows = append(rows, line{fmt.Sprintf("  %-18s", k[0]) + k[1], 7})
	}
	rows = append(rows, line{"", 0}, line{styleLabel.Render("Only q and Ctrl-C act on the run; the other keys change the view."), 3})
	return rows
}

func (m model) titleRow() string {
	left := styleTitle.Render("llmbench · " + clean(orDash(m.header.Scenario)))
	right := styleLabel.Render("engine ") + clean(orDash(m.header.Engine))
	gap := m.width - lipgloss.Width(left) - lipgloss.Width(right)
	return left + strings.Repeat(" ", max(2, gap)) + right
}

// draining says why arrivals have stopped, or "" while they go on: the
// planned duration is over, every planned request is sent, or the user
// pressed q or Ctrl-C. The progress row then shows the drain instead of a
// bar running past its end.
func (m model) draining() string {
	p := m.last
	switch {
	case m.interrupts > 0:
		return "you stopped arrivals"
	case m.header.Planned > 0 && p.Elapsed >= m.header.Planned:
		return fmt.Sprintf("plan of %s done", clock(m.header.Planned))
	case m.header.PlannedRequests > 0 && p.Sent >= m.header.PlannedRequests:
		return fmt.Sprintf("all %d sent", m.header.PlannedRequests)
	}
	return ""
}

// progressRow shows where the run is: the phase, then progress by time (a
// planned duration) or by request count (planned requests) with a bar and an
// ETA; once arrivals stop, the drain and what is still in flight.
func (m model) progressRow() string {
	p := m.last
	phase := clean(p.Phase)
	switch {
	case m.ended:
		phase = "done"
	case phase == "":
		phase = "starting"
	}
	of := ""
	if n := len(m.header.Phases); n > 1 {
		if i := slices.Index(m.header.Phases, p.Phase); i >= 0 {
			of = fmt.Sprintf(" (%d of %d)", i+1, n)
			if m.ended {
				of = fmt.Sprintf(" (last phase %s, %d of %d)", clean(p.Phase), i+1, n)
			}
		}
	}
	row := styleLabel.Render("phase ") + styleTitle.Render(phase) + styleLabel.Render(of+"   elapsed ") + clock(p.Elapsed)
	if why := m.draining(); why != "" {
		drain := styleWarn.Render("draining") + fmt.Sprintf(" %d in flight", p.InFlight) + styleLabel.Render(" · "+why)
		if m.ended {
			drain = styleLabel.Render("arrivals stopped: " + why)
		}
		return row + "   " + drain
	}
	if m.ended { // no bar or ETA: nothing is left to wait for
		if m.header.Planned > 0 {
			row += " / " + clock(m.header.Planned)
		}
		return row
	}
	var frac float64
	var eta time.Duration
	switch {
	case m.header.Planned > 0:
		row += " / " + clock(m.header.Planned)
		frac = p.Elapsed.Seconds() / m.header.Planned.Seconds()
		eta = m.header.Planned - p.Elapsed
	case m.header.PlannedRequests > 0:
		row += styleLabel.Render(" · sent ") + fmt.Sprintf("%d / %d", p.Sent, m.header.PlannedRequests)
		frac = float64(p.Sent) / float64(m.header.PlannedRequests)
		eta = -1
		if rate := m.sendRate(); rate > 0 {
			eta = time.Duration(float64(m.header.PlannedRequests-p.Sent) / rate * float64(time.Second))
		}
	default:
		return row
	}
	frac = min(1, max(0, frac))
	pct := fmt.Sprintf(" %3.0f%%", 100*frac)
	etaText := styleLabel.Render("  ETA ") + "?"
	if eta >= 0 {
		etaText = styleLabel.Render("  ETA ") + clock(eta+time.Second-1)
	}
	barWidth := min(maxBar, m.width-lipgloss.Width(row)-2-len(pct)-lipgloss.Width(etaText))
	if barWidth < 5 {
		return row + pct + etaText
	}
	filled := int(math.Round(frac * float64(barWidth)))
	return row + "  " + strings.Repeat("█", filled) + styleLabel.Render(strings.Repeat("░", barWidth-filled)) + pct + etaText
}

// sendRate is requests sent per second over the last ten seconds of
// samples; 0 when unknown.
func (m model) sendRate() float64 {
	pts := m.sent.latest(11)
	if len(pts) < 2 {
		return 0
	}
	a, b := pts[0], pts[len(pts)-1]
	if b.at <= a.at {
		return 0
	}
	return float64(b.sent-a.sent) / (b.at - a.at).Seconds()
}

// doneLine is the last frame's footer: the run is over, and where its
// results are.
func (m model) doneLine() string {
	if m.header.RunDir == "" {
		return styleTitle.Render("run done")
	}
	return styleTitle.Render("run done") + styleLabel.Render(" · report ") + clean(filepath.Join(m.header.RunDir, rundir.HTMLFile))
}

func (m model) footer() string {
	switch {
	case m.ended:
		return m.doneLine()
	case m.interrupts == 1:
		return styleWarn.Render("draining…") + fmt.Sprintf(" %d in flight · ", m.last.InFlight) +
			styleLabel.Render("Ctrl-C or q again: abort")
	case m.interrupts > 1:
		return styleBad.Render("aborting…")
	}
	return styleLabel.Render("Ctrl-C or q: stop arrivals and drain · again: abort · ?: keys · tab: panes")
}

// fit cuts each row to width and drops the least important rows until the
// rest fit height; among equals the lowest row goes first.
func fit(rows []line, width, height int) string {
	for len(rows) > max(1, height) {
		drop := len(rows) - 1
		for i := len(rows) - 1; i >= 0; i-- {
			if rows[i].keep < rows[drop].keep {
				drop = i
			}
		}
		rows = slices.Delete(rows, drop, drop+1)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = strings.TrimRight(ansi.Truncate(r.text, width, "…"), " ")
	}
	return strings.Join(out, "\n")
}

// quantileHeader names the run's percentiles (the scenario's
// report.percentiles, as in the final report), a column each.
func quantileHeader(percentiles []float64) string {
	var b strings.Builder
	for _, p := range percentiles {
		b.WriteString(padLeft(rundir.PercentileName(p), cellWidth))
	}
	return b.String()
}

// quantileRow is the client's side of a latency: mean, quantiles, count.
func quantileRow(name, who string, percentiles []float64, q live.Quantiles) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %-*s %-*s", labelWidth-2, name, whoWidth-1, who)
	mean := "—"
	if q.N > 0 {
		mean = latency(q.Mean)
	}
	b.WriteString(padLeft(mean, cellWidth))
	for i, pc := range percentiles {
		v := "—"
		if i < len(q.Values) {
			v = latency(q.Values[i]) + tooFewMark(pc, q.N)
		}
		b.WriteString(padLeft(v, cellWidth))
	}
	b.WriteString(padLeft(fmt.Sprint(q.N), cellWidth))
	return b.String()
}

// serverGauges shows the engine's latest gauges; a concept the engine does
// not expose says so instead of showing a zero it never reported.
func serverGauges(p live.Progress) string {
	if p.ScrapeOK == 0 {
		return styleLabel.Render("no successful scrape yet")
	}
	s := p.Server
	gauge := func(name string, has bool, v string) string {
		if !has {
			return name + " " + styleLabel.Render("not exposed")
		}
		return name + " " + v
	}
	parts := []string{
		gauge("running", s.HasRunning, number(s.Running)),
		gauge("waiting", s.HasWait, number(s.Waiting)),
		gauge("KV cache", s.HasKV, fmt.Sprintf("%.1f%%", 100*s.KVUsage)),
	}
	if age := p.Elapsed - s.At; age >= 0 {
		parts = append(parts, styleLabel.Render(fmt.Sprintf("%.0f s ago", age.Seconds())))
	}
	return strings.Join(parts, " · ")
}

func scrapeHealth(p live.Progress) string {
	if p.ScrapeOK == 0 && p.ScrapeFailures == 0 {
		return styleLabel.Render("none yet")
	}
	failed := fmt.Sprint(p.ScrapeFailures)
	if p.ScrapeFailures > 0 {
		failed = styleBad.Render(failed)
	}
	s := fmt.Sprintf("ok %d · failed ", p.ScrapeOK) + failed
	if p.LastScrapeErr != "" {
		s += " · last error: " + styleBad.Render(clean(p.LastScrapeErr))
	}
	return s
}

// errorClasses lists failure classes, most frequent first.
func errorClasses(errs map[client.ErrorClass]int) string {
	classes := make([]client.ErrorClass, 0, len(errs))
	for c := range errs {
		classes = append(classes, c)
	}
	slices.SortFunc(classes, func(a, b client.ErrorClass) int {
		return cmp.Or(cmp.Compare(errs[b], errs[a]), cmp.Compare(a, b))
	})
	parts := make([]string, len(classes))
	for i, c := range classes {
		name := clean(string(c))
		if name == "" {
			name = "unclassified"
		}
		parts[i] = fmt.Sprintf("%s %d", name, errs[c])
	}
	return strings.Join(parts, " · ")
}

// sparkBlocks are the eight heights of a sparkline cell.
var sparkBlocks = []rune("▁▂▃▄▅▆▇█")

// sparkline scales points to the largest one shown; all-zero is a flat floor.
func sparkline(points []float64) string {
	top := 0.0
	for _, v := range points {
		top = max(top, v)
	}
	var b strings.Builder
	for _, v := range points {
		i := 0
		if top > 0 && v > 0 {
			i = int(math.Round(v / top * float64(len(sparkBlocks)-1)))
		}
		b.WriteRune(sparkBlocks[max(0, min(i, len(sparkBlocks)-1))])
	}
	return b.String()
}

// latency prints three significant digits in the unit a reader expects.
func latency(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", d.Nanoseconds())
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	case d < 100*time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%.0fms", float64(d)/float64(time.Millisecond))
	case d < 10*time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d < 100*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// clock prints run time as mm:ss, or h:mm:ss past an hour.
func clock(d time.Duration) string {
	s := int64(max(0, d) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%02d:%02d", s/60, s%60)
}

// seconds prints a window span the way the docs name it ("10 s").
func seconds(d time.Duration) string {
	if d <= 0 {
		return "—"
	}
	return fmt.Sprintf("%s s", strings.TrimSuffix(fmt.Sprintf("%.1f", d.Seconds()), ".0"))
}

// number prints a gauge: whole values without decimals.
func number(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// clean makes outside text (a scrape error, a path, a scenario name) safe for
// one terminal row: no secret (the redaction policy every sink applies), no
// control bytes, so no escape sequences and no breaks.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return ' '
		case !unicode.IsPrint(r):
			return '?'
		}
		return r
	}, redact.Text(s))
}

// findingsRow sums up the live reconciliation: the first warning or failure
// in words, or that every check agrees.
func findingsRow(fs []reconcile.Finding) string {
	if len(fs) == 0 {
		return styleLabel.Render("none yet")
	}
	worst, n := reconcile.Info, 0
	var first reconcile.Finding
	for _, f := range fs {
		if f.Severity == reconcile.Info {
			continue
		}
		n++
		if worst == reconcile.Info || (f.Severity == reconcile.Fail && worst != reconcile.Fail) {
			worst, first = f.Severity, f
		}
	}
	if n == 0 {
		return fmt.Sprintf("%d checks, client and engine agree", len(fs))
	}
	text := fmt.Sprintf("%d of %d checks: %s %s", n, len(fs), strings.ToUpper(string(worst)), clean(first.Verdict))
	return styleBad.Render(text)
}
