// Package validity decides whether a run's numbers are representative, as
// named states (docs/decisions/0029): each state has a stable name, says
// whether it makes the run not valid or is a warning beside valid numbers,
// quotes the figure that broke its bound and the bound, and says which
// requests the latency figures cover. Judge is pure: the report computes its
// Input from a run directory and keeps the states in summary.json's health.
package validity

import (
	"fmt"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/selfmon"
)

// DefaultMaxFailureRate is the share of requests (failed ÷ sent − canceled)
// above which a run is not valid, when its scenario declares no other
// (report.validity.max_failure_rate): a few failures leave the survivors'
// latencies representative; past 1 % the requests that failed are a part of
// the load no latency figure describes.
const DefaultMaxFailureRate = 0.01

// MinRateAchieved is the share of an open loop's planned rate below which
// the load was not offered as planned (achieved ÷ planned arrival rate).
const MinRateAchieved = 0.95

// Severity says what a state does to a run's verdict.
type Severity string

const (
	// Invalid: the numbers do not describe the load as planned; the run
	// is not valid (health.valid false) and the state's words are among
	// health.problems.
	Invalid Severity = "invalid"
	// Warning: the numbers stand, with something a reader must weigh.
	Warning Severity = "warning"
)

// The states' names: stable, machine-readable, each a gate metric
// (health.state.<name>).
const (
	FailuresOverBound   = "failures_over_bound"   // more failed than the scenario's bound
	FailuresWithinBound = "failures_within_bound" // some failed, within the bound (a warning)
	ClientThrottled     = "client_throttled"      // the container's CPU limit stopped the client
	ClientSaturated     = "client_saturated"      // the client was CPU-bound
	HostDelayed         = "host_delayed"          // other processes took the client's cores
	EngineRestarted     = "engine_restarted"      // the engine's counters reset mid-run
	ArrivalsDropped     = "arrivals_dropped"      // open-loop arrivals never sent
	RateShort           = "rate_short"            // an open loop sent below its planned rate
	ArrivalsLate        = "arrivals_late"         // open-loop arrivals sent late (a warning)
	LengthsShort        = "lengths_short"         // outputs shorter than max_tokens (a warning)
	StoppedEarly        = "stopped_early"         // the run stopped before its plan's end
	Unfinished          = "unfinished"            // llmbench was killed before it wrote its end
	TornLines           = "torn_lines"            // torn JSONL lines skipped
	DuplicateRecords    = "duplicate_records"     // records repeating an ID
)

// Names lists every state's name, in the order Judge reports them.
var Names = []string{
	FailuresOverBound, FailuresWithinBound, ClientThrottled, ClientSaturated, HostDelayed, EngineRestarted,
	ArrivalsDropped, RateShort, ArrivalsLate, LengthsShort, StoppedEarly, Unfinished, TornLines, DuplicateRecords,
}

// State is one thing that bears on whether the numbers are representative.
type State struct {
	Name     string   `json:"name"`
	Severity Severity `json:"severity"`
	// Figure is what was measured, Bound what it must stay within (at most,
	// or with AtLeast at least), both in Unit.
	Figure  float64 `json:"figure"`
	Bound   float64 `json:"bound"`
	AtLeast bool    `json:"at_least,omitempty"`
	Unit    string  `json:"unit"`
	// Says is the state in words: what happened and what to do.
	Says string `json:"says"`
	// Covers says which requests the latency figures cover.
	Covers string `json:"covers"`
}

// Units of the figures.
const (
	UnitFraction = "fraction" // 0–1
	UnitCount    = "count"
	UnitSeconds  = "seconds"
)

// PhaseRate is an open-loop phase's arrival rate: planned (the schedule's
// intended send times) against achieved (the actual sends) over the same
// requests.
type PhaseRate struct {
	Phase             string
	Requests          int     // requests sent
	Planned, Achieved float64 // requests/s
}

