package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// Comparison puts runs side by side, the first one as the reference.
type Comparison struct {
	Runs []RunInfo      `json:"runs"`
	Rows []ComparedLine `json:"rows"`
}

// ComparedLine is one quantity across the runs; Change[i] is run i against
// the first run (a fraction: 0.10 = 10 % more), NaN when undefined.
type ComparedLine struct {
	Name   string    `json:"name"`
	Unit   string    `json:"unit"`
	Better string    `json:"better"` // "lower" | "higher" | "" (neither)
	Values []float64 `json:"values"`
	Change []float64 `json:"change"`
}

// Compare lines up the headline quantities of the summaries.
func Compare(sums ...Summary) Comparison {
	c := Comparison{}
	for _, s := range sums {
		c.Runs = append(c.Runs, s.Run)
	}
	add := func(name, unit, better string, get func(Summary) float64) {
		l := ComparedLine{Name: name, Unit: unit, Better: better}
		for _, s := range sums {
			l.Values = append(l.Values, get(s))
		}
		for _, v := range l.Values {
			ref := l.Values[0]
			ch := math.NaN()
			if ref != 0 && !math.IsNaN(ref) && !math.IsNaN(v) {
				ch = v/ref - 1
			}
			l.Change = append(l.Change, ch)
		}
		c.Rows = append(c.Rows, l)
	}
	add("requests ok", "", "higher", func(s Summary) float64 { return float64(s.Client.Requests.OK) })
	add("requests failed", "", "lower", func(s Summary) float64 { return float64(s.Client.Requests.Failed) })
	add("requests/s", "/s", "higher", func(s Summary) float64 { return s.Client.Throughput.RequestsPerSec })
	add("output tokens/s", "/s", "higher", func(s Summary) float64 { return s.Client.Throughput.OutputTokensPerSec })
	if slices.ContainsFunc(sums, func(s Summary) bool { return s.Client.Goodput != nil }) {
		// Runs with different SLOs compare poorly; each run's own SLO is in its summary.
		add("goodput/s", "/s", "higher", func(s Summary) float64 {
			if s.Client.Goodput == nil {
				return math.NaN()
			}
			return s.Client.Goodput.RequestsPerS
		})
	}
	lat := []struct {
		name string
		get  func(Latencies) Dist
		srv  string
	}{
		{"TTFT", func(l Latencies) Dist { return l.TTFT }, "ttft"},
		{"ITL", func(l Latencies) Dist { return l.ITL }, "itl"},
		{"TPOT", func(l Latencies) Dist { return l.TPOT }, "tpot"},
		{"E2E", func(l Latencies) Dist { return l.E2E }, "e2e"},
	}
	for _, l := range lat {
		add("client "+l.name+" p50", "s", "lower", func(s Summary) float64 { return l.get(s.Client.Latency).P50 })
		add("client "+l.name+" p99", "s", "lower", func(s Summary) float64 { return l.get(s.Client.Latency).P99 })
		add("server "+l.name+" mean", "s", "lower", func(s Summary) float64 {
			if s.Server == nil {
				return math.NaN()
			}
			d, ok := s.Server.Latency[l.srv]
			if !ok {
				return math.NaN()
			}
			return d.Mean
		})
	}
	add("schedule lag p99", "s", "lower", func(s Summary) float64 { return s.Health.ScheduleLag.P99 })
	add("client CPU", "%", "", func(s Summary) float64 { return 100 * s.Health.Client.CPUUtilization })
	return c
}

// RenderComparison writes the comparison as a table: each run's value, and
// from the second run on its change against the first.
func RenderComparison(w io.Writer, c Comparison) error {
	ew := &errWriter{w: w}
	for i, r := range c.Runs {
		ew.printf("run %d: %s (%s, seed %d, %.1f s measured)\n", i+1, r.ID, r.Scenario, r.Seed, r.Duration)
	}
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"", "run 1"}
	for i := 2; i <= len(c.Runs); i++ {
		head = append(head, fmt.Sprintf("run %d", i), "change")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, l := range c.Rows {
		cols := []string{l.Name, formatValue(l.Values[0], l.Unit)}
		for i := 1; i < len(l.Values); i++ {
			cols = append(cols, formatValue(l.Values[i], l.Unit), formatChange(l.Change[i], l.Better))
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	ew.printf("change is against run 1; (worse) marks a change in the unwanted direction beyond 5 %%\n")
	return ew.err
}

// RenderComparisonMarkdown writes the comparison as a Markdown table, for a
// pull-request comment or a CI job summary.
func RenderComparisonMarkdown(w io.Writer, c Comparison) error {
	ew := &errWriter{w: w}
	for i, r := range c.Runs {
		ew.printf("- run %d: `%s` (%s, seed %d, %.1f s measured)\n", i+1, mdText(r.ID), mdText(r.Scenario), r.Seed, r.Duration)
	}
	head, rule := []string{"", "run 1"}, []string{"---", "---:"}
	for i := 2; i <= len(c.Runs); i++ {
		head, rule = append(head, fmt.Sprintf("run %d", i), "change"), append(rule, "---:", "---:")
	}
	ew.printf("\n| %s |\n| %s |\n", strings.Join(head, " | "), strings.Join(rule, " | "))
	for _, l := range c.Rows {
		cols := []string{l.Name, formatValue(l.Values[0], l.Unit)}
		for i := 1; i < len(l.Values); i++ {
			ch := formatChange(l.Change[i], l.Better)
			if strings.HasSuffix(ch, " (worse)") {
				ch = "**" + ch + "**"
			}
			cols = append(cols, formatValue(l.Values[i], l.Unit), ch)
		}
		ew.printf("| %s |\n", strings.Join(cols, " | "))
	}
	ew.printf("\nChange is against run 1; **(worse)** marks a change in the unwanted direction beyond 5 %%.\n")
	return ew.err
}

func formatValue(v float64, unit string) string {
	switch {
	case math.IsNaN(v):
		return "absent"
	case unit == "s":
		return fmt.Sprintf("%.1f ms", v*1000)
	case unit == "%":
		return fmt.Sprintf("%.0f %%", v)
	case v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func formatChange(ch float64, better string) string {
	if math.IsNaN(ch) {
		return "—"
	}
	s := fmt.Sprintf("%+.1f%%", 100*ch)
	if (better == "lower" && ch > 0.05) || (better == "higher" && ch < -0.05) {
		s += " (worse)"
	}
	return s
}
