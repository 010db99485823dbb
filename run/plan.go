package run

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/workload"
)

// WritePlan prints the plan of the scenario sc as `llmbench plan` does,
// with its first n requests: a text table of the phases and the requests,
// ending with the run's limits, or (asJSON) a PlanJSON document. The same
// scenario and seed always print the same plan, byte for byte.
func WritePlan(w io.Writer, sc scenarios.Scenario, plan *workload.Plan, n int, asJSON bool) error {
	if asJSON {
		return writePlanJSON(w, plan, n)
	}
	if err := writePlanText(w, plan, n); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%s\n", runLimits(sc))
	return err
}

// PlanJSON is `llmbench plan --json`: the plan's summary and its first
// requests in full.
type PlanJSON struct {
	Summary  workload.PlanSummary `json:"summary"`
	Requests []workload.Request   `json:"requests"`
}

func writePlanJSON(w io.Writer, plan *workload.Plan, n int) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(PlanJSON{Summary: plan.Summary(), Requests: plan.Preview(n)})
}

func writePlanText(w io.Writer, plan *workload.Plan, n int) error {
	sum := plan.Summary()
	fmt.Fprintf(w, "scenario %s, seed %d\n", sum.Scenario, sum.Seed)
	fmt.Fprintf(w, "dataset: %s\n", sum.Dataset)
	if sum.Skipped > 0 {
		fmt.Fprintf(w, "skipped: %d records of the data file could not be used\n", sum.Skipped)
	}
	if sum.Turns > 1 {
		fmt.Fprintf(w, "conversations: %d turns each, sent one after the other\n", sum.Turns)
	}
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PHASE\tMEASURED\tWAITS\tLIMITS\tARRIVALS\tLOAD")
	for _, ph := range sum.Phases {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", ph.Name, yesNo(ph.Measured), yesNo(ph.Drain),
			phaseLimits(ph), phaseArrivals(ph), ph.Load+capNote(ph.Cap))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if sum.Search != "" {
		fmt.Fprintf(w, "then a %s\n", sum.Search)
	}
	if n == 0 {
		return nil
	}

	reqs := plan.Preview(n)
	fmt.Fprintf(w, "\nfirst %d requests (as phase %s sends them; intended = offset from the phase start):\n", len(reqs), reqs[0].Phase)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "INDEX\tID\tINTENDED\tPROMPT\tMAX_TOKENS\tMESSAGES\tLAST MESSAGE")
	for _, r := range reqs {
		intended := "-"
		if r.Intended > 0 || (r.Index == 0 && plan.First().Open()) {
			intended = fmt.Sprintf("+%.3fs", r.Intended.Seconds())
		}
		last := r.Messages[len(r.Messages)-1]
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%d\t%s: %s\n", r.Index, r.ID, intended, r.PromptTokens, r.MaxTokens,
			len(r.Messages), last.Role, quotedExcerpt(last.Content, 48)+imagesNote(r.Messages))
	}
	return tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func phaseLimits(ph workload.PhaseSummary) string {
	var parts []string
	if ph.Duration > 0 {
		parts = append(parts, ph.Duration.String())
	}
	if ph.Requests > 0 {
		parts = append(parts, fmt.Sprintf("%d requests", ph.Requests))
	}
	if len(parts) == 0 {
		return "the schedule"
	}
	return strings.Join(parts, " or ")
}

func phaseArrivals(ph workload.PhaseSummary) string {
	switch {
	case ph.Arrivals < 0:
		return "run time"
	case ph.Arrivals == 0:
		return "-"
	}
	s := fmt.Sprintf("%d", ph.Arrivals)
	if ph.MeanRate > 0 {
		s += fmt.Sprintf(" (%s–%s, %.3g/s)", roundMs(ph.FirstArrival), roundMs(ph.LastArrival), ph.MeanRate)
	}
	return s
}

func roundMs(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

func capNote(c string) string {
	if c == "" {
		return ""
	}
	return "; cap " + c
}

// quotedExcerpt shortens text to at most n runes, marking the cut.
func quotedExcerpt(text string, n int) string {
	r := []rune(text)
	if len(r) <= n {
		return fmt.Sprintf("%q", text)
	}
	return fmt.Sprintf("%q…", string(r[:n]))
}

// runLimits says in one line what bounds the run besides its phases: the
// per-request timeout, the abort conditions and the SLO goodput counts.
func runLimits(sc scenarios.Scenario) string {
	w := sc.Workload
	timeout := "none"
	if w.Timeout > 0 {
		timeout = w.Timeout.String()
	}
	var stops []string
	a := w.Abort
	if a.Errors > 0 {
		stops = append(stops, fmt.Sprintf("after %d failures", a.Errors))
	}
	if a.ErrorRate > 0 {
		stops = append(stops, fmt.Sprintf("above %g%% failed (from %d requests)", 100*a.ErrorRate, a.MinRequests))
	}
	if a.FirstFailures > 0 {
		stops = append(stops, fmt.Sprintf("if the first %d requests all fail", a.FirstFailures))
	}
	if a.Unreachable > 0 {
		stops = append(stops, fmt.Sprintf("after %s with no connection", a.Unreachable))
	}
	line := "request timeout " + timeout + "; stops early " + orNever(strings.Join(stops, ", "))
	if o := sc.SLO; o != nil {
		line += "; goodput within " + report.SLOSeconds{TTFT: o.TTFT.Seconds(), TPOT: o.TPOT.Seconds(), E2E: o.E2E.Seconds()}.String()
	}
	return line
}

func orNever(s string) string {
	if s == "" {
		return "never"
	}
	return s
}
