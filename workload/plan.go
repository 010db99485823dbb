package workload

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/llmbench-org/llmbench/scenarios"
)

// DefaultLateAfter is how far past its intended time an open-loop arrival may
// go out before the Driver counts it late.
const DefaultLateAfter = scenarios.DefaultLateAfter

// Plan is a scenario turned into phases and a deterministic source of
// requests. It is immutable and safe for concurrent use.
type Plan struct {
	name      string
	seed      int64
	phases    []Phase
	data      dataset
	dataDesc  string
	skipped   int // records of a data file that could not be used
	turns     int // requests per conversation (1 unless multi-turn)
	ignoreEOS bool
	lateAfter time.Duration
	abort     scenarios.Abort
	search    *searchPlan // a capacity search's probes: built at run time (Probe)
	images    []Image     // one image of each size and format the requests carry (ImageShapes)

	agentic *agenticPlan // an agentic trace's sessions (agentic_drive.go); nil otherwise

	shard, shards int // this plan is shard of shards (Shard); 0 shards = unsharded
}

// Sweep roles of a phase.
const (
	SweepBaseline = "baseline" // automatic sweep: one user, back to back
	SweepProbe    = "probe"    // automatic sweep: many users, to find the maximum throughput
	SweepAuto     = "auto"     // automatic sweep: an open-loop rate chosen from the baseline and the probe
	SweepExplicit = "point"    // an explicit sweep point
)

// Phase is one stretch of the run with one load. It ends after Duration (if
// > 0) or once Requests were sent (if > 0), whichever comes first; a ramp or
// a trace also ends with its schedule.
type Phase struct {
	Name     string
	Measured bool // its requests count in the results (warmup and cooldown do not)
	Drain    bool // it starts once every request of the previous phase finished

	// Closed loop: Concurrency users, or a ramp of users (Levels).
	Concurrency int
	Levels      []LevelChange
	think       thinkDist

	// Open loop: arrivals paced by Pacer (nil for an automatic sweep's
	// rates, chosen at run time).
	Pacer          Pacer
	Rate           float64     // a constant offered rate, requests/s
	RateStages     []RateStage // a ramp of the rate
	Arrival        string      // constant, poisson, gamma, or trace
	CV             float64     // gamma
	MaxConcurrency int         // cap on requests (conversations) in flight; 0 = none
	WhenCapped     string      // drop or wait

	Duration time.Duration
	Requests int

	Sweep             string // "", or a Sweep* role
	AutoStep, AutoMax int    // automatic sweep: this rate is step AutoStep of AutoMax

	// UntilDecided ends the phase once its SLO verdict is decided (the
	// Driver asks Driver.Decided), its limits still bounding it.
	UntilDecided bool
}

// Open reports whether the phase is an open loop.
func (ph Phase) Open() bool { return ph.Pacer != nil || ph.Sweep == SweepAuto }

// NewPlan builds the plan of a validated scenario, reading the data files it
// names. Data file errors name the file and the line or record.
func NewPlan(s scenarios.Scenario) (*Plan, error) {
	w := s.Workload
	p := &Plan{
		name:      s.Name,
		seed:      s.Seed,
		turns:     1,
		ignoreEOS: w.IgnoreEOS == nil || *w.IgnoreEOS,
		lateAfter: w.LateAfter,
		abort:     w.Abort,
	}
	if err := p.buildDataset(s); err != nil {
		return nil, fmt.Errorf("plan %s: %w", s.Name, err)
	}
	p.batchInputs(s) // inputs.go
	if err := p.buildPhases(s); err != nil {
		return nil, fmt.Errorf("plan %s: %w", s.Name, err)
	}
	return p, nil
}

