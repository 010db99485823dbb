package report

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/rundir"
)

// Goodput is how many requests met the SLO, over the same requests and
// duration as the throughput beside it.
type Goodput struct {
	SLO  SLOSeconds `json:"slo_s"`
	Good int        `json:"good"`
	// Fraction is good ÷ (sent − unmeasured − canceled): a failed request
	// is not good, an unmeasured or canceled one is left out.
	Fraction float64 `json:"fraction"`
	// FractionCI is Fraction's 95 % Wilson interval (absent when no
	// request counted).
	FractionCI   *Bounds `json:"fraction_ci,omitempty"`
	RequestsPerS float64 `json:"requests_per_s"`
	// Missed counts the successful requests over each bound (one request
	// may miss several), so a reader sees which objective costs goodput.
	Missed map[string]int `json:"missed"`
	// Unmeasured counts the successful requests that missed no bound but
	// could not be measured against one (no TTFT without a stream, no TPOT
	// without chunks): neither good nor a miss, they are left out of
	// Fraction. UnmeasuredReasons counts them by bound and reason, e.g.
	// {"ttft: not streamed": 12}.
	Unmeasured        int            `json:"unmeasured"`
	UnmeasuredReasons map[string]int `json:"unmeasured_reasons,omitempty"`
	// Canceled counts the requests cancelled by the run's abort (a second
	// Ctrl-C): not failures, they are left out of Fraction too.
	Canceled int `json:"canceled,omitempty"`
}

// SLOSeconds is the SLO as the summary prints it, in seconds (0: no bound).
type SLOSeconds struct {
	TTFT float64 `json:"ttft,omitempty"`
	TPOT float64 `json:"tpot,omitempty"`
	E2E  float64 `json:"e2e,omitempty"`
}

// goodputOf measures records against slo over dur; nil without an SLO.
func goodputOf(records []request, dur time.Duration, slo *rundir.SLO) *Goodput {
	if slo == nil || *slo == (rundir.SLO{}) {
		return nil
	}
	g := &Goodput{
		SLO:    SLOSeconds{TTFT: slo.TTFT.Seconds(), TPOT: slo.TPOT.Seconds(), E2E: slo.E2E.Seconds()},
		Missed: map[string]int{},
	}
	for _, r := range records {
		if r.ErrorClass == client.ErrCanceled {
			g.Canceled++
		}
		if !r.OK() {
			continue
		}
		ttft, tpot, e2e, why := slo.Check(r.Record)
		for _, m := range []struct {
			name   string
			missed bool
		}{{"ttft", ttft}, {"tpot", tpot}, {"e2e", e2e}} {
			if m.missed {
				g.Missed[m.name]++
			}
		}
		switch {
		case ttft || tpot || e2e:
		case len(why) > 0:
			g.Unmeasured++
			if g.UnmeasuredReasons == nil {
				g.UnmeasuredReasons = map[string]int{}
			}
			for _, w := range why {
				g.UnmeasuredReasons[w]++
			}
		default:
			g.Good++
		}
	}
	if n := len(records) - g.Unmeasured - g.Canceled; n > 0 {
		g.Fraction = float64(g.Good) / float64(n)
		g.FractionCI = fractionCI(g.Good, n)
	}
	if dur > 0 {
		g.RequestsPerS = float64(g.Good) / dur.Seconds()
	}
	return g
}

// String is the objective in words, e.g. "TTFT ≤ 200ms, E2E ≤ 2s".
func (o SLOSeconds) String() string {
	var parts []string
	for _, b := range []struct {
		name string
		v    float64
	}{{"TTFT", o.TTFT}, {"TPOT", o.TPOT}, {"E2E", o.E2E}} {
		if b.v > 0 {
			parts = append(parts, fmt.Sprintf("%s ≤ %v", b.name, time.Duration(math.Round(b.v*1e9))))
		}
	}
	return strings.Join(parts, ", ")
}

// goodputLine is the goodput in one sentence, for the text and Markdown
// summaries.
func goodputLine(g *Goodput, sent int) string {
	line := fmt.Sprintf("%.2f requests/s; %d of %d requests (%.1f%%%s) met the SLO (%s)",
		g.RequestsPerS, g.Good, sent-g.Unmeasured-g.Canceled, 100*g.Fraction, percentCI(g.FractionCI), g.SLO)
	if len(g.Missed) > 0 {
		var missed []string
		for _, k := range []string{"ttft", "tpot", "e2e"} {
			if n := g.Missed[k]; n > 0 {
				missed = append(missed, fmt.Sprintf("%s %d", k, n))
			}
		}
		line += "; over the bound: " + strings.Join(missed, ", ")
	}
	if g.Unmeasured > 0 {
		line += fmt.Sprintf("; %d more could not be measured against it (%s) and are not counted", g.Unmeasured, reasonList(g.UnmeasuredReasons))
	}
	return line
}

// percentCI is ", 95% CI 2.1–7.4%" for a fraction's interval ("" without).
func percentCI(b *Bounds) string {
	if b == nil {
		return ""
	}
	return fmt.Sprintf(", 95%% CI %.1f–%.1f%%", 100*b.Lo, 100*b.Hi)
}

// reasonList is "a 3, b 1", by key.
func reasonList(m map[string]int) string {
	parts := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
