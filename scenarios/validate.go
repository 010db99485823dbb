package scenarios

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/engines"
)

// Defaults that are not obvious from a zero value. Each is also stated on the
// field it fills.
const (
	DefaultSeed             = 1
	DefaultSimDialect       = engines.SGLang
	DefaultArrival          = ArrivalPoisson
	DefaultCV               = 1.0
	DefaultPromptTokens     = 256
	DefaultOutputTokens     = 128
	DefaultLateAfter        = 10 * time.Millisecond
	DefaultScrapeInterval   = time.Second
	DefaultAutoPoints       = 5
	DefaultProbeConcurrency = 256
	DefaultTimeScale        = 1.0
	DefaultBlockSize        = 512
	DefaultAbortMinRequests = 20
	DefaultAbortUnreachable = 5 * time.Second
	DefaultAbortFirst       = 20
	DefaultRequestTimeout   = 30 * time.Minute
	// DefaultStallTimeout is long enough for a request queued behind an
	// overloaded engine's batch (no byte until its prefill), short enough
	// that a server that never answers does not hold a run for the
	// 30-minute request timeout.
	DefaultStallTimeout = 5 * time.Minute
)

var (
	namePattern    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// fill sets the default of every field the file left out.
func (s *Scenario) fill(d *decoder) {
	if !d.has("seed") {
		s.Seed = DefaultSeed
	}
	if s.Engine.Kind == KindSim && s.Engine.Dialect == "" {
		s.Engine.Dialect = DefaultSimDialect
	}
	s.Workload.fill(d, "workload")
	if s.SLO != nil && !d.has("slo.target") {
		s.SLO.Target = DefaultSLOTarget
	}
	if !d.has("scrape.interval") {
		s.Scrape.Interval = DefaultScrapeInterval
	}
	if !d.has("scrape.timeout") {
		s.Scrape.Timeout = s.Scrape.Interval
	}
}

func (w *Workload) fill(d *decoder, path string) {
	at := func(f string) string { return joinPath(path, f) }
	sweepOpen := (w.Sweep != nil && (len(w.Sweep.Rates) > 0 || w.Sweep.Auto != nil)) || (w.Search != nil && w.Search.Over == SearchRate)
	if w.Search != nil {
		w.Search.fill(d, at("search"))
	}
	w.LoadSpec.fill(sweepOpen)
	if w.Warmup != nil {
		w.Warmup.LoadSpec.fill(false)
	}
	if w.Cooldown != nil {
		w.Cooldown.LoadSpec.fill(false)
	}
	for i := range w.Phases {
		ph := &w.Phases[i]
		ph.LoadSpec.fill(false)
		if ph.Measured == nil {
			ph.Measured = ptr(true)
		}
		if ph.Drain == nil {
			ph.Drain = ptr(true)
		}
	}
	if a := w.Sweep; a != nil && a.Auto != nil {
		if !d.has(at("sweep.auto.points")) {
			a.Auto.Points = DefaultAutoPoints
		}
		if !d.has(at("sweep.auto.probe_concurrency")) {
			a.Auto.ProbeConcurrency = DefaultProbeConcurrency
		}
	}
	if t := w.Trace; t != nil {
		if !d.has(at("trace.time_scale")) {
			t.TimeScale = DefaultTimeScale
		}
		if t.Format == TraceMooncake && !d.has(at("trace.block_size")) {
			t.BlockSize = DefaultBlockSize
		}
	}
	if w.Images != nil {
		w.Images.fill(d, at("images"), w.Trace != nil)
	}
	if w.Abort.ErrorRate > 0 && !d.has(at("abort.min_requests")) {
		w.Abort.MinRequests = DefaultAbortMinRequests
	}
	if !d.has(at("abort.unreachable")) {
		w.Abort.Unreachable = DefaultAbortUnreachable
	}
	if !d.has(at("abort.first_failures")) {
		w.Abort.FirstFailures = DefaultAbortFirst
	}
	if !d.has(at("late_after")) {
		w.LateAfter = DefaultLateAfter
	}
	if !d.has(at("timeout")) {
		w.Timeout = DefaultRequestTimeout
	}
	if !d.has(at("stall_timeout")) {
		w.StallTimeout = DefaultStallTimeout
	}
	if w.IgnoreEOS == nil {
		w.IgnoreEOS = ptr(true)
	}
	if w.Trace == nil && w.Dataset.Type == "" {
		w.Dataset.Type = DatasetSynthetic
	}
	// Lengths are filled only where the dataset uses them: sharegpt and jsonl
	// take the file's output length unless output_tokens is set.
	switch w.Dataset.Type {
	case DatasetSynthetic, DatasetSharedPrefix, DatasetMultiTurn:
		if !d.has(at("prompt_tokens")) {
			w.Prompt = Length{Dist: DistFixed, Value: DefaultPromptTokens}
		}
		if !d.has(at("output_tokens")) {
			w.Output = Length{Dist: DistFixed, Value: DefaultOutputTokens}
		}
	}
	w.Prompt.fill()
	w.Output.fill()
}

// fill sets the open-loop defaults of a load that is an open loop (or that
// sweep points make one).
func (l *LoadSpec) fill(open bool) {
	if l.open() || open {
		if l.Arrival == "" {
			l.Arrival = DefaultArrival
		}
		if l.Arrival == ArrivalGamma && l.CV == 0 {
			l.CV = DefaultCV
		}
	}
	if l.MaxConcurrency > 0 && l.WhenCapped == "" {
		l.WhenCapped = CappedDrop
	}
}

func (l *Length) fill() {
	if (l.Dist == DistNormal || l.Dist == DistLognormal) && l.Min == 0 {
		l.Min = 1
	}
}

func ptr[T any](v T) *T { return &v }

// open reports whether the load is an open loop (a rate, or rate stages).
func (l LoadSpec) open() bool {
	return l.Rate > 0 || (len(l.Stages) > 0 && stagesAreRates(l.Stages))
}

// stagesAreRates reports whether a ramp is of rates: what its first stage names.
func stagesAreRates(st []Stage) bool {
	return len(st) > 0 && st[0].ofRate
}

// validate records every semantic error; the types were checked while decoding.
func (s *Scenario) validate(d *decoder) {
	switch {
	case !d.has("name"):
		d.failf("name", "missing required field")
	case !namePattern.MatchString(s.Name):
		d.failf("name", "want 1 to 64 letters, digits, '.', '_' or '-' (it names run directories and request ids), got %q", s.Name)
	}
	if l := s.Engine.Launch; l != nil && l.Model == "" {
		l.Model = s.Model // what the engine loads defaults to the model requested
	}
	s.Engine.validate(d, "engine")

	if !d.has("workload") {
		d.failf("workload", "missing required field")
	} else {
		s.Workload.validate(d, "workload", s.src)
		s.Workload.validateImages(d, "workload", s.Request.Endpoint, s.src)
	}
	s.Scrape.validate(d, "scrape")
	if o := s.Scrape.OTLP; o != nil && s.Engine.Kind == KindSim && o.HTTP == OTLPOff && o.GRPC != OTLPOff {
		// The built-in engine exports OTLP/HTTP only (engine/sim/otlp.go):
		// with that receiver off, the run would silently have no spans.
		d.failf("scrape.otlp.http", "the built-in engine exports OTLP/HTTP only, so with http off it would send no spans: turn grpc off instead, or leave both on")
	}
	s.validateSGLangExport(d) // sglangexport.go
	s.validateGPUAndCache(d)
	s.SLO.validate(d)
	s.validateDecisions(d)
	s.Request.validate(d)
	s.validatePooling(d) // pooling.go
	if s.Report == nil {
		s.Report = &ReportSettings{} // its defaults filled below: the resolved scenario shows them
	}
	s.Report.validate(d)
	s.Gates.validate(d)
}

func (o *SLO) validate(d *decoder) {
	if o == nil {
		return
	}
	if o.TTFT == 0 && o.TPOT == 0 && o.E2E == 0 && !d.has("slo.ttft") && !d.has("slo.tpot") && !d.has("slo.e2e") {
		d.failf("slo", "set at least one of ttft, tpot, e2e, or remove slo")
	}
	if o.Target <= 0 || o.Target > 1 {
		d.failf("slo.target", "want a share of requests in (0, 100%%], got %g", float64(o.Target))
	}
	for _, b := range []struct {
		name string
		v    time.Duration
	}{{"ttft", o.TTFT}, {"tpot", o.TPOT}, {"e2e", o.E2E}} {
		// A bound of 0 no request can meet (and a resolved scenario would
		// drop it, as unset).
		if b.v < 0 || (b.v == 0 && d.has("slo."+b.name)) {
			d.failf("slo."+b.name, "want a positive duration, got %v", b.v)
		}
	}
}

func (g *Gates) validate(d *decoder) {
	if g == nil {
		return
	}
	if len(g.Thresholds) == 0 {
		d.failf("gates.thresholds", "missing: list at least one threshold, or remove gates")
	}
	for i, th := range g.Thresholds {
		if strings.TrimSpace(th) == "" {
			d.failf(fmt.Sprintf("gates.thresholds[%d]", i), "empty threshold")
		}
	}
}

func (e *Engine) validate(d *decoder, path string) {
	at := func(f string) string { return joinPath(path, f) }
	if !d.has(path) {
		d.failf(path, "missing required field")
		return
	}
	switch e.Kind {
	case KindSim:
		if sims := engines.Simulated(); !slices.Contains(sims, e.Dialect) {
			d.failf(at("dialect"), "the built-in engine speaks %s, not %q", orList(sims), e.Dialect)
		}
		for _, f := range []string{"base_url", "metrics_url", "api_key_env"} {
			if d.has(at(f)) {
				d.failf(at(f), "only for kind external: the built-in engine listens where llmbench starts it")
			}
		}
		switch e.Process {
		case "":
			e.Process = ProcessSeparate
		case ProcessSeparate, ProcessInline:
		default:
			d.failf(at("process"), "want separate (a child process) or inline, got %q", e.Process)
		}
	case KindExternal:
		checkDialect(d, at("dialect"), e.Dialect)
		if !d.has(at("base_url")) {
			d.failf(at("base_url"), "missing required field for kind external")
		} else {
			checkURL(d, at("base_url"), e.BaseURL)
		}
		if e.MetricsURL != "" {
			checkURL(d, at("metrics_url"), e.MetricsURL)
		}
		if e.APIKeyEnv != "" && !envNamePattern.MatchString(e.APIKeyEnv) {
			d.failf(at("api_key_env"), "want an environment variable name, got %q", e.APIKeyEnv)
		}
		for _, f := range []string{"preset", "sim", "faults", "process"} {
			if d.has(at(f)) {
				d.failf(at(f), "only for kind sim: llmbench does not model an external engine")
			}
		}
	case KindLaunch:
		checkDialect(d, at("dialect"), e.Dialect)
		if e.APIKeyEnv != "" && !envNamePattern.MatchString(e.APIKeyEnv) {
			d.failf(at("api_key_env"), "want an environment variable name, got %q", e.APIKeyEnv)
		}
		for _, f := range []string{"base_url", "metrics_url", "preset", "sim", "faults", "process"} {
			if d.has(at(f)) {
				d.failf(at(f), "not for kind launch: llmbench starts the engine on the address it chooses")
			}
		}
		if e.Launch == nil {
			d.failf(at("launch"), "missing required field for kind launch")
		} else {
			e.Launch.validate(d, at("launch"))
		}
	case "":
		d.failf(at("kind"), "missing required field: sim, external or launch")
	default:
		d.failf(at("kind"), "unknown engine kind %q: sim, external or launch", e.Kind)
	}
	if e.Kind != KindLaunch && d.has(at("launch")) {
		d.failf(at("launch"), "only for kind launch")
	}
}

func (l *Launch) validate(d *decoder, path string) {
	at := func(f string) string { return joinPath(path, f) }
	// The launch kinds are the engine families with a launch command
	// (package engines), then any command.
	kinds := append(engines.Launchable(), "command")
	switch {
	case l.Kind == "command":
		if len(l.Command) == 0 {
			d.failf(at("command"), "missing required field for kind command: the engine's argv")
		}
	case slices.Contains(kinds, l.Kind):
		if l.Model == "" && len(l.Command) == 0 {
			d.failf(at("model"), "missing: the model the engine loads (or the scenario's model)")
		}
	case l.Kind == "":
		d.failf(at("kind"), "missing required field: %s", orList(kinds))
	default:
		d.failf(at("kind"), "unknown launch kind %q: %s", l.Kind, orList(kinds))
	}
	for _, f := range []struct {
		name string
		port int
	}{{"port", l.Port}, {"metrics_port", l.MetricsPort}} {
		if f.port < 0 || f.port > 65535 {
			d.failf(at(f.name), "want a port from 0 (a free one) to 65535, got %d", f.port)
		}
	}
	if l.ReadyTimeout < 0 {
		d.failf(at("ready_timeout"), "want a positive duration, got %s", l.ReadyTimeout)
	}
	for _, f := range []struct {
		name string
		mib  int
	}{{"log_head_mib", l.LogHeadMiB}, {"log_tail_mib", l.LogTailMiB}} {
		if f.mib < 0 || f.mib > 1<<20 {
			d.failf(at(f.name), "want MiB from 1 to 1048576 (0: the default, 16), got %d", f.mib)
		}
	}
	for i, kv := range l.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || !envNamePattern.MatchString(k) {
			d.failf(fmt.Sprintf("%s[%d]", at("env"), i), "want NAME=value, got %q", kv)
		}
	}
	if l.ReadyPath != "" && !strings.HasPrefix(l.ReadyPath, "/") {
		d.failf(at("ready_path"), "want a path starting with /, got %q", l.ReadyPath)
	}
}

