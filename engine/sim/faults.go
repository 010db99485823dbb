package sim

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/llmbench-org/llmbench/engine/sim/batch"
)

// Faults are deliberate misbehaviours, for testing a client's error
// handling and a harness's resilience. The zero value injects none. Rates
// are fractions of requests (or of /metrics scrapes) in [0, 1]; which
// requests are hit is drawn from (Seed, request id, fault), so the same
// request id always gets the same faults. Every fault applied to a request
// is listed in its RequestTruth.Faults.
type Faults struct {
	// Seed for the draws; 0 = Params.Seed.
	Seed int64 `yaml:"seed"`

	// ErrorRate answers requests at once with an error status drawn from
	// ErrorStatuses (default 429, 500, 503) and OpenAI's error JSON; 429 and
	// 503 carry Retry-After: 1.
	ErrorRate     float64 `yaml:"error_rate"`
	ErrorStatuses []int   `yaml:"error_statuses"`

	// ResetRate closes the connection abruptly (no chunk terminator, no
	// [DONE]) after AfterTokens tokens of a stream.
	ResetRate float64 `yaml:"reset_rate"`
	// StallRate pauses a stream for StallFor after AfterTokens tokens; the
	// engine keeps generating, the tokens arrive late.
	StallRate float64       `yaml:"stall_rate"`
	StallFor  time.Duration `yaml:"stall_for"`
	// MalformedRate replaces the chunk of token AfterTokens+1 with a data line
	// that is not valid JSON; the stream then goes on.
	MalformedRate float64 `yaml:"malformed_rate"`
	// MissingDoneRate ends streams cleanly but without "data: [DONE]".
	MissingDoneRate float64 `yaml:"missing_done_rate"`
	// StreamErrorRate ends streams after AfterTokens tokens with an error
	// event (data: {"error": {...}}) and no [DONE], as llama.cpp does when
	// its output parser fails; the engine goes on generating the request
	// to its end (RequestTruth.GeneratedTokens).
	StreamErrorRate float64 `yaml:"stream_error_rate"`
	// AfterTokens is where mid-stream faults strike (default 1: after the
	// first token).
	AfterTokens int `yaml:"after_tokens"`

	// SlowFirstByteRate delays the response headers of requests by SlowFirstByte.
	SlowFirstByteRate float64       `yaml:"slow_first_byte_rate"`
	SlowFirstByte     time.Duration `yaml:"slow_first_byte"`

	// MetricsFailRate makes /metrics scrapes fail: MetricsFailMode "status"
	// answers MetricsFailStatus (default 500), "timeout" answers after
	// MetricsDelay (default 30s) or when the scraper gives up, "malformed"
	// answers 200 with text that is not valid exposition.
	MetricsFailRate   float64       `yaml:"metrics_fail_rate"`
	MetricsFailMode   string        `yaml:"metrics_fail_mode"`
	MetricsFailStatus int           `yaml:"metrics_fail_status"`
	MetricsDelay      time.Duration `yaml:"metrics_delay"`

	// RestartEvery restarts the engine periodically (0 = never): in-flight
	// requests lose their connection, the queue, the KV and prefix caches and
	// every metric start from zero. During RestartDowntime chat requests get
	// 503 and /metrics fails with 503.
	RestartEvery    time.Duration `yaml:"restart_every"`
	RestartDowntime time.Duration `yaml:"restart_downtime"`
	// RestartRefuse makes a restart's downtime what a real restart looks
	// like from the network instead of 503s: the listening socket is closed
	// (new connections are refused), every open connection is closed, and
	// the engine listens again on the same address once RestartDowntime has
	// passed (restart_refuse.go). Engine.Downtimes is the ground truth.
	RestartRefuse bool `yaml:"restart_refuse"`
	// RestartAtFinished restarts the engine once, at a point no host's
	// timing moves (0 = never): once it has finished this many requests it
	// takes no new request into its batch until /metrics is next read, and
	// restarts as that read is answered, with the old process's final
	// counts. The scraper so holds every count before the restart, and the
	// next scrape reads the fresh process's: a run of fewer than twice this
	// many requests sees its counters go down, exactly once (TestFaultMatrix).
	// The requests held or in flight are cut by the restart.
	RestartAtFinished int `yaml:"restart_at_finished"`

	// DialectSwitchAfter changes /metrics to another engine family's names
	// this long after the engine started (0 = never), as when another
	// server takes the metrics port or a gateway switches backends: from
	// then on the metrics are DialectSwitchTo's, a fresh set that had
	// already counted DialectSwitchPrior finished requests (of other
	// clients, before the switch). Requests are not disturbed; the switch's
	// time on the engine clock is Engine.DialectSwitchedAt (ground truth).
	DialectSwitchAfter time.Duration `yaml:"dialect_switch_after"`
	DialectSwitchTo    string        `yaml:"dialect_switch_to"`
	DialectSwitchPrior int           `yaml:"dialect_switch_prior"`

	// Wire changes how responses are framed on the wire (SSE line endings,
	// BOM, multi-line data, extra fields, content codings, lingering
	// connections): every one a valid stream a real server, gateway or proxy
	// sends, with the same ground truth (wireframe.go).
	Wire WireFaults `yaml:"wire"`
	// Payload changes what the chunks say (content as parts arrays, error
	// shapes, usage claims, chunks after finish_reason): valid shapes the
	// client must read and protocol violations it must flag (payloadfaults.go).
	Payload PayloadFaults `yaml:"payload"`
}

// Fault names, as they appear in RequestTruth.Faults.
const (
	FaultError         = "error"
	FaultReset         = "reset"
	FaultStall         = "stall"
	FaultMalformed     = "malformed"
	FaultMissingDone   = "missing_done"
	FaultSlowFirstByte = "slow_first_byte"
	FaultRestart       = "restart"
	FaultStreamError   = "stream_error"
)

