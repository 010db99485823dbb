package reconcile

import (
	"fmt"
	"strings"

	"github.com/llmbench-org/llmbench/scrape"
)

// counterResets names every counter or histogram that went backwards
// inside a paired window (an engine restart), with when and where: the
// window's delta counts from 0 after the reset, as Prometheus's increase()
// does, so what was counted before it is kept, but whatever the engine
// counted between the last scrape before the restart and the restart is
// lost. A warning: the server's totals are a lower bound. ok is false when
// nothing reset.
//
// Evidence: resets (how many), concepts (how many distinct), and the first
// reset's first_reset_at_s, first_reset_before and first_reset_after
// (a histogram's count).
func (a *analysis) counterResets() (Finding, bool) {
	if len(a.resetEvents) == 0 {
		return Finding{}, false
	}
	ev := evidence{}
	first := a.resetEvents[0]
	ev.set("resets", float64(len(a.resetEvents)))
	ev.set("concepts", float64(len(a.resets)))
	ev.set("first_reset_at_s", first.At.Seconds())
	ev.set("first_reset_before", first.Before)
	ev.set("first_reset_after", first.After)

	const maxListed = 4
	var parts []string
	for i, r := range a.resetEvents {
		if i == maxListed {
			parts = append(parts, fmt.Sprintf("and %d more", len(a.resetEvents)-maxListed))
			break
		}
		what := string(r.Concept)
		if r.Series != "" {
			what += "{" + r.Series + "}"
		}
		if r.Concept.Kind() == scrape.KindHistogram {
			what += " count"
		}
		where := ""
		if r.Target != "" {
			where = " on " + r.Target
		}
		parts = append(parts, fmt.Sprintf("%s %s → %s at %s into the run%s",
			what, trimFloat(r.Before), trimFloat(r.After), dur(r.At.Seconds()), where))
	}
	return Finding{ID: IDCounterReset, Severity: Warn, Evidence: ev.orNil(),
		Verdict: fmt.Sprintf("the engine's counters went backwards (a restart?): %s; the deltas count from 0 after each reset, as Prometheus's increase() does, but what the engine counted between the scrape before and the reset, if anything, is lost",
			strings.Join(parts, ", "))}, true
}

// engineChange names every target whose /metrics changed from one engine
// family's names to another's (scrape.DialectChanges): a change of engine
// (another server took the port, a gateway switched backends), never a
// delta across it (issue 20 read vLLM's counters followed by SGLang's as
// 1,000 foreign requests). The windows it touches are left out of every
// comparison. A warning; ok is false when there was none.
//
// Evidence: changes (how many), first_change_at_s, windows_left_out.
func (a *analysis) engineChange() (Finding, bool) {
	if len(a.engineChanges) == 0 {
		return Finding{}, false
	}
	var parts []string
	for _, c := range a.engineChanges {
		parts = append(parts, fmt.Sprintf("%s changed from %s metrics to %s between %s and %s into the run",
			c.Target, possessive(c.From), possessive(c.To), dur(c.Last.Seconds()), dur(c.At.Seconds())))
	}
	v := "a change of engine: " + strings.Join(parts, "; ") +
		"; the counters before and after are different engines', so no delta is taken across the change"
	if len(a.acrossChange) > 0 {
		v += fmt.Sprintf(", and %s (%s) %s not compared with the client", plural(len(a.acrossChange), "measured window"), strings.Join(a.acrossChange, ", "), isAre(len(a.acrossChange)))
	}
	if a.sem.name != "" {
		v += fmt.Sprintf("; the run is read as %s", a.sem.display)
	}
	ev := evidence{}
	ev.set("changes", float64(len(a.engineChanges)))
	ev.set("first_change_at_s", a.engineChanges[0].At.Seconds())
	ev.set("windows_left_out", float64(len(a.acrossChange)))
	return Finding{ID: IDEngineChange, Severity: Warn, Verdict: v, Evidence: ev.orNil()}, true
}

// possessive names a dialect's family ("vLLM's"), or the dialect as recorded.
func possessive(dialect string) string {
	return semanticsOf(dialect).display + "'s"
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func trimFloat(v float64) string { return fmt.Sprintf("%.6g", v) }

// invalidValues names the concepts the engine exposed but whose values
// could not be used in a paired window (a NaN or infinite series, a
// negative counter, a histogram whose count is below its buckets): they are
// absent from every comparison rather than compared without the bad series.
// A warning, with each reason; ok is false when there were none.
//
// Evidence: concepts (how many).
func (a *analysis) invalidValues() (Finding, bool) {
	if len(a.invalid) == 0 {
		return Finding{}, false
	}
	var parts []string
	for _, c := range sortedConcepts(a.invalid) {
		parts = append(parts, fmt.Sprintf("%s (%s)", c, short(a.invalid[c])))
	}
	return Finding{ID: IDInvalidValues, Severity: Warn, Evidence: map[string]float64{"concepts": float64(len(a.invalid))},
		Verdict: fmt.Sprintf("the engine exposed %s but the values could not be used, so they are absent, not compared without the bad series: %s",
			plural(len(a.invalid), "concept"), strings.Join(parts, "; "))}, true
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