// placeErrors reports the built-in engine's own validation errors, each at
// the parameter it names when it starts with one (after prefix).
func placeErrors(d *decoder, path, prefix string, err error) {
	if err == nil {
		return
	}
	errs := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	}
	for _, e := range errs {
		name, _, _ := strings.Cut(strings.TrimPrefix(e.Error(), prefix), " ")
		at := joinPath(path, name)
		if !d.has(at) {
			at = path
		}
		d.errorf(d.at(at), at, "%v", e)
	}
}

// Bounds beyond which a value validates as a number but cannot be run: the
// run would exhaust memory or never end. Each error states its bound.
const (
	// MaxLengthTokens bounds a prompt or output length: no model's context
	// comes near, and the prompt text of one such request is tens of MB.
	MaxLengthTokens = 10_000_000
	// MaxRate bounds an open loop's arrivals per second: far beyond what one
	// process can send (shard the run).
	MaxRate = 1_000_000
	// MaxConcurrency bounds the streams one llmbench process holds (about
	// 60 KB each: 8,000 were measured); shard the run beyond it.
	MaxConcurrency = 100_000
)

// checkBound reports a value above its bound.
func checkBound(d *decoder, path string, v, bound float64, what string) {
	if v > bound || math.IsInf(v, 1) {
		d.failf(path, "%g is beyond what a run can hold: at most %g %s", v, bound, what)
	}
}

