// Package comparison puts runs side by side (llmbench compare): phase by
// phase, each metric with the direction that is better, and a change called
// significant only when its bootstrap confidence interval excludes zero (the
// bootstrap of the regression gates, gates.DefaultBootstrap). It warns when
// the runs did not measure the same thing: a scenario field that changes the
// load, or the engine, differs.
//
// # The JSON shape (schema "llmbench.compare/v1")
//
// Stable: fields are only ever added under the same schema name.
//
//	{
//	  "schema": "llmbench.compare/v1",
//	  "confidence": 0.95, "resamples": 2000,      // the bootstrap's level and resamples
//	  "runs": [ {"dir", "id", "scenario", "seed", "started_at", "duration_s", "valid",
//	             "engine": {"kind", "dialect", "model"}} ],   // runs[0] is the baseline
//	  "comparisons": [ {                          // one per run after the first, against runs[0]
//	    "baseline": 0, "run": 1,                  // indexes into runs
//	    "differences": [ {"field", "kind", "baseline", "run"} ],   // kind: load | engine | slo
//	    "notes": [ "..." ],                       // what else a reader should know
//	    "phases": [ {                             // matched phases
//	      "baseline_phase", "run_phase",
//	      "baseline_load", "run_load", "load_unit",  // offered load: requests/s or users
//	      "matched_by": "load" | "name" | "only phase",
//	      "metrics": [ Metric ] } ],
//	    "unmatched": [ {"run", "phase", "load", "load_unit"} ],   // run: an index into runs
//	    "run_metrics": [ Metric ] } ]             // whole-run figures (health, sweep)
//	}
//
// A Metric is
//
//	{"metric": "client.ttft.p99",                 // a gate metric name (llmbench gate --metrics)
//	 "unit": "s" | "fraction" | "per_s" | "count" | "bool",
//	 "better": "lower" | "higher" | "",           // "": shown, never judged
//	 "baseline": 0.2, "value": 0.3,               // absent when the run has no such value
//	 "change": 0.5,                               // value/baseline − 1; for fractions value − baseline
//	 "change_kind": "ratio" | "difference",
//	 "interval": [0.31, 0.72], "confidence": 0.95,   // bootstrap interval of change, when computed
//	 "verdict": "worse" | "better" | "unchanged" | "inconclusive" | "untested" | "not judged" | "absent",
//	 "note": "..."}
//
// worse and better are only ever given when the interval excludes zero;
// unchanged when it includes zero; inconclusive instead of either when a run
// on either side was delayed by its host (gates.HostDelay); untested when there is no interval (one
// number per run, such as a throughput, or runs without raw records): the
// point change is still reported.
package comparison

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/quantile"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/gates"
	"github.com/llmbench-org/llmbench/report/sentload"
	"github.com/llmbench-org/llmbench/report/validity"
	"github.com/llmbench-org/llmbench/rundir"
)

// Schema names the JSON shape of a Comparison.
const Schema = "llmbench.compare/v1"

// Verdicts of a metric's change.
const (
	Worse     = "worse"
	Better    = "better"
	Unchanged = "unchanged" // the interval includes zero: the renderers say NoChange
	// NoChange is how the renderers show Unchanged.
	NoChange  = "no change beyond noise"
	Untested  = "untested"   // no interval: the point change alone
	NotJudged = "not judged" // no better direction
	// Inconclusive: the interval is wholly on one side, but a run on either
	// side was delayed by its host, so the change may be the host's.
	Inconclusive = "inconclusive"
	Absent       = "absent" // one of the runs has no value
)

// Comparison is runs side by side, each against the first.
type Comparison struct {
	Schema      string    `json:"schema"`
	Confidence  float64   `json:"confidence"`
	Resamples   int       `json:"resamples"`
	Runs        []RunRef  `json:"runs"`
	Comparisons []Against `json:"comparisons"`
	// Samples are each run's client latencies (Runs[i]'s), for drawing
	// (samples.go); not part of the schema.
	Samples []Samples `json:"-"`
}

// RunRef identifies one compared run.
type RunRef struct {
	Dir       string    `json:"dir"`
	ID        string    `json:"id"`
	Scenario  string    `json:"scenario"`
	Seed      int64     `json:"seed"`
	StartedAt time.Time `json:"started_at"`
	Duration  float64   `json:"duration_s"`
	Valid     bool      `json:"valid"`
	// States names the run's validity states (health.states): invalid
	// ones and warnings, by name.
	States []string  `json:"states,omitempty"`
	Engine EngineRef `json:"engine"`
}

