package comparison

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/llmbench-org/llmbench/internal/errwriter"
	"github.com/llmbench-org/llmbench/redact"
)

// Renderer writes a comparison in one format.
type Renderer func(io.Writer, Comparison) error

// Renderers by --format name.
var Renderers = map[string]Renderer{"text": RenderText, "md": RenderMarkdown, "json": RenderJSON}

// RenderJSON writes the comparison in its documented JSON shape (Schema).
func RenderJSON(w io.Writer, c Comparison) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

func runLine(i int, r RunRef) string {
	line := fmt.Sprintf("run %d: %s (%s, seed %d, %.1f s measured; engine %s, %s, model %s)",
		i+1, r.ID, r.Scenario, r.Seed, r.Duration, orNone(r.Engine.Kind), orNone(r.Engine.Dialect), orNone(r.Engine.Model))
	switch {
	case !r.Valid:
		line += " NOT VALID"
	case len(r.States) > 0:
		line += " valid, with warnings"
	}
	if len(r.States) > 0 {
		line += ": " + strings.Join(r.States, ", ")
	}
	return line
}

func orNone(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func phaseTitle(c Comparison, a Against, p PhasePair) string {
	return fmt.Sprintf("phase %s (%s) vs %s (%s)", p.BaselinePhase, loadText(p.BaselineLoad, unitOf(p.LoadUnit, 0)),
		p.RunPhase, loadText(p.RunLoad, unitOf(p.LoadUnit, 1)))
}

// unitOf is one side's unit of a pair's "a vs b" load unit.
func unitOf(u string, side int) string {
	if b, c, ok := strings.Cut(u, " vs "); ok {
		return []string{b, c}[side]
	}
	return u
}

func unmatchedText(c Comparison, a Against) string {
	var parts []string
	for _, u := range a.Unmatched {
		parts = append(parts, fmt.Sprintf("run %d %s (%s)", u.Run+1, u.Phase, loadText(u.Load, u.LoadUnit)))
	}
	return strings.Join(parts, ", ")
}

// RenderText writes the comparison for a terminal.
func RenderText(w io.Writer, c Comparison) error {
	ew := &errwriter.Writer{W: redact.PrintableWriter(w)}
	for i, r := range c.Runs {
		ew.Printf("%s\n", runLine(i, r))
	}
	level := fmt.Sprintf("%g%% CI", 100*c.Confidence)
	for _, a := range c.Comparisons {
		ew.Printf("\nrun %d against run %d\n", a.Run+1, a.Baseline+1)
		if len(a.Differences) > 0 {
			ew.Printf("WARNING the runs measured different things:\n")
			for _, d := range a.Differences {
				ew.Printf("  %s (%s): %s vs %s\n", d.Field, d.Kind, d.Baseline, d.Run)
			}
		}
		for _, n := range a.Notes {
			ew.Printf("note: %s\n", n)
		}
		table := func(title string, ms []Metric) {
			ew.Printf("%s\n", title)
			tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "  metric\trun %d\trun %d\tchange\t%s\tverdict\n", a.Baseline+1, a.Run+1, level)
			for _, m := range ms {
				verdict := shownVerdict(m.Verdict)
				if m.Note != "" && m.Verdict != Unchanged {
					verdict += " (" + m.Note + ")"
				}
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", m.Metric, formatValue(m.Baseline, m.Unit), formatValue(m.Value, m.Unit),
					formatChange(m.Change, m.ChangeKind), formatInterval(m.Interval, m.ChangeKind), verdict)
			}
			_ = tw.Flush()
		}
		for _, p := range a.Phases {
			table(phaseTitle(c, a, p), p.Metrics)
		}
		if len(a.Unmatched) > 0 {
			ew.Printf("unmatched phases (no phase of the other run at the same offered load): %s\n", unmatchedText(c, a))
		}
		if len(a.RunMetrics) > 0 {
			table("whole run", a.RunMetrics)
		}
	}
	ew.Printf("\nworse and better only when the %s of the change (requests resampled, %d resamples) excludes zero; untested: a point change without an interval\n",
		level, c.Resamples)
	return ew.Err
}