// Validate reports every invalid field at once.
func (f Faults) Validate() error {
	var errs []error
	rate := func(name string, v float64) {
		if v < 0 || v > 1 || math.IsNaN(v) {
			errs = append(errs, fmt.Errorf("faults.%s must be in [0, 1], got %g", name, v))
		}
	}
	rate("error_rate", f.ErrorRate)
	rate("reset_rate", f.ResetRate)
	rate("stall_rate", f.StallRate)
	rate("malformed_rate", f.MalformedRate)
	rate("missing_done_rate", f.MissingDoneRate)
	rate("stream_error_rate", f.StreamErrorRate)
	rate("slow_first_byte_rate", f.SlowFirstByteRate)
	rate("metrics_fail_rate", f.MetricsFailRate)
	for _, s := range f.ErrorStatuses {
		if s < 400 || s > 599 {
			errs = append(errs, fmt.Errorf("faults.error_statuses: %d is not a 4xx/5xx status", s))
		}
	}
	switch f.MetricsFailMode {
	case "", "status", "timeout", "malformed":
	default:
		errs = append(errs, fmt.Errorf("faults.metrics_fail_mode %q: want status, timeout or malformed", f.MetricsFailMode))
	}
	if f.MetricsFailStatus != 0 && (f.MetricsFailStatus < 400 || f.MetricsFailStatus > 599) {
		errs = append(errs, fmt.Errorf("faults.metrics_fail_status %d is not a 4xx/5xx status", f.MetricsFailStatus))
	}
	for name, d := range map[string]time.Duration{
		"stall_for": f.StallFor, "slow_first_byte": f.SlowFirstByte, "metrics_delay": f.MetricsDelay,
		"restart_every": f.RestartEvery, "restart_downtime": f.RestartDowntime,
	} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("faults.%s must be >= 0, got %v", name, d))
		}
	}
	if f.RestartAtFinished < 0 {
		errs = append(errs, fmt.Errorf("faults.restart_at_finished must be >= 0, got %d", f.RestartAtFinished))
	}
	if f.AfterTokens < 0 {
		errs = append(errs, fmt.Errorf("faults.after_tokens must be >= 0, got %d", f.AfterTokens))
	}
	if f.StallRate > 0 && f.StallFor == 0 {
		errs = append(errs, errors.New("faults.stall_rate is set but stall_for is 0"))
	}
	if f.SlowFirstByteRate > 0 && f.SlowFirstByte == 0 {
		errs = append(errs, errors.New("faults.slow_first_byte_rate is set but slow_first_byte is 0"))
	}
	if f.DialectSwitchAfter < 0 || f.DialectSwitchPrior < 0 {
		errs = append(errs, errors.New("faults.dialect_switch_after and dialect_switch_prior must be >= 0"))
	}
	if f.DialectSwitchAfter > 0 {
		if _, err := metricsFor(f.DialectSwitchTo, Config{}, nil); err != nil {
			errs = append(errs, fmt.Errorf("faults.dialect_switch_to: %w", err))
		}
	}
	if f.RestartRefuse && f.RestartDowntime <= 0 {
		errs = append(errs, errors.New("faults.restart_refuse needs a restart_downtime > 0 (how long connections are refused)"))
	}
	if f.RestartEvery > 0 && f.RestartDowntime >= f.RestartEvery {
		errs = append(errs, errors.New("faults.restart_downtime must be shorter than restart_every"))
	}
	errs = append(errs, f.Wire.validate(), f.Payload.validate())
	return errors.Join(errs...)
}

// requestFaults is what the faults decided for one request.
type requestFaults struct {
	errStatus     int // 0 = none
	reset         bool
	stall         time.Duration
	malformed     bool
	missingDone   bool
	streamError   bool
	slowFirstByte time.Duration
	after         int
}

// draw decides the faults of one request.
func (f *Faults) draw(seed int64, id string) requestFaults {
	if f.Seed != 0 {
		seed = f.Seed
	}
	hit := func(kind string, rate float64) bool {
		if rate <= 0 {
			return false
		}
		u := float64(batch.Mix64(uint64(seed)^batch.HashString(kind+"\x00"+id))>>11) / (1 << 53)
		return u < rate
	}
	var r requestFaults
	r.after = f.AfterTokens
	if r.after == 0 {
		r.after = 1
	}
	if hit(FaultError, f.ErrorRate) {
		statuses := f.ErrorStatuses
		if len(statuses) == 0 {
			statuses = []int{429, 500, 503}
		}
		r.errStatus = statuses[batch.Mix64(uint64(seed)^batch.HashString("status\x00"+id))%uint64(len(statuses))]
		return r // an error answer has no stream to break
	}
	r.reset = hit(FaultReset, f.ResetRate)
	if hit(FaultStall, f.StallRate) {
		r.stall = f.StallFor
	}
	r.malformed = hit(FaultMalformed, f.MalformedRate)
	r.missingDone = hit(FaultMissingDone, f.MissingDoneRate)
	r.streamError = hit(FaultStreamError, f.StreamErrorRate)
	if hit(FaultSlowFirstByte, f.SlowFirstByteRate) {
		r.slowFirstByte = f.SlowFirstByte
	}
	return r
}

// metricsFault decides whether scrape number n fails.
func (f *Faults) metricsFault(seed int64, n uint64) bool {
	if f.MetricsFailRate <= 0 {
		return false
	}
	if f.Seed != 0 {
		seed = f.Seed
	}
	u := float64(batch.Mix64(uint64(seed)^n^0x6d657472696373)>>11) / (1 << 53)
	return u < f.MetricsFailRate
}