// EngineRef is what engine a run measured.
type EngineRef struct {
	Kind    string `json:"kind"`
	Dialect string `json:"dialect"`
	Model   string `json:"model"`
}

// Against is one run compared with the baseline run.
type Against struct {
	Baseline    int          `json:"baseline"`
	Run         int          `json:"run"`
	Differences []Difference `json:"differences"`
	Notes       []string     `json:"notes"`
	Phases      []PhasePair  `json:"phases"`
	Unmatched   []Unmatched  `json:"unmatched"`
	RunMetrics  []Metric     `json:"run_metrics"`
	// Load says whether the two runs sent the same load (load.go); absent
	// when a summary has no fingerprint (written before it existed).
	Load *sentload.Verdict `json:"same_load,omitempty"`
}

// Difference is a field in which the two runs measured different things.
type Difference struct {
	Field    string `json:"field"` // scenario.yaml's dotted path, or run.json's engine.*
	Kind     string `json:"kind"`  // load | engine | slo
	Baseline string `json:"baseline"`
	Run      string `json:"run"`
}

// PhasePair is a phase of the baseline run and the phase of the other run it
// is compared with.
type PhasePair struct {
	BaselinePhase string   `json:"baseline_phase"`
	RunPhase      string   `json:"run_phase"`
	BaselineLoad  float64  `json:"baseline_load,omitempty"`
	RunLoad       float64  `json:"run_load,omitempty"`
	LoadUnit      string   `json:"load_unit,omitempty"`
	MatchedBy     string   `json:"matched_by"` // load | name | only phase
	Metrics       []Metric `json:"metrics"`
}

// Unmatched is a measured phase with no counterpart in the other run.
type Unmatched struct {
	Run      int     `json:"run"`
	Phase    string  `json:"phase"`
	Load     float64 `json:"load,omitempty"`
	LoadUnit string  `json:"load_unit,omitempty"`
}

// Metric is one metric in both runs and its change.
type Metric struct {
	Metric     string      `json:"metric"`
	Unit       string      `json:"unit"`
	Better     string      `json:"better"`
	Baseline   *float64    `json:"baseline,omitempty"`
	Value      *float64    `json:"value,omitempty"`
	Change     *float64    `json:"change,omitempty"`
	ChangeKind string      `json:"change_kind"`
	Interval   *[2]float64 `json:"interval,omitempty"`
	Confidence float64     `json:"confidence,omitempty"`
	Verdict    string      `json:"verdict"`
	Note       string      `json:"note,omitempty"`
}

// Significant reports whether the change's interval excludes zero.
func (m Metric) Significant() bool { return m.Verdict == Worse || m.Verdict == Better }

// Run is one run directory read for a comparison, or a trial set or a
// history of runs (Trials; Gates is the first of them).
type Run struct {
	Dir      string
	Gates    gates.Run       // its summary and measured records
	Trials   gates.Side      // every run of the side; nil: Gates alone
	Meta     *rundir.RunMeta // nil when run.json is missing (a summary.json alone)
	Scenario map[string]any  // the resolved scenario.yaml; nil when missing
}

// Load reads a run directory (or a summary.json): the summary rebuilt from
// its raw files with its records, its run.json and its scenario.yaml.
func Load(dir string) (Run, error) {
	side, err := gates.LoadSide(dir)
	if err != nil {
		return Run{}, err
	}
	r := Run{Dir: dir, Gates: side[0], Trials: side}
	first := dir
	if paths, err := gates.SidePaths(dir); err == nil {
		first = paths[0]
	}
	if info, err := os.Stat(first); err == nil && info.IsDir() {
		r.Meta, _ = readMeta(filepath.Join(first, rundir.RunFile))
		r.Scenario, _ = readScenario(filepath.Join(first, rundir.ScenarioFile))
	}
	return r, nil
}

// side is the run's runs.
func (r Run) side() gates.Side {
	if len(r.Trials) > 0 {
		return r.Trials
	}
	return gates.Side{r.Gates}
}

