package workload

import (
	"errors"
	"fmt"
	"time"

	"github.com/llmbench-org/llmbench/scenarios"
)

// DefaultLateAfter is how far past its intended time an open-loop arrival may
// go out before the Driver counts it late.
const DefaultLateAfter = 10 * time.Millisecond

// Plan is a scenario turned into phases and a deterministic source of
// requests. It is immutable and safe for concurrent use.
type Plan struct {
	name      string
	seed      int64
	phases    []Phase
	prompt    lengthDist
	output    lengthDist
	ignoreEOS bool
	lateAfter time.Duration
}

// Phase is one stretch of the run with one load: a closed loop of Concurrency
// users, or an open loop paced by Pacer. It ends after Duration (if > 0) or
// once Requests were sent (if > 0), whichever comes first.
type Phase struct {
	Name     string
	Measured bool // its requests count in the results (warmup and cooldown do not)

	Concurrency int     // closed loop: number of users; 0 for an open loop
	Rate        float64 // open loop: the offered rate in requests/s (for display; Pacer is the schedule)
	Arrival     string  // open loop: the process behind Pacer
	Pacer       Pacer   // open loop: the arrival schedule, offsets from the phase start

	Duration time.Duration
	Requests int
}

// Open reports whether the phase is an open loop.
func (ph Phase) Open() bool { return ph.Pacer != nil }

// NewPlan builds the plan of a validated scenario.
func NewPlan(s scenarios.Scenario) (*Plan, error) {
	prompt, err := newLengthDist(s.Workload.Prompt)
	if err != nil {
		return nil, fmt.Errorf("plan %s: prompt_tokens: %w", s.Name, err)
	}
	output, err := newLengthDist(s.Workload.Output)
	if err != nil {
		return nil, fmt.Errorf("plan %s: output_tokens: %w", s.Name, err)
	}
	p := &Plan{
		name:      s.Name,
		seed:      s.Seed,
		prompt:    prompt,
		output:    output,
		ignoreEOS: true,
		lateAfter: DefaultLateAfter,
	}
	main, err := p.phase("main", true, s.Workload, 0)
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", s.Name, err)
	}
	p.phases = []Phase{main}
	return p, nil
}

// phase builds phase number k from a workload's load and limits.
func (p *Plan) phase(name string, measured bool, w scenarios.Workload, k int) (Phase, error) {
	ph := Phase{Name: name, Measured: measured, Duration: w.Duration, Requests: w.Requests}
	if ph.Duration <= 0 && ph.Requests <= 0 {
		return Phase{}, fmt.Errorf("phase %s: no duration and no request count: it would never end", name)
	}
	seed := subSeed(p.seed, streamArrivals, uint64(k))
	switch {
	case w.Concurrency > 0:
		ph.Concurrency = w.Concurrency
	case w.Rate > 0:
		ph.Rate, ph.Arrival = w.Rate, w.Arrival
		switch w.Arrival {
		case scenarios.ArrivalConstant:
			ph.Pacer = Constant(w.Rate)
		case scenarios.ArrivalPoisson:
			ph.Pacer = Poisson(w.Rate, seed)
		default:
			return Phase{}, fmt.Errorf("phase %s: arrival %q is not supported", name, w.Arrival)
		}
	default:
		return Phase{}, errors.New("phase " + name + ": neither a concurrency nor a rate")
	}
	return ph, nil
}

// Name is the scenario's name.
func (p *Plan) Name() string { return p.name }

// Phases returns the phases in the order they run.
func (p *Plan) Phases() []Phase { return append([]Phase(nil), p.phases...) }

// Request returns the i-th request of the run (i ≥ 0): its id, messages and
// token targets, the same for the same scenario, seed and i. Phase and
// Intended are the Driver's to set when it sends the request.
func (p *Plan) Request(i int) Request {
	rng := newRand(p.seed, streamRequest, uint64(i))
	promptTokens := p.prompt.draw(rng)
	maxTokens := p.output.draw(rng)
	return Request{
		ID:           p.requestID(i),
		Index:        i,
		Messages:     []Message{{Role: "user", Content: words(rng, promptTokens)}},
		PromptTokens: promptTokens,
		MaxTokens:    maxTokens,
		IgnoreEOS:    p.ignoreEOS,
	}
}

// requestID is unique within a run and safe in an HTTP header and a JSON
// string: scenario names are limited to [A-Za-z0-9._-].
func (p *Plan) requestID(i int) string {
	return fmt.Sprintf("%s-%d-%d", p.name, p.seed, i)
}