func (r *ReportSettings) validate(d *decoder) {
	if r == nil {
		return
	}
	if !d.has("report.validity.max_failure_rate") {
		r.Validity.MaxFailureRate = DefaultMaxFailureRate
	} else if v := r.Validity.MaxFailureRate; !(v > 0 && v <= 1) {
		d.failf("report.validity.max_failure_rate", "want a share of requests above 0 and at most 1 (0.05 for 5%%), got %g", v)
	}
	const most = 8 // columns a table can hold
	ps := r.Percentiles
	if len(ps) > most {
		d.failf("report.percentiles", "at most %d percentiles, got %d", most, len(ps))
	}
	for i, p := range ps {
		at := fmt.Sprintf("report.percentiles[%d]", i)
		switch {
		case !(p > 0 && p < 100):
			d.failf(at, "want a percentile between 0 and 100 (exclusive), got %g", p)
		case i > 0 && p <= ps[i-1]:
			d.failf(at, "list the percentiles in increasing order: %g after %g", p, ps[i-1])
		}
	}
}

// checkDialect reports a dialect llmbench does not know, naming those it does.
func checkDialect(d *decoder, path, dialect string) {
	if dialect != "" && !engines.Known(dialect) {
		d.failf(path, "unknown dialect %q: want %s, or leave it out to detect it from /metrics", dialect, orList(engines.Names()))
	}
}