// Input is what Judge decides from, every figure over the measured phases.
type Input struct {
	// Sent, Failed, Canceled count requests as client.requests does.
	Sent, Failed, Canceled int
	// MaxFailureRate is the scenario's report.validity.max_failure_rate; 0
	// is DefaultMaxFailureRate.
	MaxFailureRate float64
	Client         rundir.ClientHealth
	// Restarts counts the engine's restarts seen mid-run (scrapes at which
	// its counters went down), the first FirstRestart into the run.
	Restarts     int
	FirstRestart time.Duration
	// DroppedArrivals and LateArrivals are the driver's; Rates each
	// open-loop measured phase's.
	DroppedArrivals, LateArrivals int
	LateP99                       time.Duration // the schedule lag's p99
	Rates                         []PhaseRate
	// ShortRequests of LengthsOf successful requests with a max_tokens
	// stopped before it, MissingFraction of the planned output tokens
	// missing; LengthsAsked is whether the plan asked for exact lengths
	// (ignore_eos): without it a short output is the model's choice.
	ShortRequests, LengthsOf int
	MissingFraction          float64
	LengthsAsked             bool
	Stopped                  string
	Unfinished               bool
	Records                  int // distinct records read, every phase
	PartialLines, Duplicates int
}

// Judge names every state the input is in, invalid ones and warnings, in
// the order of Names. A run is valid when none is Invalid.
func Judge(in Input) []State {
	var out []State
	add := func(s State) { out = append(out, s) }
	if s, ok := failures(in); ok {
		add(s)
	}
	if s, ok := clientDelay(in.Client); ok {
		add(s)
	}
	if in.Restarts > 0 {
		add(State{Name: EngineRestarted, Severity: Invalid, Figure: float64(in.Restarts), Unit: UnitCount,
			Says: fmt.Sprintf("the engine restarted mid-run (or a replica behind its address went away): its counters went back to zero %d %s, first %.1f s into the run; the numbers mix a warm engine with a cold one",
				in.Restarts, plural(in.Restarts, "time", "times"), in.FirstRestart.Seconds()),
			Covers: "latencies cover the requests that succeeded on either side of the restart; those in flight then failed"})
	}
	if in.DroppedArrivals > 0 {
		add(State{Name: ArrivalsDropped, Severity: Invalid, Figure: float64(in.DroppedArrivals), Unit: UnitCount,
			Says:   fmt.Sprintf("%d arrivals were dropped: the offered load was not sent", in.DroppedArrivals),
			Covers: fmt.Sprintf("latencies cover the %d requests sent, a lighter load than planned", in.Sent)})
	}
	for _, r := range in.Rates {
		if r.Planned <= 0 || r.Achieved >= MinRateAchieved*r.Planned {
			continue
		}
		add(State{Name: RateShort, Severity: Invalid, Figure: r.Achieved / r.Planned, Bound: MinRateAchieved, AtLeast: true, Unit: UnitFraction,
			Says: fmt.Sprintf("phase %s sent %.3g requests/s of the %.3g planned (%.0f%%, below %.0f%%): the client fell behind its schedule, so the engine saw a lighter load than planned",
				r.Phase, r.Achieved, r.Planned, 100*r.Achieved/r.Planned, 100*MinRateAchieved),
			Covers: fmt.Sprintf("latencies cover its %d requests at the rate achieved, not the rate planned", r.Requests)})
	}
	if in.LateArrivals > 0 {
		add(State{Name: ArrivalsLate, Severity: Warning, Figure: float64(in.LateArrivals), Unit: UnitCount,
			Says: fmt.Sprintf("%d arrivals were sent later than planned (schedule lag p99 %.3g ms)",
				in.LateArrivals, 1000*in.LateP99.Seconds()),
			Covers: "latencies cover every request, timed from when each was sent, not when it was due"})
	}
	if in.LengthsAsked && in.ShortRequests > 0 {
		add(State{Name: LengthsShort, Severity: Warning, Figure: in.MissingFraction, Unit: UnitFraction,
			Says: fmt.Sprintf("%d of %d requests stopped before their max_tokens, %.1f%% of the planned output tokens missing: per-token latencies stand, E2E and throughput measure shorter outputs than planned",
				in.ShortRequests, in.LengthsOf, 100*in.MissingFraction),
			Covers: fmt.Sprintf("latencies cover every successful request, %d of them shorter than planned", in.ShortRequests)})
	}
	if in.Stopped != "" {
		add(State{Name: StoppedEarly, Severity: Invalid, Figure: 1, Unit: UnitCount,
			Says:   "the run stopped early: " + in.Stopped,
			Covers: "latencies cover the requests that finished before the stop"})
	}
	if in.PartialLines > 0 {
		add(State{Name: TornLines, Severity: Invalid, Figure: float64(in.PartialLines), Unit: UnitCount,
			Says: fmt.Sprintf("%d torn JSONL %s skipped (a crash or a full disk mid-write): the request or scrape written last is missing",
				in.PartialLines, plural(in.PartialLines, "line was", "lines were")),
			Covers: "latencies cover every request read; the one on a torn line is missing"})
	}
	if in.Duplicates > 0 {
		add(State{Name: DuplicateRecords, Severity: Invalid, Figure: float64(in.Duplicates), Unit: UnitCount,
			Says: fmt.Sprintf("%d %s an ID already seen (requests.jsonl holds some requests twice: appended onto itself, or merged twice); the first of each was kept",
				in.Duplicates, plural(in.Duplicates, "record repeated", "records repeated")),
			Covers: "latencies cover each request once, its first record"})
	}
	if in.Unfinished {
		add(UnfinishedState(in.Records))
	}
	return out
}

