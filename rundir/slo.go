package rundir

import (
	"time"

	"github.com/llmbench-org/llmbench/client"
)

// SLO is a per-request service-level objective: a request is good when it
// succeeded and met every bound that is set (zero: no bound). Goodput, the
// rate of good requests, is what a deployment can promise its users; plain
// throughput counts requests nobody would have waited for.
type SLO struct {
	TTFT time.Duration `json:"ttft_ns,omitempty"`
	TPOT time.Duration `json:"tpot_ns,omitempty"`
	E2E  time.Duration `json:"e2e_ns,omitempty"`
	// Target is the share of requests that must be good for a stretch of
	// load to meet the SLO (a search's probe, a phase run until decided);
	// goodput does not read it. 0: package capacity's default.
	Target float64 `json:"target,omitempty"`
}

// Good reports whether r succeeded within every bound of the SLO (a request
// that could not be measured against a bound is not good: see Judge).
func (o SLO) Good(r *client.Record) bool {
	good, _ := o.Judge(r)
	return good
}

// Judge says whether r succeeded within every bound of the SLO, or, when it
// missed none but one could not be measured (unmeasured), that it can be
// counted neither way.
func (o SLO) Judge(r *client.Record) (good, unmeasured bool) {
	if !r.OK() {
		return false, false
	}
	ttft, tpot, e2e, why := o.Check(r)
	if ttft || tpot || e2e {
		return false, false
	}
	return len(why) == 0, len(why) > 0
}

// Check says which bounds a successful request r is over, and which bounds
// it could not be measured against, as "bound: reason".
func (o SLO) Check(r *client.Record) (ttft, tpot, e2e bool, unmeasured []string) {
	if o.TTFT > 0 {
		if r.NoStream {
			unmeasured = append(unmeasured, "ttft: not streamed")
		} else {
			// A stream that brought no token never met a first-token bound.
			d, ok := r.TTFT()
			ttft = !ok || d > o.TTFT
		}
	}
	if o.TPOT > 0 {
		// TPOT is undefined below two tokens: nothing to miss.
		if d, ok := r.TPOT(); ok {
			tpot = d > o.TPOT
		} else if r.OutputTokens >= 2 {
			if r.NoStream {
				unmeasured = append(unmeasured, "tpot: not streamed")
			} else {
				unmeasured = append(unmeasured, "tpot: no chunks")
			}
		}
	}
	e2e = o.E2E > 0 && r.E2E() > o.E2E
	return ttft, tpot, e2e, unmeasured
}
