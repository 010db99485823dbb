package report

import (
	"fmt"
	"slices"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/sentload"
	"github.com/llmbench-org/llmbench/rundir"
)

// SentLoad fingerprints the load the measured phases sent (decision 2221):
// every record of a measured phase, failed ones included (they were sent),
// its planned lengths (the prompt target, else the engine's count; the
// max_tokens asked for) and its hand-over time; the plan hash over the
// records in plan order. Nil without a record.
func SentLoad(meta rundir.RunMeta, recs []client.Record) *sentload.Fingerprint {
	measured := map[string]bool{}
	for _, ph := range meta.Phases {
		measured[ph.Name] = ph.Measured
	}
	var sent []client.Record
	for i := range recs {
		if len(meta.Phases) == 0 || measured[recs[i].Phase] {
			sent = append(sent, recs[i])
		}
	}
	if len(sent) == 0 {
		return nil
	}
	slices.SortStableFunc(sent, func(a, b client.Record) int { return a.Index - b.Index })
	// Intended times count from each phase's first intended send: the run
	// clock's origin, and so every absolute time, differs between runs of
	// one plan.
	origin := map[string]time.Duration{}
	for i := range sent {
		r := &sent[i]
		if o, ok := origin[r.Phase]; r.Scheduled() && (!ok || r.Intended < o) {
			origin[r.Phase] = r.Intended
		}
	}
	reqs := make([]sentload.Request, 0, len(sent))
	items := make([]sentload.PlanItem, 0, len(sent))
	for i := range sent {
		r := &sent[i]
		prompt := r.TargetPromptTokens
		if prompt == 0 {
			prompt = r.PromptTokens
		}
		var intended time.Duration
		if r.Scheduled() {
			intended = r.Intended - origin[r.Phase]
		}
		reqs = append(reqs, sentload.Request{At: r.Sent.Seconds(), HasAt: r.Sent > 0, Intended: intended.Seconds(), HasIntended: r.Scheduled(),
			Prompt: prompt, Output: r.MaxTokens})
		items = append(items, sentload.PlanItem{Index: r.Index, Prompt: r.TargetPromptTokens, Output: r.MaxTokens,
			IntendedMicros: intended.Microseconds(), Endpoint: r.Endpoint, Detail: fmt.Sprintf("%s/%s/%d/%d", r.Phase, r.Session, r.Images, r.Inputs)})
	}
	fp := sentload.Of(reqs, "planned")
	fp.PlanHash = sentload.PlanHash(items)
	return &fp
}
