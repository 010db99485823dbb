package comparison

// Cells is a metric as every renderer shows it: both runs' values, the
// change, its interval and the verdict (with its note), so the HTML page
// (report/html) words it as the text and Markdown do.
func (m Metric) Cells() (baseline, value, change, interval, verdict string) {
	verdict = shownVerdict(m.Verdict)
	if m.Note != "" && m.Verdict != Unchanged {
		verdict += " (" + m.Note + ")"
	}
	return formatValue(m.Baseline, m.Unit), formatValue(m.Value, m.Unit), formatChange(m.Change, m.ChangeKind), formatInterval(m.Interval, m.ChangeKind), verdict
}

// PhaseTitle is how the renderers head a compared phase pair.
func (c Comparison) PhaseTitle(a Against, p PhasePair) string { return phaseTitle(c, a, p) }

// UnmatchedText lists a comparison's phases without a counterpart.
func (c Comparison) UnmatchedText(a Against) string { return unmatchedText(c, a) }

// RunLine is the line that names run i.
func (c Comparison) RunLine(i int) string { return runLine(i, c.Runs[i]) }