// phaseMetrics are compared for every matched phase. Raw counts are shown
// but not judged: a run may have planned fewer requests; their rates are.
var phaseMetrics = []string{
	"client.requests.sent", "client.requests.ok", "client.error_rate",
	"client.throughput.requests_per_s", "client.throughput.output_tokens_per_s",
	"client.goodput.fraction",
	"client.ttft.mean", "client.ttft.p50", "client.ttft.p99",
	"client.itl.p50", "client.itl.p99",
	"client.tpot.p50", "client.tpot.p99",
	"client.e2e.p50", "client.e2e.p99",
	"server.ttft.mean", "server.itl.mean", "server.e2e.mean", "server.queue.mean",
}

// runMetrics are the whole run's figures.
var runMetrics = []string{
	"health.valid", "health.schedule_lag.p99", "health.client.cpu_utilization",
	"sweep.capacity", "sweep.goodput_peak",
}

// notJudged are gate metrics shown without a verdict here: counts that
// depend on what was planned, and the client's own CPU.
var notJudged = map[string]bool{
	"client.requests.ok": true, "health.client.cpu_utilization": true,
}

// Compare compares each run after the first with the first, with no noise
// floor learned on this machine (CompareWith).
func Compare(b gates.Bootstrap, runs ...Run) Comparison {
	return CompareWith(gates.Options{Bootstrap: b}, runs...)
}

// CompareWith compares each run after the first with the first, by the
// gates' noise model (docs/decisions/0034): a change is worse or better
// only when its interval — the bootstrap over runs then requests, widened
// by the noise floor where a side has a single run — excludes zero.
func CompareWith(o gates.Options, runs ...Run) Comparison {
	b := o.Bootstrap
	if b.Resamples <= 0 {
		b.Resamples = gates.DefaultBootstrap.Resamples
	}
	if !(b.Confidence > 0 && b.Confidence < 1) {
		b.Confidence = gates.DefaultBootstrap.Confidence
	}
	c := Comparison{Schema: Schema, Confidence: b.Confidence, Resamples: b.Resamples, Runs: []RunRef{}, Comparisons: []Against{}}
	for _, r := range runs {
		s := r.Gates.Summary
		ref := RunRef{Dir: r.Dir, ID: s.Run.ID, Scenario: s.Run.Scenario, Seed: s.Run.Seed, StartedAt: s.Run.StartedAt,
			Duration: s.Run.Duration, Valid: s.Health.Valid,
			Engine: EngineRef{Kind: s.Engine.Kind, Dialect: s.Engine.Dialect, Model: s.Engine.Model}}
		for _, st := range s.Health.States {
			ref.States = append(ref.States, st.Name)
		}
		c.Runs = append(c.Runs, ref)
		c.Samples = append(c.Samples, samplesOf(r.Gates))
	}
	o.Bootstrap = b
	for i := 1; i < len(runs); i++ {
		c.Comparisons = append(c.Comparisons, against(o, runs[0], runs[i], i))
	}
	return c
}

