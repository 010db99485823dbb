package workload

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// PhaseEventKind says whether a phase starts or ends.
type PhaseEventKind string

const (
	PhaseStart PhaseEventKind = "start" // just before the phase's first request
	PhaseEnd   PhaseEventKind = "end"   // right after the phase's last request finished
)

// PhaseEvent marks a phase boundary. The CLI snapshots /metrics there, so a
// measured phase's counter deltas cover exactly its requests.
type PhaseEvent struct {
	Kind     PhaseEventKind
	Phase    string
	Index    int // position in Plan.Phases
	Measured bool
	At       time.Duration // on the run clock
}

// StopReason says why a run ended.
type StopReason string

const (
	StopCompleted StopReason = "completed" // every phase ran to its end
	StopStopped   StopReason = "stopped"   // the stop channel closed: arrivals stopped, in-flight requests finished
	StopCanceled  StopReason = "canceled"  // the context was canceled: in-flight requests were aborted
)

// PhaseResult is what the Driver did in one phase. Every open-loop arrival
// is accounted for: it was sent (possibly late) or dropped.
type PhaseResult struct {
	Name     string `json:"name"`
	Measured bool   `json:"measured"`

	Start       time.Duration `json:"start_ns"`        // arrivals began (run clock)
	ArrivalsEnd time.Duration `json:"arrivals_end_ns"` // the phase stopped sending
	End         time.Duration `json:"end_ns"`          // its last request finished

	Sent    int `json:"sent"`    // requests handed to the Sender
	Late    int `json:"late"`    // open loop: sent more than the plan's late threshold after their intended time
	Dropped int `json:"dropped"` // open loop: arrivals that were never sent
}

// Result is what the Driver did in a run, phase by phase (only phases that started).
type Result struct {
	Phases []PhaseResult `json:"phases"`
	Stop   StopReason    `json:"stop"`
}

// Driver sends a Plan through a Sender, phase after phase.
//
// Closed-loop phases run Concurrency users, each sending its next request as
// soon as the previous one returned (Request.Intended stays 0). Open-loop
// phases start one goroutine per arrival at its intended time, whatever is
// in flight, and keep that time in Request.Intended.
//
// A phase starts once the previous phase's requests have all finished, so
// server-side counter deltas between its start and end events belong to it alone.
type Driver struct {
	Plan   *Plan
	Sender Sender
	Start  time.Time // the run clock's origin; Intended offsets are on this clock
	// OnPhase, if set, is called at each phase start and end, synchronously
	// (the phase waits for it) and never concurrently with itself.
	OnPhase func(ctx context.Context, ev PhaseEvent)
}

// Run drives the plan until its phases are done, stop is closed, or ctx is
// canceled. Closing stop ends new arrivals and lets in-flight requests finish
// (a first Ctrl-C); canceling ctx also cancels the context every in-flight
// Send got (a second Ctrl-C). Run returns once every Send has returned. Its
// error is non-nil only when ctx was canceled or the Driver is misconfigured;
// the Result is valid either way.
func (d *Driver) Run(ctx context.Context, stop <-chan struct{}) (Result, error) {
	if d.Plan == nil || d.Sender == nil || d.Start.IsZero() {
		return Result{}, errors.New("workload: Driver needs a Plan, a Sender and a Start time")
	}
	r := &run{d: d, ctx: ctx, halt: make(chan struct{}), done: make(chan struct{})}
	go r.watch(stop)
	defer close(r.done)

	var prev *phaseRun
	for i, ph := range d.Plan.phases {
		if prev != nil {
			select {
			case <-prev.drained:
			case <-ctx.Done():
			}
		}
		if r.halted() {
			break
		}
		pr := &phaseRun{r: r, index: i, phase: ph, drained: make(chan struct{})}
		r.phases = append(r.phases, pr)
		pr.run()
		prev = pr
	}
	r.sends.Wait()

	res := Result{Stop: StopCompleted}
	r.mu.Lock()
	if r.reason != "" {
		res.Stop = r.reason
	}
	r.mu.Unlock()
	for _, pr := range r.phases {
		pr.mu.Lock()
		res.Phases = append(res.Phases, pr.res)
		pr.mu.Unlock()
	}
	if res.Stop == StopCanceled {
		return res, fmt.Errorf("run %s canceled: %w", d.Plan.name, context.Cause(ctx))
	}
	return res, nil
}

// run is the state of one Driver.Run.
type run struct {
	d    *Driver
	ctx  context.Context
	halt chan struct{} // closed when new arrivals must stop
	done chan struct{} // closed when Run returns

	mu     sync.Mutex
	reason StopReason
	next   int // index of the next request
	phases []*phaseRun

	sends   sync.WaitGroup // every Send in flight
	eventMu sync.Mutex     // serializes OnPhase
}

func (r *run) watch(stop <-chan struct{}) {
	select {
	case <-stop:
		r.stopArrivals(StopStopped)
	case <-r.ctx.Done():
		r.stopArrivals(StopCanceled)
	case <-r.done:
	}
}

// stopArrivals halts new arrivals; the first reason given is kept, except
// that a cancellation overrides a graceful stop (it aborted requests too).
func (r *run) stopArrivals(reason StopReason) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reason == "" || reason == StopCanceled {
		r.reason = reason
	}
	select {
	case <-r.halt:
	default:
		close(r.halt)
	}
}

func (r *run) halted() bool {
	select {
	case <-r.halt:
		return true
	default:
		return false
	}
}

// now is the run clock.
func (r *run) now() time.Duration { return time.Since(r.d.Start) }