// UnfinishedState is the state of a run whose run.json has no end: records
// is how many distinct records were read.
func UnfinishedState(records int) State {
	return State{Name: Unfinished, Severity: Invalid, Figure: 1, Unit: UnitCount,
		Says: fmt.Sprintf("the run did not finish: llmbench was stopped before it wrote its end (killed?); %d %s read",
			records, plural(records, "record was", "records were")),
		Covers: "latencies cover the requests written before llmbench stopped"}
}

// Valid reports whether no state is Invalid.
func Valid(states []State) bool {
	for _, s := range states {
		if s.Severity == Invalid {
			return false
		}
	}
	return true
}

// Problems are the invalid states' words, in order: health.problems.
func Problems(states []State) []string {
	var out []string
	for _, s := range states {
		if s.Severity == Invalid {
			out = append(out, s.Says)
		}
	}
	return out
}

// Line is a state in one line for a reader: what it says, what the
// latencies cover, and its name in brackets.
func Line(s State) string {
	return fmt.Sprintf("%s; %s [%s]", s.Says, s.Covers, s.Name)
}

// failures is the failures' state: over the bound (invalid) or within it
// (a warning), none when nothing failed. The rate is over the requests the
// run did not cancel itself, as client.error_rate is.
func failures(in Input) (State, bool) {
	if in.Failed == 0 {
		return State{}, false
	}
	bound := in.MaxFailureRate
	if bound <= 0 {
		bound = DefaultMaxFailureRate
	}
	counted := in.Sent - in.Canceled
	if counted <= 0 {
		return State{}, false
	}
	rate := float64(in.Failed) / float64(counted)
	ok := counted - in.Failed
	covers := fmt.Sprintf("latencies cover the %s of requests that succeeded (%d of %d); the %d that failed %s in no latency figure",
		pct(float64(ok)/float64(counted)), ok, counted, in.Failed, plural(in.Failed, "is", "are"))
	if rate > bound {
		return State{Name: FailuresOverBound, Severity: Invalid, Figure: rate, Bound: bound, Unit: UnitFraction,
			Says: fmt.Sprintf("%s of requests failed (%d of %d), above the %s bound (report.validity.max_failure_rate): the survivors' latencies do not describe the load",
				pct(rate), in.Failed, counted, pct(bound)),
			Covers: covers}, true
	}
	return State{Name: FailuresWithinBound, Severity: Warning, Figure: rate, Bound: bound, Unit: UnitFraction,
		Says: fmt.Sprintf("%s of requests failed (%d of %d), within the %s bound (report.validity.max_failure_rate)",
			pct(rate), in.Failed, counted, pct(bound)),
		Covers: covers}, true
}