func against(o gates.Options, base, cur Run, idx int) Against {
	a := Against{Baseline: 0, Run: idx, Differences: differences(base, cur), Notes: []string{}, Phases: []PhasePair{}, Unmatched: []Unmatched{}}
	bs, cs := base.Gates.Summary, cur.Gates.Summary
	if base.Scenario == nil || cur.Scenario == nil {
		a.Notes = append(a.Notes, "a run has no scenario.yaml: whether the runs offered the same load cannot be checked")
	}
	if base.Gates.Records == nil || cur.Gates.Records == nil {
		a.Notes = append(a.Notes, "a run has no raw records: changes are point estimates, without confidence intervals")
	}
	for i, s := range []report.Summary{bs, cs} {
		a.Notes = append(a.Notes, validityNotes([]int{1, idx + 1}[i], s.Health)...)
	}
	noteSentLoad(&a, bs.Load, cs.Load)
	if nb, nc := len(base.side()), len(cur.side()); nb < 2 || nc < 2 {
		from := o.Floors.From
		if from == "" {
			from = "the defaults, ±20% for means, medians and rates and ±100% for tail quantiles: no floor learned on this machine (llmbench noise)"
		}
		a.Notes = append(a.Notes, fmt.Sprintf("%s against %s: a side with a single run does not show the noise between runs, so each change's interval is widened by its metric's noise floor (%s)", plural(nc, "run"), plural(nb, "run"), from))
	}
	pairs, unB, unC := matchPhases(measured(bs), measured(cs))
	for _, p := range pairs {
		pp := PhasePair{BaselinePhase: p.b.Name, RunPhase: p.c.Name, BaselineLoad: p.b.Load, RunLoad: p.c.Load,
			LoadUnit: p.b.LoadUnit, MatchedBy: p.by}
		if p.b.LoadUnit != p.c.LoadUnit && p.c.LoadUnit != "" {
			pp.LoadUnit = p.b.LoadUnit + " vs " + p.c.LoadUnit
		}
		if p.b.Planned > 0 && p.c.Planned > 0 && p.b.Planned != p.c.Planned {
			a.Notes = append(a.Notes, fmt.Sprintf("phases %s and %s planned different numbers of requests (%d vs %d): their counts differ by plan, not by outcome; compare their rates",
				p.b.Name, p.c.Name, p.b.Planned, p.c.Planned))
		}
		if p.b.Load != p.c.Load || p.b.LoadUnit != p.c.LoadUnit {
			a.Notes = append(a.Notes, fmt.Sprintf("phases %s and %s are compared though their offered load differs (%s vs %s): each run has only that phase",
				p.b.Name, p.c.Name, loadText(p.b.Load, p.b.LoadUnit), loadText(p.c.Load, p.c.LoadUnit)))
		}
		pp.Metrics = compareMetrics(o, phaseSide(base.side(), p.b), phaseSide(cur.side(), p.c), phaseMetrics)
		a.Phases = append(a.Phases, pp)
	}
	for _, ph := range unB {
		a.Unmatched = append(a.Unmatched, Unmatched{Run: 0, Phase: ph.Name, Load: ph.Load, LoadUnit: ph.LoadUnit})
	}
	for _, ph := range unC {
		a.Unmatched = append(a.Unmatched, Unmatched{Run: idx, Phase: ph.Name, Load: ph.Load, LoadUnit: ph.LoadUnit})
	}
	a.RunMetrics = compareMetrics(o, base.side(), cur.side(), runMetrics)
	return a
}

func measured(s report.Summary) []report.PhaseResult {
	var out []report.PhaseResult
	for _, ph := range s.Phases {
		if ph.Measured {
			out = append(out, ph)
		}
	}
	return out
}

type pair struct {
	b, c report.PhaseResult
	by   string
}

// matchPhases pairs phases of equal offered load and unit (sweep points), or
// of the same name when a phase states no load; two runs of one measured
// phase each are paired whatever their load (the differences say why).
func matchPhases(bs, cs []report.PhaseResult) (pairs []pair, unB, unC []report.PhaseResult) {
	if len(bs) == 1 && len(cs) == 1 {
		return []pair{{bs[0], cs[0], "only phase"}}, nil, nil
	}
	used := make([]bool, len(cs))
	for _, b := range bs {
		found := -1
		for j, c := range cs {
			if used[j] {
				continue
			}
			if b.Load > 0 && c.LoadUnit == b.LoadUnit && sameLoad(b.Load, c.Load) {
				found = j
				break
			}
		}
		by := "load"
		if found < 0 && b.Load == 0 {
			found = slices.IndexFunc(cs, func(c report.PhaseResult) bool { return c.Load == 0 && c.Name == b.Name })
			if found >= 0 && used[found] {
				found = -1
			}
			by = "name"
		}
		if found < 0 {
			unB = append(unB, b)
			continue
		}
		used[found] = true
		pairs = append(pairs, pair{b, cs[found], by})
	}
	for j, c := range cs {
		if !used[j] {
			unC = append(unC, c)
		}
	}
	return pairs, unB, unC
}

