package report

import (
	"fmt"
	"strings"

	"github.com/llmbench-org/llmbench/report/reconcile"
)

// IDServerTimeline is the finding that says how the engine's spans joined
// and where the slowest requests' TTFT went.
const IDServerTimeline = "server_timeline"

// serverTimeline writes the per-request server timeline: how many requests
// joined their spans, each part's distribution, the slowest 1 %'s verdict.
func (t *textRun) serverTimeline(st *ServerTimeline) {
	if st == nil {
		return
	}
	what, items, _ := st.Account()
	t.ew.Printf("server timeline: %d of %d requests joined %s (%d by trace id, %d by request id; %d %s)\n",
		st.Joined, st.Records, what, st.ByTraceID, st.ByRequestID, st.Spans, items)
	tab := textTable{keyCols: 1}
	tab.add("  part", "mean ms", "p50", "p99", "max")
	for _, name := range TimelineParts {
		d := st.Parts[name]
		tab.add("  "+name, ms(d.Mean), ms(d.P50), ms(d.P99), ms(d.Max))
	}
	t.table(tab)
	if s := st.Slowest; s != nil {
		t.ew.Printf("  %s\n", s.Verdict)
	}
}

// timelineFinding states the join and the slowest requests' verdict: a
// warning when fewer than 99.9 % of the requests joined, with the reasons.
func timelineFinding(st *ServerTimeline) (Finding, bool) {
	if st == nil {
		return Finding{}, false
	}
	f := Finding{ID: IDServerTimeline, Severity: reconcile.Info, Evidence: map[string]float64{
		"records": float64(st.Records), "joined": float64(st.Joined), "join_rate": st.JoinRate, "spans": float64(st.Spans),
	}}
	var words []string
	what, items, one := st.Account()
	words = append(words, fmt.Sprintf("%d of %d requests joined %s", st.Joined, st.Records, what))
	if s := st.Slowest; s != nil {
		words = append(words, s.Verdict)
		for part, share := range s.Share {
			f.Evidence["slowest_share_"+part] = share
		}
	}
	if st.Records > 0 && st.JoinRate < 0.999 {
		f.Severity = reconcile.Warn
		var why []string
		for _, c := range st.RecordsUnjoined {
			why = append(why, fmt.Sprintf("%d: %s", c.N, c.Reason))
		}
		words = append(words, "requests without "+one+": "+strings.Join(why, "; "))
	}
	if n := st.Spans - st.Joined; n > 0 && len(st.SpansUnjoined) > 0 {
		var why []string
		for _, c := range st.SpansUnjoined {
			why = append(why, fmt.Sprintf("%d: %s", c.N, c.Reason))
		}
		words = append(words, items+" that joined no request: "+strings.Join(why, "; "))
	}
	f.Verdict = strings.Join(words, "; ")
	return f, true
}

// Account names where the timeline's engine account came from, its items
// and one of them: "the engine's spans", "spans", "a span".
func (st *ServerTimeline) Account() (what, items, one string) {
	if st.Source == TimelineFromExport {
		return "SGLang's request export", "export lines", "an export line"
	}
	return "the engine's spans", "spans", "a span"
}