// orList spells choices as "a, b or c".
func orList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// reservedBody are the body fields a request gets from the plan and the run,
// besides every endpoint's input member and every engine family's id field
// (the registries').
// (stream_options is merged member by member: continuous_usage_stats, say.)
var reservedBody = map[string]string{
	"model":    "set the scenario's model (a LoRA adapter is selected by its name as the model)",
	"messages": "the dataset makes them", "prompt": "the dataset makes it",
	"stream":     "use request.stream",
	"max_tokens": "the plan sets it from workload.output_tokens", "max_completion_tokens": "the plan sets max_tokens from workload.output_tokens",
	"min_tokens": "the plan sets it with workload.ignore_eos", "ignore_eos": "use workload.ignore_eos",
	// The responses endpoint's max_tokens.
	"max_output_tokens": "the plan sets it from workload.output_tokens",
}

// ReservedBodyMember says whether llmbench sets the body member k itself
// (request.extra_body may not), and why: the plan's and the run's fields,
// every endpoint's input member and every engine family's id field.
func ReservedBodyMember(k string) (why string, ok bool) {
	if why, ok := reservedBody[k]; ok {
		return why, true
	}
	for _, ep := range endpoints.All() {
		if ep.Reserved == k {
			return "the dataset makes it", true
		}
	}
	for _, f := range engines.All() {
		if f.IDs.BodyField != "" && f.IDs.BodyField == k {
			return "llmbench sends each request's id", true
		}
	}
	return "", false
}

func (r *Request) validate(d *decoder) {
	// "" is chat, left unsaid in the resolved scenario.
	if r.Endpoint != "" && !slices.Contains(endpoints.Names(), r.Endpoint) {
		d.failf("request.endpoint", "want %s, got %q", orList(endpoints.Names()), r.Endpoint)
	}
	for k := range r.ExtraBody {
		if why, ok := ReservedBodyMember(k); ok {
			d.failf(joinPath("request.extra_body", k), "llmbench sets %s itself: %s", k, why)
		}
	}
	for k := range r.Headers {
		if strings.ContainsAny(k, " :\t\r\n") {
			d.failf(joinPath("request.headers", k), "not a header name: %q", k)
		}
	}
}

func checkURL(d *decoder, path, raw string) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		d.failf(path, "want an absolute http(s) URL, got %q", raw)
	}
}

// notAllowed reports each listed field present under path with why.
func notAllowed(d *decoder, path string, fields []string, why string) {
	for _, f := range fields {
		if d.has(joinPath(path, f)) {
			d.failf(joinPath(path, f), "%s", why)
		}
	}
}

var (
	loadKinds      = []string{"concurrency", "rate", "stages"}
	loadModifiers  = []string{"think_time", "arrival", "cv", "max_concurrency", "when_capped"}
	openModifiers  = []string{"arrival", "cv", "max_concurrency", "when_capped"}
	limitFields    = []string{"duration", "requests"}
	lengthKeys     = []string{"prompt_tokens", "output_tokens"}
	datasetByTrace = append([]string{"dataset"}, lengthKeys...)
)

func (w *Workload) validate(d *decoder, path string, src source) {
	at := func(f string) string { return joinPath(path, f) }
	hasLoad := d.has(at("concurrency")) || d.has(at("rate")) || d.has(at("stages"))
	switch {
	case w.Trace != nil:
		notAllowed(d, path, append(loadKinds, "sweep", "search", "phases", "warmup", "cooldown"), "not with trace: the trace's timestamps are the load")
		notAllowed(d, path, []string{"think_time", "arrival", "cv"}, "not with trace: the trace's timestamps are the arrivals")
		notAllowed(d, path, datasetByTrace, "not with trace: the trace gives each request's lengths")
		w.Trace.validate(d, at("trace"), src)
		w.LoadSpec.validateModifiers(d, path, true)
		w.Limits.validate(d, path, false)
	case w.Search != nil:
		notAllowed(d, path, loadKinds, "not with search: the search chooses each probe's load")
		notAllowed(d, path, []string{"sweep", "phases", "cooldown"}, "not with search: each probe drains before the next, and the search chooses the loads")
		w.Search.validate(d, at("search"), path, &w.LoadSpec)
		w.Limits.validate(d, path, true)
	case w.Sweep != nil:
		notAllowed(d, path, loadKinds, "not with sweep: the sweep points are the load")
		notAllowed(d, path, []string{"phases", "cooldown"}, "not with sweep: each point drains before the next, so a cooldown would only cover the last")
		w.Sweep.validate(d, at("sweep"), path, &w.LoadSpec)
		w.Limits.validate(d, path, true)
	case w.Phases != nil:
		notAllowed(d, path, limitFields, "not with phases: give each phase its own duration or requests")
		notAllowed(d, path, []string{"warmup", "cooldown"}, "not with phases: list them as phases with measured: false")
		if hasLoad {
			w.LoadSpec.validate(d, path)
		} else {
			w.LoadSpec.validateModifiers(d, path, w.LoadSpec.open())
		}
		w.validatePhases(d, at("phases"), hasLoad)
	default:
		if !hasLoad {
			d.failf(path, "missing required field: concurrency (closed loop), rate (open loop), stages, sweep, trace or phases")
			break
		}
		w.LoadSpec.validate(d, path)
		w.Limits.validate(d, path, len(w.Stages) == 0)
	}
	for _, side := range []struct {
		name string
		ph   *Phase
	}{{"warmup", w.Warmup}, {"cooldown", w.Cooldown}} {
		if side.ph == nil {
			continue
		}
		p := at(side.name)
		notAllowed(d, p, []string{"name", "measured", "drain"}, "not in "+side.name+": it is named so and never measured")
		if d.has(joinPath(p, "concurrency")) || d.has(joinPath(p, "rate")) || d.has(joinPath(p, "stages")) {
			side.ph.LoadSpec.validate(d, p)
		} else {
			notAllowed(d, p, loadModifiers, "set concurrency, rate or stages to give "+side.name+" its own load; without them it inherits the workload's whole load")
		}
		side.ph.Limits.validate(d, p, len(side.ph.Stages) == 0)
	}
	if w.Abort.Errors < 0 {
		d.failf(at("abort.errors"), "want at least 0, got %d", w.Abort.Errors)
	}
	if w.Abort.ErrorRate < 0 || w.Abort.ErrorRate > 1 {
		d.failf(at("abort.error_rate"), "want a fraction in (0, 1], got %g", w.Abort.ErrorRate)
	}
	if w.Abort.MinRequests < 0 || (d.has(at("abort.min_requests")) && w.Abort.ErrorRate == 0) {
		d.failf(at("abort.min_requests"), "only with error_rate, and at least 0")
	}
	if w.Abort.FirstFailures < 0 {
		d.failf(at("abort.first_failures"), "want at least 0 (0: never), got %d", w.Abort.FirstFailures)
	}
	if w.Abort.Unreachable < 0 {
		d.failf(at("abort.unreachable"), "want a duration ≥ 0 (0s: never), got %s", w.Abort.Unreachable)
	}
	if w.Timeout < 0 {
		d.failf(at("timeout"), "want a duration ≥ 0 (0s: none), got %s", w.Timeout)
	}
	if w.StallTimeout < 0 {
		d.failf(at("stall_timeout"), "want a duration ≥ 0 (0s: none), got %s", w.StallTimeout)
	}
	if w.LateAfter < 0 {
		d.failf(at("late_after"), "want a duration ≥ 0, got %s", w.LateAfter)
	}
	if w.Trace == nil {
		w.Dataset.validate(d, at("dataset"), src)
		switch w.Dataset.Type {
		case DatasetShareGPT, DatasetJSONL:
			notAllowed(d, path, []string{"prompt_tokens"}, "not with dataset "+w.Dataset.Type+": the file gives the prompts")
		}
		w.Prompt.validate(d, at("prompt_tokens"), src)
		w.Output.validate(d, at("output_tokens"), src)
	}
}