func (p *Plan) buildDataset(s scenarios.Scenario) error {
	w := s.Workload
	if w.Trace != nil && scenarios.AgenticTrace(w.Trace.Format) {
		return p.buildAgentic(s)
	}
	if w.Trace != nil {
		f, err := s.Open(w.Trace.Path)
		if err != nil {
			return err
		}
		rows, skipped, err := parseTrace(w.Trace.Format, w.Trace.Path, f)
		f.Close()
		if err != nil {
			return err
		}
		images, err := newTraceImages(s)
		if err != nil {
			return err
		}
		p.data = &traceRows{seed: s.Seed, rows: rows, blockSize: max(w.Trace.BlockSize, 1), images: images}
		p.images = images.spec.shapes()
		p.skipped = skipped
		p.dataDesc = fmt.Sprintf("trace %s (%s): %d requests", w.Trace.Path, w.Trace.Format, len(rows)) + images.describe()
		return nil
	}
	length := func(field string, l scenarios.Length) (lengthDist, error) {
		if l.Dist == "" {
			return nil, nil
		}
		if err := checkLength(l); err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		d, err := newLengthDist(l, s.Open)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		return d, nil
	}
	prompt, err := length("prompt_tokens", w.Prompt)
	if err != nil {
		return err
	}
	output, err := length("output_tokens", w.Output)
	if err != nil {
		return err
	}
	ds := w.Dataset
	if err := checkTokens("dataset prefix_tokens", ds.PrefixTokens); err != nil {
		return err
	}
	switch ds.Type {
	case scenarios.DatasetSynthetic, "":
		p.data = synthetic{seed: s.Seed, prompt: prompt, output: output}
		p.dataDesc = fmt.Sprintf("synthetic: prompt %s, output %s", describeLength(w.Prompt), describeLength(w.Output))
	case scenarios.DatasetSharedPrefix:
		p.data = newSharedPrefix(s.Seed, ds.Groups, ds.PromptsPerGroup, ds.PrefixTokens, prompt, output)
		p.dataDesc = fmt.Sprintf("shared_prefix: %d groups × %d prompts, prefix %d tokens, question %s, output %s",
			ds.Groups, ds.PromptsPerGroup, ds.PrefixTokens, describeLength(w.Prompt), describeLength(w.Output))
	case scenarios.DatasetMultiTurn:
		p.data = newMultiTurn(s.Seed, ds.Turns, ds.PrefixTokens, prompt, output)
		p.turns = ds.Turns
		p.dataDesc = fmt.Sprintf("multi_turn: %d turns, system %d tokens, user turn %s, reply %s",
			ds.Turns, ds.PrefixTokens, describeLength(w.Prompt), describeLength(w.Output))
	case scenarios.DatasetShareGPT, scenarios.DatasetJSONL:
		f, err := s.Open(ds.Path)
		if err != nil {
			return err
		}
		var list []record
		if ds.Type == scenarios.DatasetShareGPT {
			list, p.skipped, err = parseShareGPT(ds.Path, f, output == nil)
		} else {
			list, err = parseJSONL(ds.Path, f)
		}
		f.Close()
		if err == nil {
			p.images, err = loadImages(list, ds.Path, s.Open)
		}
		if err != nil {
			return err
		}
		p.data = newRecords(s.Seed, list, ds.Type == scenarios.DatasetShareGPT, output)
		out := "the file's"
		if output != nil {
			out = describeLength(w.Output)
		}
		p.dataDesc = fmt.Sprintf("%s %s: %d prompts, output %s", ds.Type, ds.Path, len(list), out)
	default:
		return fmt.Errorf("dataset type %q is not supported", ds.Type)
	}
	return p.addImages(s)
}

func describeLength(l scenarios.Length) string {
	switch l.Dist {
	case scenarios.DistFixed:
		return strconv.Itoa(l.Value)
	case scenarios.DistUniform:
		return fmt.Sprintf("uniform[%d,%d]", l.Min, l.Max)
	case scenarios.DistNormal, scenarios.DistLognormal:
		s := fmt.Sprintf("%s(mean %g, stddev %g, min %d", l.Dist, l.Mean, l.StdDev, l.Min)
		if l.Max > 0 {
			s += fmt.Sprintf(", max %d", l.Max)
		}
		return s + ")"
	case scenarios.DistEmpirical:
		return "empirical(" + l.File + ")"
	}
	return "?"
}