// clientDelay is the client's own health as selfmon judged it (its Delay
// verdict, in run.json): a container's CPU limit first, then the client's
// own CPU, then other processes.
func clientDelay(c rundir.ClientHealth) (State, bool) {
	const covers = "latencies cover every request, each including the client's own delay"
	switch {
	case c.Delay == selfmon.DelayThrottled:
		// The whole process stood still, cores idle or not: neither the Go
		// scheduler's delay nor the host's share shows it.
		return State{Name: ClientThrottled, Severity: Invalid, Figure: c.Throttled_s, Bound: selfmon.ThrottledTolerance.Seconds(), Unit: UnitSeconds,
			Says: fmt.Sprintf("the CPU limit of llmbench's container%s stopped the client %d times, %.0f ms in all: timestamps taken then are late by up to a scheduling period; raise or remove the limit (Kubernetes: no CPU limit, or one well above its use) or shard the load over more processes",
				QuotaText(c.CPUQuota), c.ThrottledPeriods, 1000*c.Throttled_s),
			Covers: covers}, true
	case c.Saturated:
		return State{Name: ClientSaturated, Severity: Invalid, Figure: c.CPUUtilization, Bound: selfmon.CPUBound, Unit: UnitFraction,
			Says: fmt.Sprintf("the client itself was saturated (%.0f%% of %d cores): its latencies include its own delay; use a bigger client machine or shard the run",
				100*c.CPUUtilization, c.CPUCores),
			Covers: covers}, true
	case c.Delay == selfmon.DelayHost && c.HostOtherCPU != nil:
		// The whole process waits for a core then, which the Go scheduler's
		// delay does not show: the share of the machine others used does.
		return State{Name: HostDelayed, Severity: Invalid, Figure: c.SchedLatencyP99_s, Bound: selfmon.LateScheduler.Seconds(), Unit: UnitSeconds,
			Says: fmt.Sprintf("the host delayed the client: other processes used %.0f%% of the machine (the engine too, when it runs on this host) and left it under half a core idle; its goroutines waited %.1f ms (p99) at %.0f%% of its cores; its latencies include that delay: give llmbench cores of its own (taskset, a cpuset) or a quieter host",
				100**c.HostOtherCPU, 1000*c.SchedLatencyP99_s, 100*c.CPUUtilization),
			Covers: covers}, true
	case c.Delay == selfmon.DelayHost:
		return State{Name: HostDelayed, Severity: Invalid, Figure: c.SchedLatencyP99_s, Bound: selfmon.LateScheduler.Seconds(), Unit: UnitSeconds,
			Says: fmt.Sprintf("the host delayed the client: its goroutines waited %.1f ms (p99) to run while it used %.0f%% of its cores, so other processes took them; its latencies include that delay: run on a quieter host or set CPUs aside for llmbench",
				1000*c.SchedLatencyP99_s, 100*c.CPUUtilization),
			Covers: covers}, true
	}
	return State{}, false
}

// QuotaText names a CPU limit in cores, "" when there is none.
func QuotaText(quota *float64) string {
	if quota == nil {
		return ""
	}
	return fmt.Sprintf(" (%g cores)", *quota)
}

// pct writes a fraction as a percentage with as many decimals as it needs
// to tell it from its neighbours (39%, 1.5%, 0.25%).
func pct(f float64) string {
	switch p := 100 * f; {
	case p >= 99.5 && p < 100:
		return fmt.Sprintf("%.1f%%", min(p, 99.9))
	case p == 0 || p >= 10:
		return fmt.Sprintf("%.0f%%", p)
	case p >= 1:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", p), ".0") + "%"
	default:
		return fmt.Sprintf("%.2g%%", p)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