func (w *Workload) validatePhases(d *decoder, path string, inherited bool) {
	if len(w.Phases) == 0 {
		d.failf(path, "empty: list at least one phase")
		return
	}
	names := map[string]int{}
	measured := false
	for i := range w.Phases {
		ph := &w.Phases[i]
		p := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case !d.has(joinPath(p, "name")):
			d.failf(joinPath(p, "name"), "missing required field")
		case !namePattern.MatchString(ph.Name):
			d.failf(joinPath(p, "name"), "want letters, digits, '.', '_' or '-', got %q", ph.Name)
		default:
			if first, dup := names[ph.Name]; dup {
				d.failf(joinPath(p, "name"), "duplicate phase name (also phases[%d])", first)
			}
			names[ph.Name] = i
		}
		measured = measured || *ph.Measured
		own := d.has(joinPath(p, "concurrency")) || d.has(joinPath(p, "rate")) || d.has(joinPath(p, "stages"))
		switch {
		case own:
			ph.LoadSpec.validate(d, p)
		case !inherited:
			d.failf(p, "no load: set concurrency, rate or stages here or on the workload")
		default:
			notAllowed(d, p, loadModifiers, "set concurrency, rate or stages to give the phase its own load; without them it inherits the workload's whole load")
		}
		ph.Limits.validate(d, p, len(ph.Stages) == 0 && !(inherited && !own && len(w.Stages) > 0))
	}
	if !measured {
		d.failf(path, "no measured phase: set measured: true on at least one")
	}
}