func (p *Plan) buildPhases(s scenarios.Scenario) error {
	w := s.Workload
	var main []Phase
	switch {
	case w.Trace != nil && p.agentic != nil:
		main = append(main, p.agentic.phase(w))
	case w.Trace != nil:
		rows := p.data.(*traceRows).rows
		offsets := make([]time.Duration, len(rows))
		for i, r := range rows {
			offsets[i] = time.Duration(float64(r.at) * w.Trace.TimeScale)
		}
		requests := len(rows)
		if w.Requests > 0 {
			requests = min(requests, w.Requests)
		}
		ph := Phase{Name: "main", Measured: true, Drain: true, Pacer: Replay(offsets), Arrival: "trace",
			MaxConcurrency: w.MaxConcurrency, WhenCapped: w.WhenCapped, Duration: w.Duration, Requests: requests}
		main = append(main, ph)
	case w.Search != nil:
		p.search = &searchPlan{spec: *w.Search, load: w.LoadSpec, limits: w.Limits}
		// The probes are chosen as the run goes (Probe); a warmup that
		// inherits its load warms up at the search's smallest.
		ph, err := p.Probe(w.Search.Min, 1)
		if err != nil {
			return err
		}
		if w.Warmup != nil {
			warm, err := p.sidePhase("warmup", w.Warmup, ph, true)
			if err != nil {
				return err
			}
			p.phases = append(p.phases, warm)
		}
		return nil
	case w.Sweep != nil:
		sw := w.Sweep
		point := func(name string, load scenarios.LoadSpec, role string) error {
			ph, err := p.phase(name, true, true, load, w.Limits)
			ph.Sweep = role
			// An automatic sweep's baseline and throughput probe measure
			// the engine's range: no verdict ends them.
			ph.UntilDecided = ph.UntilDecided && role == SweepExplicit
			main = append(main, ph)
			return err
		}
		for _, r := range sw.Rates {
			load := w.LoadSpec
			load.Rate = r
			if err := point("rate-"+strconv.FormatFloat(r, 'g', -1, 64), load, SweepExplicit); err != nil {
				return err
			}
		}
		for _, c := range sw.Concurrencies {
			load := w.LoadSpec
			load.Concurrency = c
			if err := point("concurrency-"+strconv.Itoa(c), load, SweepExplicit); err != nil {
				return err
			}
		}
		if a := sw.Auto; a != nil {
			if err := point(SweepBaseline, scenarios.LoadSpec{Concurrency: 1}, SweepBaseline); err != nil {
				return err
			}
			if err := point(SweepProbe, scenarios.LoadSpec{Concurrency: a.ProbeConcurrency}, SweepProbe); err != nil {
				return err
			}
			for k := 1; k <= a.Points; k++ {
				main = append(main, Phase{
					Name: "auto-" + strconv.Itoa(k), Measured: true, Drain: true,
					Arrival: w.Arrival, CV: w.CV, MaxConcurrency: w.MaxConcurrency, WhenCapped: w.WhenCapped,
					Duration: w.Duration, Requests: w.Requests,
					Sweep: SweepAuto, AutoStep: k, AutoMax: a.Points, UntilDecided: w.Until == scenarios.UntilDecided,
				})
			}
		}
	case w.Phases != nil:
		for _, sp := range w.Phases {
			load := sp.LoadSpec
			if !hasLoadKind(load) {
				load = w.LoadSpec
			}
			ph, err := p.phase(sp.Name, *sp.Measured, *sp.Drain, load, sp.Limits)
			if err != nil {
				return err
			}
			main = append(main, ph)
		}
	default:
		ph, err := p.phase("main", true, true, w.LoadSpec, w.Limits)
		if err != nil {
			return err
		}
		main = append(main, ph)
	}
	if w.Warmup != nil {
		ph, err := p.sidePhase("warmup", w.Warmup, main[0], true)
		if err != nil {
			return err
		}
		p.phases = append(p.phases, ph)
	}
	p.phases = append(p.phases, main...)
	if w.Cooldown != nil {
		ph, err := p.sidePhase("cooldown", w.Cooldown, main[len(main)-1], false)
		if err != nil {
			return err
		}
		p.phases = append(p.phases, ph)
	}
	return nil
}

// sidePhase builds a warmup or cooldown: its own load, or a copy of the
// neighbouring measured phase's with its own limits and arrivals.
func (p *Plan) sidePhase(name string, sp *scenarios.Phase, like Phase, drain bool) (Phase, error) {
	if hasLoadKind(sp.LoadSpec) {
		return p.phase(name, false, drain, sp.LoadSpec, sp.Limits)
	}
	ph := like
	ph.Name, ph.Measured, ph.Drain, ph.Sweep, ph.UntilDecided = name, false, drain, "", false
	ph.Duration, ph.Requests = sp.Duration, sp.Requests
	if ph.Pacer != nil {
		ph.Pacer = p.openPacer(name, ph.Rate, ph.RateStages, Arrival{Process: ph.Arrival, CV: ph.CV})
	}
	if len(ph.Levels) > 0 && ph.Duration == 0 {
		ph.Duration = like.Duration
	}
	return ph, nil
}

func hasLoadKind(l scenarios.LoadSpec) bool {
	return l.Concurrency > 0 || l.Rate > 0 || len(l.Stages) > 0
}