func (r *run) emit(ctx context.Context, ev PhaseEvent) {
	if r.d.OnPhase == nil {
		return
	}
	r.eventMu.Lock()
	defer r.eventMu.Unlock()
	r.d.OnPhase(ctx, ev)
}

// phaseRun is one phase in progress.
type phaseRun struct {
	r       *run
	index   int
	phase   Phase
	drained chan struct{} // closed after the end event

	mu           sync.Mutex
	res          PhaseResult
	inflight     int
	arrivalsDone bool
	ended        bool
}

func (pr *phaseRun) event(kind PhaseEventKind, at time.Duration) PhaseEvent {
	return PhaseEvent{Kind: kind, Phase: pr.phase.Name, Index: pr.index, Measured: pr.phase.Measured, At: at}
}

// run emits the start event and drives arrivals until the phase's limits,
// a stop, or a cancellation; it returns while requests may still be in flight.
func (pr *phaseRun) run() {
	r := pr.r
	r.emit(r.ctx, pr.event(PhaseStart, r.now()))
	pr.mu.Lock()
	pr.res = PhaseResult{Name: pr.phase.Name, Measured: pr.phase.Measured, Start: r.now()}
	pr.mu.Unlock()
	if pr.phase.Open() {
		pr.openLoop()
	} else {
		pr.closedLoop()
	}
	pr.closeArrivals()
}

// deadline is the end of the phase's duration on the run clock (0: none).
func (pr *phaseRun) deadline() time.Duration {
	if pr.phase.Duration <= 0 {
		return 0
	}
	return pr.res.Start + pr.phase.Duration
}

// admit claims the next request index if the phase may still send, and
// counts it in flight. Admission and closing the arrivals share pr.mu, so the
// end event cannot fire between a request's admission and its send.
func (pr *phaseRun) admit() (int, bool) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.arrivalsDone || pr.r.halted() || (pr.phase.Requests > 0 && pr.res.Sent >= pr.phase.Requests) {
		return 0, false
	}
	pr.res.Sent++
	pr.inflight++
	pr.r.sends.Add(1)
	r := pr.r
	r.mu.Lock()
	i := r.next
	r.next++
	r.mu.Unlock()
	return i, true
}

// send sends an admitted request and accounts for its end.
func (pr *phaseRun) send(req Request) {
	defer pr.r.sends.Done()
	pr.r.d.Sender.Send(pr.r.ctx, req)
	pr.mu.Lock()
	pr.inflight--
	last := pr.arrivalsDone && pr.inflight == 0
	pr.mu.Unlock()
	if last {
		pr.end()
	}
}

func (pr *phaseRun) request(i int, intended time.Duration) Request {
	req := pr.r.d.Plan.Request(i)
	req.Phase = pr.phase.Name
	req.Intended = intended
	return req
}

// closeArrivals ends the phase's arrivals; the end event follows the last request.
func (pr *phaseRun) closeArrivals() {
	pr.mu.Lock()
	if pr.arrivalsDone {
		pr.mu.Unlock()
		return
	}
	pr.arrivalsDone = true
	pr.res.ArrivalsEnd = pr.r.now()
	last := pr.inflight == 0
	pr.mu.Unlock()
	if last {
		pr.end()
	}
}

func (pr *phaseRun) end() {
	pr.mu.Lock()
	if pr.ended {
		pr.mu.Unlock()
		return
	}
	pr.ended = true
	at := pr.r.now()
	pr.res.End = at
	pr.mu.Unlock()
	pr.r.emit(pr.r.ctx, pr.event(PhaseEnd, at))
	close(pr.drained)
}

// waitUntil blocks until the run clock reaches at; false if arrivals were
// halted first.
func (pr *phaseRun) waitUntil(timer *time.Timer, at time.Duration) bool {
	wait := at - pr.r.now()
	if wait <= 0 {
		return !pr.r.halted()
	}
	timer.Reset(wait)
	select {
	case <-timer.C:
		return !pr.r.halted()
	case <-pr.r.halt:
		timer.Stop()
		return false
	}
}

// closedLoop runs Concurrency users until the phase's limits.
func (pr *phaseRun) closedLoop() {
	var users sync.WaitGroup
	allDone := make(chan struct{})
	for range pr.phase.Concurrency {
		users.Go(func() {
			for {
				i, ok := pr.admit()
				if !ok {
					return
				}
				pr.send(pr.request(i, 0))
			}
		})
	}
	go func() { users.Wait(); close(allDone) }()

	var deadline <-chan time.Time
	if dl := pr.deadline(); dl > 0 {
		timer := time.NewTimer(dl - pr.r.now())
		defer timer.Stop()
		deadline = timer.C
	}
	select {
	case <-deadline: // users still in a request finish it, then find the arrivals closed
	case <-allDone: // the request count was reached
	case <-pr.r.halt:
	}
}

// openLoop sends each arrival at its intended time, in its own goroutine.
func (pr *phaseRun) openLoop() {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for n := 0; ; n++ {
		off, ok := pr.phase.Pacer.Offset(n)
		if !ok || (pr.phase.Duration > 0 && off >= pr.phase.Duration) {
			if dl := pr.deadline(); dl > 0 {
				pr.waitUntil(timer, dl) // the phase lasts its duration even when arrivals end sooner
			}
			return
		}
		if pr.phase.Requests > 0 && n >= pr.phase.Requests {
			return
		}
		due := pr.res.Start + off
		if !pr.waitUntil(timer, due) {
			return
		}
		i, ok := pr.admit()
		if !ok {
			return
		}
		if pr.r.now()-due > pr.r.d.Plan.lateAfter {
			pr.mu.Lock()
			pr.res.Late++
			pr.mu.Unlock()
		}
		go pr.send(pr.request(i, due))
	}
}
