package tui

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/reconcile"
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
	valueWidth = 8
	maxBar     = 40
)

// line is one row of the view; when the terminal is too short, the rows with
// the lowest keep go first (spacers are 0, the title and footer never go).
type line struct {
	text string
	keep int
}

// View ends the frame with a newline: on exit bubbletea erases the frame's
// last row, which must then be an empty one, or the footer of the last frame
// would vanish from the scrollback.
func (m model) View() tea.View {
	return tea.NewView(m.render() + "\n")
}

// render lays the view out for m.width × m.height, one row kept free for the
// trailing newline: every row is cut to the width, and rows are dropped by
// priority until they fit.
func (m model) render() string {
	p := m.last
	var rows []line
	add := func(keep int, s string) { rows = append(rows, line{s, keep}) }
	label := func(s string) string { return styleLabel.Render(fmt.Sprintf("%-11s", s)) }

	add(10, m.titleRow())
	add(5, label("run")+clean(orDash(m.header.RunDir)))
	add(9, m.phaseRow())
	add(0, "")

	failed := fmt.Sprint(p.Failed)
	if p.Failed > 0 {
		failed = styleBad.Render(failed)
	}
	if p.Canceled > 0 {
		failed += fmt.Sprintf(" · canceled %d", p.Canceled)
	}
	add(9, label("requests")+fmt.Sprintf("sent %d · in flight %d · ok %d · failed ", p.Sent, p.InFlight, p.OK)+failed)
	var streams []string
	if p.NotStreamed > 0 {
		streams = append(streams, fmt.Sprintf("%d not streamed (no TTFT or ITL)", p.NotStreamed))
	}
	if p.StreamsWithoutDone > 0 {
		streams = append(streams, fmt.Sprintf("%d ended without [DONE]", p.StreamsWithoutDone))
	}
	if len(streams) > 0 {
		add(5, label("streams")+strings.Join(streams, " · "))
	}
	if len(p.Errors) > 0 {
		add(6, label("errors")+styleBad.Render(errorClasses(p.Errors)))
	}
	add(0, "")

	sparkWidth := m.width - labelWidth - valueWidth - 3
	add(7, styleTitle.Render(fmt.Sprintf("%-*s", labelWidth, "window "+seconds(p.Window)))+
		styleLabel.Render(fmt.Sprintf("%*s   %s", valueWidth, "now", "history, 1 point/s")))
	add(8, fmt.Sprintf("  %-*s%*.1f   ", labelWidth-2, "requests/s", valueWidth, p.RequestsPerSec)+
		styleSpark.Render(sparkline(m.reqRate.latest(sparkWidth))))
	add(7, fmt.Sprintf("  %-*s%*.0f   ", labelWidth-2, "output tokens/s", valueWidth, p.OutputTokensPerSec)+
		styleSpark.Render(sparkline(m.tokRate.latest(sparkWidth))))
	if p.HasGoodput {
		share := fmt.Sprintf("%.0f%% of finished requests met the SLO", 100*p.GoodFraction)
		if p.Unmeasured > 0 {
			share += fmt.Sprintf(" (%d unmeasured)", p.Unmeasured)
		}
		if p.GoodFraction < 0.9 {
			share = styleBad.Render(share)
		}
		add(7, fmt.Sprintf("  %-*s%*.1f   ", labelWidth-2, "goodput/s", valueWidth, p.GoodputPerSec)+share)
	}
	add(7, styleLabel.Render(fmt.Sprintf("  %-*s%*s  %*s  %*s  %7s", labelWidth-2, "latency",
		valueWidth, "p50", valueWidth, "p90", valueWidth, "p99", "n")))
	add(8, quantileRow("TTFT", p.TTFT))
	if p.TTFCDiffers {
		add(6, quantileRow("TTFC (content)", p.TTFC))
	}
	add(6, quantileRow("ITL per-req mean", p.ITL))
	add(7, quantileRow("E2E", p.E2E))
	add(5, fmt.Sprintf("  %-*s%*s", labelWidth-2, "max schedule lag", valueWidth, latency(p.ScheduleLagMax)))
	add(0, "")

	add(6, label("engine")+serverGauges(p))
	add(5, label("scrapes")+scrapeHealth(p))
	add(6, label("findings")+findingsRow(p.Findings))
	add(0, "")
	add(10, m.footer())

	return fit(rows, m.width, m.height-1)
}

func (m model) titleRow() string {
	left := styleTitle.Render("llmbench · " + clean(orDash(m.header.Scenario)))
	right := styleLabel.Render("engine ") + clean(orDash(m.header.Engine))
	gap := m.width - lipgloss.Width(left) - lipgloss.Width(right)
	return left + strings.Repeat(" ", max(2, gap)) + right
}

// phaseRow shows where the run is; with a planned duration it adds a bar,
// which stays full while the run drains past its plan.
func (m model) phaseRow() string {
	p := m.last
	phase := clean(p.Phase)
	if phase == "" {
		phase = "starting"
	}
	of := ""
	if n := len(m.header.Phases); n > 1 {
		if i := slices.Index(m.header.Phases, p.Phase); i >= 0 {
			of = fmt.Sprintf(" (%d of %d)", i+1, n)
		}
	}
	row := styleLabel.Render("phase ") + styleTitle.Render(phase) + styleLabel.Render(of+"   elapsed ") + clock(p.Elapsed)
	if m.header.Planned <= 0 {
		return row
	}
	row += " / " + clock(m.header.Planned)
	frac := min(1, max(0, p.Elapsed.Seconds()/m.header.Planned.Seconds()))
	pct := fmt.Sprintf(" %3.0f%%", 100*frac)
	barWidth := min(maxBar, m.width-lipgloss.Width(row)-2-len(pct))
	if barWidth < 5 {
		return row + pct
	}
	filled := int(math.Round(frac * float64(barWidth)))
	return row + "  " + strings.Repeat("█", filled) + styleLabel.Render(strings.Repeat("░", barWidth-filled)) + pct
}

func (m model) footer() string {
	switch {
	case m.ended:
		return styleLabel.Render("live view closed")
	case m.interrupts == 1:
		return styleWarn.Render("draining…") + fmt.Sprintf(" %d in flight · ", m.last.InFlight) +
			styleLabel.Render("Ctrl-C again: abort")
	case m.interrupts > 1:
		return styleBad.Render("aborting…")
	}
	return styleLabel.Render("Ctrl-C: stop arrivals and drain · again: abort")
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

func quantileRow(name string, q report.Quantiles) string {
	p50, p90, p99 := "—", "—", "—"
	if q.N > 0 {
		p50, p90, p99 = latency(q.P50), latency(q.P90), latency(q.P99)
	}
	return fmt.Sprintf("  %-*s%*s  %*s  %*s  %7d", labelWidth-2, name, valueWidth, p50, valueWidth, p90, valueWidth, p99, q.N)
}

// serverGauges shows the engine's latest gauges; a concept the engine does
// not expose says so instead of showing a zero it never reported.
func serverGauges(p report.Progress) string {
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

func scrapeHealth(p report.Progress) string {
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
// one terminal row: no control bytes, so no escape sequences and no breaks.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return ' '
		case !unicode.IsPrint(r):
			return '?'
		}
		return r
	}, s)
}

// findingsRow sums up the live reconciliation: the first warning or failure
// in words, or that every check agrees.
func findingsRow(fs []report.Finding) string {
	if len(fs) == 0 {
		return styleLabel.Render("none yet")
	}
	worst, n := reconcile.Info, 0
	var first report.Finding
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