// phase builds one phase from a load and its limits.
func (p *Plan) phase(name string, measured, drain bool, load scenarios.LoadSpec, lim scenarios.Limits) (Phase, error) {
	ph := Phase{Name: name, Measured: measured, Drain: drain, Duration: lim.Duration, Requests: lim.Requests,
		UntilDecided: measured && lim.Until == scenarios.UntilDecided}
	think, err := newThinkDist(load.ThinkTime)
	if err != nil {
		return Phase{}, fmt.Errorf("phase %s: %w", name, err)
	}
	var rateStages []RateStage
	var userStages []ConcurrencyStage
	for _, st := range load.Stages {
		rateStages = append(rateStages, RateStage{Duration: st.Duration, Rate: st.Rate})
		userStages = append(userStages, ConcurrencyStage{Duration: st.Duration, Concurrency: st.Concurrency})
	}
	rampOfRates := len(load.Stages) > 0 && load.Stages[0].OfRate()
	if err := checkRate(load.Rate); err != nil {
		return Phase{}, fmt.Errorf("phase %s: %w", name, err)
	}
	for i, st := range rateStages {
		if err := checkRate(st.Rate); err != nil {
			return Phase{}, fmt.Errorf("phase %s: stage %d: %w", name, i+1, err)
		}
	}
	switch {
	case load.Concurrency > 0:
		ph.Concurrency = load.Concurrency
		ph.think = think
	case load.Rate > 0 || rampOfRates:
		ph.Rate, ph.Arrival, ph.CV = load.Rate, load.Arrival, load.CV
		ph.MaxConcurrency, ph.WhenCapped = load.MaxConcurrency, load.WhenCapped
		if rampOfRates {
			ph.Rate, ph.RateStages = 0, rateStages
		}
		ph.Pacer = p.openPacer(name, ph.Rate, ph.RateStages, Arrival{Process: ph.Arrival, CV: ph.CV})
	case len(load.Stages) > 0:
		ph.Levels = UserLevels(userStages)
		ph.think = think
	default:
		return Phase{}, fmt.Errorf("phase %s: no load (concurrency, rate or stages)", name)
	}
	if len(load.Stages) > 0 {
		total := stagesDuration(rateStages)
		if ph.Duration == 0 || ph.Duration > total {
			ph.Duration = total
		}
	}
	if ph.Duration <= 0 && ph.Requests <= 0 {
		return Phase{}, fmt.Errorf("phase %s: no duration and no request count: it would never end", name)
	}
	return ph, nil
}

// openPacer builds an open loop's schedule. Its random stream is keyed by
// the phase's name, so adding a warmup does not change the main phase's arrivals.
func (p *Plan) openPacer(phase string, rate float64, stages []RateStage, a Arrival) Pacer {
	seed := p.arrivalSeed(phase)
	if len(stages) > 0 {
		return Ramp(stages, a, seed)
	}
	switch a.Process {
	case scenarios.ArrivalConstant:
		return Constant(rate)
	case scenarios.ArrivalGamma:
		return Gamma(rate, a.CV, seed)
	}
	return Poisson(rate, seed)
}

func (p *Plan) arrivalSeed(phase string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(phase))
	return subSeed(p.seed, streamArrivals, h.Sum64())
}

// autoRates returns the open-loop rate of every step of an automatic sweep
// from the baseline's and the probe's throughput (requests/s): evenly spaced
// from the baseline up to the probe, the last step at the probe's rate.
func AutoRates(baseline, probe float64, steps int) []float64 {
	lo := baseline
	if probe <= baseline {
		lo = 0 // the engine does not batch: spread the rates below the probe
	}
	rates := make([]float64, steps)
	for k := range steps {
		rates[k] = lo + float64(k+1)*(probe-lo)/float64(steps)
	}
	return rates
}

// Name is the scenario's name.
func (p *Plan) Name() string { return p.name }

// Phases returns the phases in the order they run.
func (p *Plan) Phases() []Phase { return append([]Phase(nil), p.phases...) }

// Turns is the number of requests per conversation: 1, or the turns of a
// multi-turn dataset. A conversation's requests are sent one after the other.
func (p *Plan) Turns() int { return p.turns }

// Request returns the i-th request of the run (i ≥ 0): its id, messages and
// token targets, the same for the same scenario, seed and i. Phase and
// Intended are the Driver's to set when it sends the request.
func (p *Plan) Request(i int) Request {
	msgs, promptTokens, maxTokens := p.data.request(i)
	r := Request{
		ID:           p.requestID(i),
		Index:        i,
		Messages:     msgs,
		PromptTokens: promptTokens,
		MaxTokens:    maxTokens,
		IgnoreEOS:    p.ignoreEOS,
	}
	if p.agentic != nil {
		p.agentic.mark(p, &r)
	}
	return r
}

// requestID is unique within a run and safe in an HTTP header and a JSON
// string: scenario names are limited to [A-Za-z0-9._-].
func (p *Plan) requestID(i int) string {
	return fmt.Sprintf("%s-%d-%d", p.name, p.seed, i)
}