// validate checks a load that names its kind (concurrency, rate or stages).
func (l *LoadSpec) validate(d *decoder, path string) {
	at := func(f string) string { return joinPath(path, f) }
	var kinds []string
	for _, k := range loadKinds {
		if d.has(at(k)) {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) > 1 {
		d.failf(at(kinds[1]), "set one of concurrency (closed loop), rate (open loop) or stages, not %s", strings.Join(kinds, " and "))
		return
	}
	switch {
	case d.has(at("concurrency")) && l.Concurrency < 1:
		d.failf(at("concurrency"), "want at least 1, got %d", l.Concurrency)
	case d.has(at("rate")) && l.Rate <= 0:
		d.failf(at("rate"), "want requests per second > 0, got %g", l.Rate)
	case d.has(at("rate")):
		checkBound(d, at("rate"), l.Rate, MaxRate, "requests per second (shard the run beyond it)")
	case d.has(at("concurrency")):
		checkBound(d, at("concurrency"), float64(l.Concurrency), MaxConcurrency, "concurrent streams in one process (shard the run beyond it)")
	case d.has(at("stages")):
		validateStages(d, at("stages"), l.Stages)
	}
	l.validateModifiers(d, path, l.open())
}

// validateModifiers checks the fields that shape a load of the given kind.
func (l *LoadSpec) validateModifiers(d *decoder, path string, open bool) {
	at := func(f string) string { return joinPath(path, f) }
	if open {
		notAllowed(d, path, []string{"think_time"}, "only for a closed loop (concurrency): an open loop sends on its schedule")
	} else {
		notAllowed(d, path, openModifiers, "only for an open loop (rate, rate stages, sweep rates, trace)")
	}
	l.ThinkTime.validate(d, at("think_time"))
	if d.has(at("arrival")) {
		switch l.Arrival {
		case ArrivalConstant, ArrivalPoisson, ArrivalGamma:
		default:
			d.failf(at("arrival"), "unknown arrival %q: constant, poisson or gamma", l.Arrival)
		}
	}
	if d.has(at("cv")) {
		switch {
		case l.Arrival != ArrivalGamma:
			d.failf(at("cv"), "only with arrival: gamma")
		case l.CV <= 0:
			d.failf(at("cv"), "want a coefficient of variation > 0, got %g", l.CV)
		}
	}
	if d.has(at("max_concurrency")) && l.MaxConcurrency < 1 {
		d.failf(at("max_concurrency"), "want at least 1, got %d", l.MaxConcurrency)
	} else if d.has(at("max_concurrency")) {
		checkBound(d, at("max_concurrency"), float64(l.MaxConcurrency), MaxConcurrency, "concurrent streams in one process (shard the run beyond it)")
	}
	if d.has(at("when_capped")) {
		switch {
		case !d.has(at("max_concurrency")):
			d.failf(at("when_capped"), "only with max_concurrency")
		case l.WhenCapped != CappedDrop && l.WhenCapped != CappedWait:
			d.failf(at("when_capped"), "unknown policy %q: drop or wait", l.WhenCapped)
		}
	}
}

func validateStages(d *decoder, path string, stages []Stage) {
	if len(stages) == 0 {
		d.failf(path, "empty: list at least one {duration, rate} or {duration, concurrency}")
		return
	}
	rates := stagesAreRates(stages)
	var total time.Duration
	for i, st := range stages {
		p := fmt.Sprintf("%s[%d]", path, i)
		hasRate, hasConc := d.has(joinPath(p, "rate")), d.has(joinPath(p, "concurrency"))
		switch {
		case !d.has(joinPath(p, "duration")):
			d.failf(joinPath(p, "duration"), "missing required field")
		case st.Duration < 0:
			d.failf(joinPath(p, "duration"), "want a duration ≥ 0, got %s", st.Duration)
		}
		total += st.Duration
		switch {
		case hasRate == hasConc:
			d.failf(p, "set rate or concurrency (the target this stage ramps to)")
		case hasRate && !rates:
			d.failf(joinPath(p, "rate"), "stages ramp either rates or concurrencies, not both")
		case hasConc && rates:
			d.failf(joinPath(p, "concurrency"), "stages ramp either rates or concurrencies, not both")
		case hasRate && st.Rate < 0:
			d.failf(joinPath(p, "rate"), "want a rate ≥ 0, got %g", st.Rate)
		case hasConc && st.Concurrency < 0:
			d.failf(joinPath(p, "concurrency"), "want a concurrency ≥ 0, got %d", st.Concurrency)
		case hasRate:
			checkBound(d, joinPath(p, "rate"), st.Rate, MaxRate, "requests per second (shard the run beyond it)")
		case hasConc:
			checkBound(d, joinPath(p, "concurrency"), float64(st.Concurrency), MaxConcurrency, "concurrent streams in one process (shard the run beyond it)")
		}
	}
	if total <= 0 {
		d.failf(path, "the stages last no time: give at least one a positive duration")
	}
}

func (lim *Limits) validate(d *decoder, path string, required bool) {
	at := func(f string) string { return joinPath(path, f) }
	if required && !d.has(at("duration")) && !d.has(at("requests")) {
		d.failf(path, "missing required field: duration, requests, or both")
	}
	if d.has(at("duration")) && lim.Duration <= 0 {
		d.failf(at("duration"), "want a positive duration, got %s", lim.Duration)
	}
	if d.has(at("requests")) && lim.Requests < 1 {
		d.failf(at("requests"), "want at least 1, got %d", lim.Requests)
	}
}

func (sw *Sweep) validate(d *decoder, path, workload string, load *LoadSpec) {
	at := func(f string) string { return joinPath(path, f) }
	var set []string
	for _, f := range []string{"rates", "concurrencies", "auto"} {
		if d.has(at(f)) {
			set = append(set, f)
		}
	}
	switch len(set) {
	case 0:
		d.failf(path, "missing: rates, concurrencies or auto")
		return
	case 1:
	default:
		d.failf(at(set[1]), "set one of rates, concurrencies or auto, not %s", strings.Join(set, " and "))
		return
	}
	switch set[0] {
	case "rates":
		if len(sw.Rates) == 0 {
			d.failf(at("rates"), "empty: list at least one rate")
		}
		for i, r := range sw.Rates {
			switch {
			case r <= 0:
				d.failf(fmt.Sprintf("%s[%d]", at("rates"), i), "want requests per second > 0, got %g", r)
			case r > MaxRate:
				checkBound(d, fmt.Sprintf("%s[%d]", at("rates"), i), r, MaxRate, "requests per second (shard the run beyond it)")
			case slices.Index(sw.Rates, r) < i:
				d.failf(fmt.Sprintf("%s[%d]", at("rates"), i), "duplicate rate %g", r)
			}
		}
		load.validateModifiers(d, workload, true)
	case "concurrencies":
		if len(sw.Concurrencies) == 0 {
			d.failf(at("concurrencies"), "empty: list at least one concurrency")
		}
		for i, c := range sw.Concurrencies {
			switch {
			case c < 1:
				d.failf(fmt.Sprintf("%s[%d]", at("concurrencies"), i), "want at least 1, got %d", c)
			case c > MaxConcurrency:
				checkBound(d, fmt.Sprintf("%s[%d]", at("concurrencies"), i), float64(c), MaxConcurrency, "concurrent streams in one process (shard the run beyond it)")
			case slices.Index(sw.Concurrencies, c) < i:
				d.failf(fmt.Sprintf("%s[%d]", at("concurrencies"), i), "duplicate concurrency %d", c)
			}
		}
		load.validateModifiers(d, workload, false)
	case "auto":
		if d.has(at("auto.points")) && sw.Auto.Points < 1 {
			d.failf(at("auto.points"), "want at least 1, got %d", sw.Auto.Points)
		}
		if d.has(at("auto.probe_concurrency")) && sw.Auto.ProbeConcurrency < 2 {
			d.failf(at("auto.probe_concurrency"), "want at least 2, got %d", sw.Auto.ProbeConcurrency)
		}
		notAllowed(d, workload, []string{"think_time"}, "not with an automatic sweep: its baseline is one user sending back to back")
		load.validateModifiers(d, workload, true)
	}
}

func (t *Trace) validate(d *decoder, path string, src source) {
	at := func(f string) string { return joinPath(path, f) }
	formats := TraceFormats()
	list := strings.Join(formats[:len(formats)-1], ", ") + " or " + formats[len(formats)-1]
	switch {
	case slices.Contains(formats, t.Format):
	case t.Format == "":
		d.failf(at("format"), "missing required field: %s", list)
	default:
		d.failf(at("format"), "unknown trace format %q: %s", t.Format, list)
	}
	t.validateImageTokens(d, at("image_tokens"))
	checkFile(d, at("path"), t.Path, src)
	if t.TimeScale <= 0 {
		d.failf(at("time_scale"), "want a factor > 0, got %g", t.TimeScale)
	}
	if d.has(at("block_size")) && (t.Format != TraceMooncake || t.BlockSize < 1) {
		d.failf(at("block_size"), "only for format mooncake, and at least 1")
	}
	if d.has(at("session_header")) {
		t.validateSessionHeader(d, at("session_header"))
	}
}

// validateSessionHeader: a header name (an HTTP token), for the agentic
// formats, other than the ones the client sets itself.
func (t *Trace) validateSessionHeader(d *decoder, path string) {
	h := t.SessionHeader
	switch {
	case !AgenticTrace(t.Format):
		d.failf(path, "only for the agentic formats (%s, %s)", TraceWeka, TraceCopilot)
	case !validHeaderName(h):
		d.failf(path, "want a header name (letters, digits and !#$%%&'*+-.^_`|~), got %q", h)
	case slices.Contains([]string{"content-type", "content-length", "host", "authorization", "x-request-id", "accept", "accept-encoding"}, strings.ToLower(h)):
		d.failf(path, "%q is a header the client sets itself", h)
	}
}

// validHeaderName reports whether h is an HTTP field name (RFC 9110's token).
func validHeaderName(h string) bool {
	if h == "" || len(h) > 256 {
		return false
	}
	for _, c := range []byte(h) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}

func (ds *Dataset) validate(d *decoder, path string, src source) {
	at := func(f string) string { return joinPath(path, f) }
	params := map[string][]string{
		DatasetSynthetic:    {},
		DatasetShareGPT:     {"path"},
		DatasetJSONL:        {"path"},
		DatasetSharedPrefix: {"groups", "prompts_per_group", "prefix_tokens"},
		DatasetMultiTurn:    {"turns", "prefix_tokens"},
	}
	allowed, ok := params[ds.Type]
	if !ok {
		d.failf(at("type"), "unknown dataset type %q: synthetic, sharegpt, jsonl, shared_prefix or multi_turn", ds.Type)
		return
	}
	for _, f := range []string{"path", "groups", "prompts_per_group", "prefix_tokens", "turns"} {
		if d.has(at(f)) && !slices.Contains(allowed, f) {
			d.failf(at(f), "not a parameter of dataset %s (it takes %v)", ds.Type, allowed)
		}
	}
	positive := func(f string, v int) {
		switch {
		case !d.has(at(f)):
			d.failf(at(f), "missing required field for dataset %s", ds.Type)
		case v < 1:
			d.failf(at(f), "want at least 1, got %d", v)
		}
	}
	switch ds.Type {
	case DatasetShareGPT, DatasetJSONL:
		checkFile(d, at("path"), ds.Path, src)
	case DatasetSharedPrefix:
		positive("groups", ds.Groups)
		positive("prompts_per_group", ds.PromptsPerGroup)
		positive("prefix_tokens", ds.PrefixTokens)
	case DatasetMultiTurn:
		positive("turns", ds.Turns)
		if ds.PrefixTokens < 0 {
			d.failf(at("prefix_tokens"), "want at least 0, got %d", ds.PrefixTokens)
		}
	}
}

// checkFile reports a missing path field or a file that cannot be opened.
func checkFile(d *decoder, path, name string, src source) {
	if !d.has(path) || name == "" {
		d.failf(path, "missing required field: a file, relative to the scenario file")
		return
	}
	if err := src.check(name); err != nil {
		d.failf(path, "%v", err)
	}
}

// validate checks the distribution's parameters; which one it is was decided
// by Dist, so parameters of another distribution are errors, not silently ignored.
func (l *Length) validate(d *decoder, path string, src source) {
	if !d.has(path) {
		return
	}
	at := func(f string) string { return joinPath(path, f) }
	allowed := map[string][]string{
		DistFixed:     {"value"},
		DistUniform:   {"min", "max"},
		DistNormal:    {"mean", "stddev", "min", "max"},
		DistLognormal: {"mean", "stddev", "min", "max"},
		DistEmpirical: {"file"},
	}
	params, ok := allowed[l.Dist]
	if !ok {
		if l.Dist == "" {
			d.failf(at("dist"), "missing: one of fixed, uniform, normal, lognormal, empirical")
		} else {
			d.failf(at("dist"), "unknown distribution %q: one of fixed, uniform, normal, lognormal, empirical", l.Dist)
		}
		return
	}
	for _, p := range []string{"value", "min", "max", "mean", "stddev", "file"} {
		if d.has(at(p)) && !slices.Contains(params, p) {
			d.failf(at(p), "not a parameter of dist %s (it takes %v)", l.Dist, params)
		}
	}
	switch l.Dist {
	case DistFixed:
		where := path // the scalar form has no "value" key
		if d.has(at("value")) {
			where = at("value")
		}
		if l.Value < 1 {
			d.failf(where, "want a length of at least 1, got %d", l.Value)
		}
	case DistUniform:
		switch {
		case !d.has(at("min")) || !d.has(at("max")):
			d.failf(path, "uniform needs both min and max")
		case l.Min < 1:
			d.failf(at("min"), "want at least 1, got %d", l.Min)
		case l.Max < l.Min:
			d.failf(at("max"), "want at least min (%d), got %d", l.Min, l.Max)
		}
	case DistNormal, DistLognormal:
		switch {
		case !d.has(at("mean")) || !d.has(at("stddev")):
			d.failf(path, "%s needs mean and stddev (of the token length)", l.Dist)
		case l.Mean <= 0:
			d.failf(at("mean"), "want a mean > 0, got %g", l.Mean)
		case l.StdDev < 0:
			d.failf(at("stddev"), "want a standard deviation ≥ 0, got %g", l.StdDev)
		}
		if l.Min < 1 {
			d.failf(at("min"), "want at least 1, got %d", l.Min)
		}
		if d.has(at("max")) && l.Max < l.Min {
			d.failf(at("max"), "want at least min (%d), got %d", l.Min, l.Max)
		}
	case DistEmpirical:
		checkFile(d, at("file"), l.File, src)
	}
	const lengthWhat = "tokens a request"
	for _, b := range []struct {
		key string
		v   float64
	}{{"value", float64(l.Value)}, {"min", float64(l.Min)}, {"max", float64(l.Max)}, {"mean", l.Mean}, {"stddev", l.StdDev}} {
		where := at(b.key)
		if b.key == "value" && !d.has(where) {
			where = path // the scalar form
		}
		if d.has(where) {
			checkBound(d, where, b.v, MaxLengthTokens, lengthWhat)
		}
	}
}

func (t *Think) validate(d *decoder, path string) {
	if !d.has(path) {
		return
	}
	at := func(f string) string { return joinPath(path, f) }
	allowed := map[string][]string{
		DistFixed:        {"value"},
		DistUniform:      {"min", "max"},
		ThinkExponential: {"mean"},
	}
	params, ok := allowed[t.Dist]
	if !ok {
		d.failf(at("dist"), "unknown think-time distribution %q: fixed, uniform or exponential", t.Dist)
		return
	}
	for _, p := range []string{"value", "min", "max", "mean"} {
		if d.has(at(p)) && !slices.Contains(params, p) {
			d.failf(at(p), "not a parameter of dist %s (it takes %v)", t.Dist, params)
		}
	}
	switch t.Dist {
	case DistFixed:
		if t.Value < 0 {
			d.failf(path, "want a duration ≥ 0, got %s", t.Value)
		}
	case DistUniform:
		switch {
		case !d.has(at("min")) || !d.has(at("max")):
			d.failf(path, "uniform needs both min and max")
		case t.Min < 0:
			d.failf(at("min"), "want a duration ≥ 0, got %s", t.Min)
		case t.Max < t.Min:
			d.failf(at("max"), "want at least min (%s), got %s", t.Min, t.Max)
		}
	case ThinkExponential:
		switch {
		case !d.has(at("mean")):
			d.failf(path, "exponential needs mean")
		case t.Mean <= 0:
			d.failf(at("mean"), "want a mean > 0, got %s", t.Mean)
		}
	}
}

func (c *Scrape) validate(d *decoder, path string) {
	at := func(f string) string { return joinPath(path, f) }
	if c.Interval <= 0 {
		d.failf(at("interval"), "want a positive duration, got %s", c.Interval)
	}
	switch {
	case c.Timeout <= 0:
		d.failf(at("timeout"), "want a positive duration, got %s", c.Timeout)
	case c.Interval > 0 && c.Timeout > c.Interval:
		d.failf(at("timeout"), "want at most the interval (%s), got %s", c.Interval, c.Timeout)
	}
	if c.URL != "" {
		checkURL(d, at("url"), c.URL)
	}
	for i, u := range c.Targets {
		checkURL(d, fmt.Sprintf("%s[%d]", at("targets"), i), u)
	}
	if c.URL != "" && len(c.Targets) > 0 {
		d.failf(at("targets"), "give either url or targets, not both")
	}
	if c.OTLP != nil {
		c.OTLP.validate(d, at("otlp"))
	}
	if p := c.Prometheus; p != nil {
		if c.URL != "" || len(c.Targets) > 0 {
			d.failf(at("prometheus"), "give either prometheus or url/targets, not both")
		}
		if !d.has(at("prometheus.url")) {
			d.failf(at("prometheus.url"), "missing required field")
		} else {
			checkURL(d, at("prometheus.url"), p.URL)
		}
		if strings.ContainsAny(p.Selector, "{}") {
			d.failf(at("prometheus.selector"), "give label matchers without braces, e.g. job=\"vllm\", got %q", p.Selector)
		}
	}
}