func sameLoad(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// phaseRun is one phase of a run as a run of its own, for the gates'
// metrics and bootstrap.
func phaseRun(r gates.Run, ph report.PhaseResult) gates.Run {
	s := r.Summary
	view := report.Summary{Schema: s.Schema, Run: s.Run, Engine: s.Engine, Client: ph.Client, Server: ph.Server, Phases: []report.PhaseResult{ph}}
	// The client's own health is the whole run's: a host that held the
	// client back did so in every phase (gates.HostDelay reads it).
	view.Health.Client = s.Health.Client
	out := gates.Run{ID: r.ID, Summary: view}
	if r.Records != nil {
		out.Records = []client.Record{}
		for _, rec := range r.Records {
			if rec.Phase == ph.Name {
				out.Records = append(out.Records, rec)
			}
		}
	}
	if r.Digest != nil {
		out.Digest = r.Digest.Only(func(phase string) bool { return phase == ph.Name })
	}
	return out
}

var directions = func() map[string]gates.Metric {
	m := map[string]gates.Metric{}
	for _, g := range gates.Metrics() {
		m[g.Name] = g
	}
	return m
}()

// compareMetrics reads names in both runs through the gates: a regression
// gate for a metric with a better direction (its bootstrap interval), a
// plain baseline comparison otherwise (the two values).
func compareMetrics(o gates.Options, base, cur gates.Side, names []string) []Metric {
	var gs gates.Gates
	for _, n := range names {
		g := gates.Gate{Metric: n, Op: gates.Less, RHS: gates.Operand{Baseline: true}}
		if directions[n].Better != "" && !notJudged[n] && n != "client.error_rate" {
			g = gates.Gate{Metric: n, Regression: true, Op: gates.Less, RHS: gates.Operand{Value: gates.Quantity{Number: 0, Unit: gates.Percent}}}
		}
		gs = append(gs, g)
	}
	// Validity is shown in the notes; the change is measured as it is.
	results := gs.EvaluateSides(asValid(cur), asValid(base), o)
	out := make([]Metric, 0, len(names))
	for i, n := range names {
		m := metricOf(n, results[i], base[0], cur[0], o.Bootstrap)
		if why := gates.HostDelay(base, cur); why != "" && m.Significant() {
			// As a regression gate says (decision 0034): a change seen while
			// the host held the client back may be the host's.
			m.Verdict, m.Note = Inconclusive, "but "+why
		}
		if m.Baseline == nil && m.Value == nil {
			continue // neither run has it (no slo, no /metrics, not a sweep)
		}
		out = append(out, m)
	}
	return out
}

func metricOf(name string, r gates.Result, base, cur gates.Run, b gates.Bootstrap) Metric {
	m := Metric{Metric: name, Unit: directions[name].Unit, Better: directions[name].Better, ChangeKind: "ratio"}
	if notJudged[name] {
		m.Better = ""
	}
	if m.Unit == "fraction" || m.Unit == "bool" {
		m.ChangeKind = "difference"
	}
	// Each side's value, read alone so one absent side does not hide the other.
	m.Baseline, m.Value = readOne(name, base), readOne(name, cur)
	if m.Baseline == nil || m.Value == nil {
		m.Verdict = Absent
		if r.Status == gates.Error {
			m.Note = r.Reason
		}
		return m
	}
	bv, cv := *m.Baseline, *m.Value
	var change float64
	switch {
	case m.ChangeKind == "difference":
		change = cv - bv
	case bv == 0 && cv == 0:
		change = 0
	case bv == 0:
		m.Note = "the baseline is 0: no relative change"
	default:
		change = cv/bv - 1
	}
	if m.Note == "" && m.Unit != "bool" {
		m.Change = &change
	}
	switch {
	case m.Better == "":
		m.Verdict = NotJudged
		return m
	case name == "client.error_rate":
		if lo, hi, ok := rateInterval(base.Records, cur.Records, b); ok {
			m.Interval, m.Confidence = &[2]float64{lo, hi}, b.Confidence
		}
	case r.Interval != nil && m.Note == "":
		lo, hi := r.Interval[0], r.Interval[1]
		if math.Abs(lo) == math.MaxFloat64 || math.Abs(hi) == math.MaxFloat64 {
			break
		}
		if m.Better == "higher" { // the gates' regression is 1 − cur/base
			lo, hi = -hi, -lo
		}
		m.Interval, m.Confidence = &[2]float64{lo, hi}, r.Confidence
	}
	if m.Interval == nil {
		m.Verdict = Untested
		if m.Note == "" {
			m.Note = untestedWhy(r.Reason)
		}
		return m
	}
	lo, hi := m.Interval[0], m.Interval[1]
	up := lo > 0
	switch {
	case lo <= 0 && hi >= 0:
		m.Verdict = Unchanged
	case up == (m.Better == "lower"):
		m.Verdict = Worse
	default:
		m.Verdict = Better
	}
	return m
}

// untestedWhy is the gates' reason for a point estimate, in brief.
func untestedWhy(reason string) string {
	if i := strings.Index(reason, "point estimate ("); i >= 0 {
		why, _, _ := strings.Cut(reason[i+len("point estimate ("):], ")")
		if strings.HasPrefix(why, "no raw samples behind") {
			return "one number per run"
		}
		return why
	}
	return "no confidence interval"
}

// readOne reads a metric of one run, nil when absent.
func readOne(name string, r gates.Run) *float64 {
	g := gates.Gate{Metric: name, Op: gates.Less, RHS: gates.Operand{Baseline: true}}
	res := gates.Gates{g}.EvaluateRuns(r, &r, gates.Bootstrap{Resamples: 1})
	if res[0].Status == gates.Error && res[0].Baseline == nil {
		return nil
	}
	v := res[0].Value
	return &v
}

// rateInterval is the bootstrap interval of the difference of the two
// runs' error rates (failed ÷ requests not cancelled), each run's requests
// resampled with replacement, independently: the gates' bootstrap, for a
// rate the gates give no interval for.
func rateInterval(base, cur []client.Record, b gates.Bootstrap) (lo, hi float64, ok bool) {
	count := func(rs []client.Record) (n, failed int) {
		for i := range rs {
			switch {
			case rs[i].ErrorClass == client.ErrCanceled:
			case rs[i].OK():
				n++
			default:
				n++
				failed++
			}
		}
		return n, failed
	}
	nb, fb := count(base)
	nc, fc := count(cur)
	if nb < 2 || nc < 2 {
		return 0, 0, false
	}
	rng := newRNG(b.Seed)
	draw := func(n, failed int) float64 {
		if n > exactDraws { // a binomial draw by its normal approximation
			p := float64(failed) / float64(n)
			k := math.Round(float64(n)*p + rng.NormFloat64()*math.Sqrt(float64(n)*p*(1-p)))
			return min(max(k, 0), float64(n)) / float64(n)
		}
		k := 0
		for range n {
			if rng.IntN(n) < failed {
				k++
			}
		}
		return float64(k) / float64(n)
	}
	diffs := make([]float64, b.Resamples)
	for i := range diffs {
		diffs[i] = draw(nc, fc) - draw(nb, fb)
	}
	slices.Sort(diffs)
	alpha := (1 - b.Confidence) / 2
	return quantile.OfSorted(alpha, diffs), quantile.OfSorted(1-alpha, diffs), true
}

// exactDraws is the most requests whose resample is drawn one by one.
const exactDraws = 50_000

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

func loadText(load float64, unit string) string {
	if load == 0 && unit == "" {
		return "load not stated"
	}
	return fmt.Sprintf("%g %s", load, unit)
}

// IsRun reports whether path is something Load reads: a run directory (its
// run.json), a directory holding a summary.json, a summary file, a trial
// set, or a directory of run directories.
func IsRun(path string) bool {
	_, err := gates.SidePaths(path)
	return err == nil
}

// validityNotes say why run n is not valid, and its warnings, each state
// with which requests its latencies cover: a change measured on a run whose
// latencies cover only its survivors is not a change of the engine alone.
// A summary from before the named states has only its problems.
func validityNotes(n int, h report.Health) []string {
	var invalid, warnings []string
	for _, st := range h.States {
		if st.Severity == validity.Invalid {
			invalid = append(invalid, validity.Line(st))
		} else {
			warnings = append(warnings, validity.Line(st))
		}
	}
	if len(h.States) == 0 {
		invalid = h.Problems
	}
	var out []string
	if !h.Valid {
		out = append(out, fmt.Sprintf("run %d is not valid: %s", n, strings.Join(invalid, "; ")))
	}
	if len(warnings) > 0 {
		out = append(out, fmt.Sprintf("run %d has validity warnings: %s", n, strings.Join(warnings, "; ")))
	}
	return out
}

// phaseSide is one phase of each run of a side (phaseRun), the phase taken
// by name from each run (the trials of one scenario share their phases).
func phaseSide(side gates.Side, ph report.PhaseResult) gates.Side {
	out := make(gates.Side, 0, len(side))
	for i, r := range side {
		p := ph
		if i > 0 {
			for _, q := range r.Summary.Phases {
				if q.Name == ph.Name {
					p = q
				}
			}
		}
		out = append(out, phaseRun(r, p))
	}
	return out
}

// asValid is a side whose runs the gates read as valid: a comparison
// reports a change however the runs went, and says apart (its notes) which
// were not valid.
func asValid(side gates.Side) gates.Side {
	out := slices.Clone(side)
	for i := range out {
		out[i].Summary.Health.Valid = true
	}
	return out
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