// RenderMarkdown writes the comparison for a pull-request comment or a CI
// job summary: worse changes in bold, only when significant.
func RenderMarkdown(w io.Writer, c Comparison) error {
	ew := &errwriter.Writer{W: redact.PrintableWriter(w)}
	for i, r := range c.Runs {
		ew.Printf("- %s\n", md(runLine(i, r)))
	}
	level := fmt.Sprintf("%g %% CI", 100*c.Confidence)
	for _, a := range c.Comparisons {
		ew.Printf("\n### run %d against run %d\n\n", a.Run+1, a.Baseline+1)
		if len(a.Differences) > 0 {
			ew.Printf("> **Warning: the runs measured different things.**\n")
			for _, d := range a.Differences {
				ew.Printf("> - `%s` (%s): %s vs %s\n", md(d.Field), d.Kind, md(d.Baseline), md(d.Run))
			}
			ew.Printf("\n")
		}
		for _, n := range a.Notes {
			ew.Printf("- note: %s\n", md(n))
		}
		if len(a.Notes) > 0 {
			ew.Printf("\n")
		}
		table := func(title string, ms []Metric) {
			ew.Printf("**%s**\n\n| metric | run %d | run %d | change | %s | verdict |\n| --- | ---: | ---: | ---: | ---: | --- |\n",
				md(title), a.Baseline+1, a.Run+1, level)
			for _, m := range ms {
				ch, verdict := formatChange(m.Change, m.ChangeKind), shownVerdict(m.Verdict)
				if m.Verdict == Worse {
					ch, verdict = "**"+ch+"**", "**worse**"
				}
				if m.Note != "" && m.Verdict != Unchanged {
					verdict += " (" + md(m.Note) + ")"
				}
				ew.Printf("| %s | %s | %s | %s | %s | %s |\n", m.Metric, formatValue(m.Baseline, m.Unit), formatValue(m.Value, m.Unit),
					ch, formatInterval(m.Interval, m.ChangeKind), verdict)
			}
			ew.Printf("\n")
		}
		for _, p := range a.Phases {
			table(phaseTitle(c, a, p), p.Metrics)
		}
		if len(a.Unmatched) > 0 {
			ew.Printf("Unmatched phases (no phase of the other run at the same offered load): %s\n\n", md(unmatchedText(c, a)))
		}
		if len(a.RunMetrics) > 0 {
			table("whole run", a.RunMetrics)
		}
	}
	ew.Printf("A change is worse or better only when its %s (requests resampled, %d resamples) excludes zero; **bold**: significantly worse; untested: a point change without an interval.\n",
		level, c.Resamples)
	return ew.Err
}

// md makes text safe inside Markdown (a table cell or a list item).
func md(s string) string {
	s = strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
	return strings.NewReplacer("<", "&lt;", ">", "&gt;", "`", "'").Replace(s)
}

func formatValue(v *float64, unit string) string {
	if v == nil {
		return "absent"
	}
	x := *v
	switch unit {
	case "s":
		if math.Abs(x) < 1e-3 && x != 0 {
			return fmt.Sprintf("%.1f µs", x*1e6)
		}
		return fmt.Sprintf("%.1f ms", x*1e3)
	case "fraction":
		return fmt.Sprintf("%.2f %%", 100*x)
	case "per_s":
		return fmt.Sprintf("%.2f/s", x)
	case "bool":
		return fmt.Sprint(x != 0)
	}
	return fmt.Sprintf("%g", x)
}

func formatChange(ch *float64, kind string) string {
	if ch == nil {
		return "—"
	}
	if kind == "difference" {
		return fmt.Sprintf("%+.2f pp", 100**ch)
	}
	return fmt.Sprintf("%+.1f %%", 100**ch)
}

func formatInterval(iv *[2]float64, kind string) string {
	if iv == nil {
		return "—"
	}
	lo, hi := iv[0], iv[1]
	if kind == "difference" {
		return fmt.Sprintf("%+.2f … %+.2f pp", 100*lo, 100*hi)
	}
	return fmt.Sprintf("%+.1f … %+.1f %%", 100*lo, 100*hi)
}

// shownVerdict is a verdict for people: "unchanged" says what it means, that
// the change lies within the noise (the bootstrap's interval, widened by
// the noise floor where a side has a single run, includes zero).
func shownVerdict(v string) string {
	if v == Unchanged {
		return NoChange
	}
	return v
}
