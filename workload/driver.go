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
	// The phase's load as it runs (an automatic sweep's or a search
	// probe's is chosen at run time): its constant rate, or its users.
	Rate        float64
	Concurrency int
}

// StopReason says why a run ended.
type StopReason string

const (
	StopCompleted StopReason = "completed" // every phase ran to its end
	StopStopped   StopReason = "stopped"   // the stop channel closed: arrivals stopped, in-flight requests finished
	StopCanceled  StopReason = "canceled"  // the context was canceled: in-flight requests were aborted
	StopAborted   StopReason = "aborted"   // an abort condition held: arrivals stopped, in-flight requests were aborted
)

// ErrAborted is wrapped by Run's error when an abort condition ended the run.
var ErrAborted = errors.New("run aborted")

// PhaseResult is what the Driver did in one phase. Every open-loop arrival
// is accounted for: it was sent (on time or late) or dropped.
type PhaseResult struct {
	Name     string `json:"name"`
	Measured bool   `json:"measured"`
	Sweep    string `json:"sweep,omitempty"` // its role in a sweep

	Rate        float64 `json:"rate,omitempty"`        // open loop at a constant rate: the offered requests/s
	Concurrency int     `json:"concurrency,omitempty"` // closed loop: users (the peak of a ramp)

	Start       time.Duration `json:"start_ns"`        // arrivals began (run clock)
	ArrivalsEnd time.Duration `json:"arrivals_end_ns"` // the phase stopped sending
	End         time.Duration `json:"end_ns"`          // its last request finished

	Sent    int `json:"sent"`    // requests handed to the Sender
	Late    int `json:"late"`    // open loop: sent more than the plan's late threshold after their intended time
	Dropped int `json:"dropped"` // open loop: arrivals that were never sent (at the cap, or cut by the phase's end while waiting)

	OK       int `json:"ok"`       // finished successfully (every request, with a plain Sender)
	Failed   int `json:"failed"`   // finished with an error
	Canceled int `json:"canceled"` // aborted by the run
}

// Throughput is the phase's successful requests per second, from its start
// to its last request's end.
func (pr PhaseResult) Throughput() float64 {
	if span := (pr.End - pr.Start).Seconds(); span > 0 {
		return float64(pr.OK) / span
	}
	return 0
}

// Result is what the Driver did in a run, phase by phase (only phases that started).
type Result struct {
	Phases []PhaseResult `json:"phases"`
	Stop   StopReason    `json:"stop"`
	Reason string        `json:"reason,omitempty"` // what triggered an abort
}

// Driver sends a Plan through a Sender, phase after phase.
//
// Closed-loop phases run users, each sending its next request as soon as its
// previous one returned and its think time passed (Request.Intended stays
// 0). Open-loop phases start one goroutine per arrival at its intended time,
// whatever is in flight, and keep that time in Request.Intended; at a
// concurrency cap an arrival is dropped or waits, and is counted either way.
// A conversation's turns (multi-turn datasets) go one after the other.
//
// A phase that drains (the default) starts once every request of the
// previous phase has finished, so server-side counter deltas between its
// start and end events belong to it alone.
type Driver struct {
	Plan *Plan
	// Sender sends each request; if it also implements OutcomeSender, the
	// Driver learns outcomes (abort conditions, automatic sweeps, counts).
	Sender Sender
	Start  time.Time // the run clock's origin; Intended offsets are on this clock
	// OnPhase, if set, is called at each phase start and end, synchronously
	// (the phase waits for it) and never concurrently with itself.
	OnPhase func(ctx context.Context, ev PhaseEvent)
	// Next, when set, gives the phase to run after the plan's own have run,
	// once the previous one has drained (a capacity search's next probe,
	// chosen from what the last one found); ok false ends the run.
	Next func(done []PhaseResult) (ph Phase, ok bool)
	// Decided, when set, is asked while a phase with UntilDecided runs
	// (every DecideEvery, from its first quarter on) whether its verdict is
	// decided; true ends its arrivals, as its request limit would.
	Decided func(phase string) bool
}

// DecideEvery is how often a phase that runs until decided asks Decided.
const DecideEvery = 250 * time.Millisecond

// Run drives the plan until its phases are done, stop is closed, an abort
// condition holds, or ctx is canceled. Closing stop ends new arrivals and
// lets in-flight requests finish (a first Ctrl-C); canceling ctx also cancels
// the context every in-flight Send got (a second Ctrl-C). Run returns once
// every Send has returned. The Result is valid in every case; the error wraps
// context.Canceled or ErrAborted when the run did not complete its plan for
// those reasons, and is nil after a completed or stopped run.
func (d *Driver) Run(ctx context.Context, stop <-chan struct{}) (Result, error) {
	if d.Plan == nil || d.Sender == nil || d.Start.IsZero() {
		return Result{}, errors.New("workload: Driver needs a Plan, a Sender and a Start time")
	}
	reqCtx, cancelRequests := context.WithCancel(ctx)
	defer cancelRequests()
	r := &run{d: d, ctx: ctx, reqCtx: reqCtx, cancelRequests: cancelRequests,
		halt: make(chan struct{}), done: make(chan struct{})}
	if os, ok := d.Sender.(OutcomeSender); ok {
		r.sendOutcome = os.SendOutcome
	} else {
		r.sendOutcome = func(ctx context.Context, req Request) Outcome {
			d.Sender.Send(ctx, req)
			return Outcome{OK: ctx.Err() == nil, Canceled: ctx.Err() != nil}
		}
	}
	// A stop (or cancel) that came before Run sends nothing: watch runs on
	// its own goroutine, which the first arrival could otherwise beat.
	select {
	case <-stop:
		r.stopArrivals(StopStopped, "")
	default:
	}
	if ctx.Err() != nil {
		r.stopArrivals(StopCanceled, "")
	}
	go r.watch(stop)
	defer close(r.done)

	var prev *phaseRun
	for i := 0; ; i++ {
		ph, ok := r.phase(i, prev)
		if !ok {
			break
		}
		if prev != nil && ph.Drain {
			select {
			case <-prev.drained:
			case <-ctx.Done():
			}
		}
		if r.halted() {
			break
		}
		pr := &phaseRun{r: r, index: i, phase: ph, pacer: ph.Pacer, rate: ph.Rate,
			closed: make(chan struct{}), full: make(chan struct{}), drained: make(chan struct{})}
		if ph.Sweep == SweepAuto && !r.resolveAuto(pr) {
			break
		}
		r.mu.Lock() // the abort timer reads the phases (sendingLocked)
		r.phases = append(r.phases, pr)
		r.mu.Unlock()
		pr.run()
		prev = pr
	}
	r.tasks.Wait()
	r.mu.Lock()
	r.stopUnreachableTimer()
	r.mu.Unlock()
	return r.result()
}

func (r *run) result() (Result, error) {
	res := Result{Stop: StopCompleted}
	r.mu.Lock()
	if r.reason != "" {
		res.Stop, res.Reason = r.reason, r.detail
	}
	phases := r.phases
	r.mu.Unlock()
	for _, pr := range phases {
		pr.mu.Lock()
		res.Phases = append(res.Phases, pr.res)
		pr.mu.Unlock()
	}
	switch res.Stop {
	case StopCanceled:
		return res, fmt.Errorf("run %s canceled: %w", r.d.Plan.name, context.Cause(r.ctx))
	case StopAborted:
		return res, fmt.Errorf("%w: %s: %s", ErrAborted, r.d.Plan.name, res.Reason)
	}
	return res, nil
}

// run is the state of one Driver.Run.
type run struct {
	d              *Driver
	ctx            context.Context
	reqCtx         context.Context // what every Send gets: canceled with ctx, or by an abort
	cancelRequests context.CancelFunc
	sendOutcome    func(context.Context, Request) Outcome
	halt           chan struct{} // closed when new arrivals must stop
	done           chan struct{} // closed when Run returns

	mu       sync.Mutex
	reason   StopReason
	detail   string
	sessions int // conversations started (requests, when single-turn)
	finished int // requests that finished, not counting canceled ones
	failed   int
	// unreachableSince is when the current streak of requests that could
	// not connect began (zero: the last request connected).
	unreachableSince time.Time
	unreachable      int // requests in that streak
	// unreachableTimer fires abort.unreachable after the streak began:
	// users back off while the engine is unreachable (backoff.go), so the
	// next failure may come well after the bound.
	unreachableTimer *time.Timer
	phases           []*phaseRun

	tasks   sync.WaitGroup // every goroutine that may send: users, conversations
	eventMu sync.Mutex     // serializes OnPhase
}

func (r *run) watch(stop <-chan struct{}) {
	select {
	case <-stop:
		r.stopArrivals(StopStopped, "")
	case <-r.ctx.Done():
		r.stopArrivals(StopCanceled, "")
	case <-r.done:
	}
}

// stopArrivals halts new arrivals. The first reason is kept, except that a
// cancellation overrides a graceful stop (it aborted requests too).
func (r *run) stopArrivals(reason StopReason, detail string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reason == "" || (reason == StopCanceled && r.reason == StopStopped) {
		r.reason, r.detail = reason, detail
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

// newSession numbers the next conversation (the next request, single-turn).
func (r *run) newSession() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sessions
	r.sessions++
	return r.d.Plan.globalIndex(s)
}

func (r *run) emit(ev PhaseEvent) {
	if r.d.OnPhase == nil {
		return
	}
	r.eventMu.Lock()
	defer r.eventMu.Unlock()
	r.d.OnPhase(r.ctx, ev)
}

// record applies a finished request's outcome to the abort conditions.
func (r *run) record(o Outcome) {
	ab := r.d.Plan.abort
	if o.Canceled || (ab.Errors == 0 && ab.ErrorRate == 0 && ab.Unreachable == 0 && ab.FirstFailures == 0) {
		return
	}
	r.mu.Lock()
	r.finished++
	if !o.OK {
		r.failed++
	}
	var unreachableFor time.Duration
	switch {
	case !o.Unreachable:
		r.unreachableSince, r.unreachable = time.Time{}, 0
		r.stopUnreachableTimer()
	case r.unreachableSince.IsZero():
		r.unreachableSince, r.unreachable = time.Now(), 1
		r.startUnreachableTimer(r.unreachableSince)
	default:
		r.unreachable++
		unreachableFor = time.Since(r.unreachableSince)
	}
	var why string
	switch {
	case ab.FirstFailures > 0 && r.finished == ab.FirstFailures && r.failed == r.finished:
		why = fmt.Sprintf("the first %d requests all failed: nothing works, see the error samples (abort.first_failures is %d)",
			r.finished, ab.FirstFailures)
	case ab.Unreachable > 0 && unreachableFor >= ab.Unreachable:
		why = unreachableWhy(unreachableFor, r.unreachable, ab.Unreachable)
	case ab.Errors > 0 && r.failed >= ab.Errors:
		why = fmt.Sprintf("%d requests failed (abort.errors is %d)", r.failed, ab.Errors)
	case ab.ErrorRate > 0 && r.finished >= ab.MinRequests && float64(r.failed)/float64(r.finished) > ab.ErrorRate:
		why = fmt.Sprintf("%d of %d finished requests failed, above abort.error_rate %g", r.failed, r.finished, ab.ErrorRate)
	}
	r.mu.Unlock()
	if why != "" {
		r.stopArrivals(StopAborted, why)
		r.cancelRequests()
	}
}

// startUnreachableTimer aborts the run abort.unreachable after since,
// unless the streak that began then has ended. Call with r.mu held.
func (r *run) startUnreachableTimer(since time.Time) {
	bound := r.d.Plan.abort.Unreachable
	if bound <= 0 {
		return
	}
	r.stopUnreachableTimer()
	r.unreachableTimer = time.AfterFunc(bound, func() {
		r.mu.Lock()
		// A streak that ended, or a run that sends nothing now (a phase's
		// closing snapshot, the wait before the next phase), is no reason:
		// the next failure, if any, checks the bound again (record).
		if !r.unreachableSince.Equal(since) || !r.sendingLocked() {
			r.mu.Unlock()
			return
		}
		why := unreachableWhy(time.Since(since), r.unreachable, bound)
		r.mu.Unlock()
		r.stopArrivals(StopAborted, why)
		r.cancelRequests()
	})
}

// sendingLocked reports whether some phase still has arrivals open or
// requests in flight. Call with r.mu held (it takes each phase's lock
// inside it; nothing takes r.mu under a phase's).
func (r *run) sendingLocked() bool {
	for _, pr := range r.phases {
		pr.mu.Lock()
		busy := !pr.arrivalsDone || pr.inflight > 0
		pr.mu.Unlock()
		if busy {
			return true
		}
	}
	return false
}

// stopUnreachableTimer ends the streak's timer. Call with r.mu held.
func (r *run) stopUnreachableTimer() {
	if r.unreachableTimer != nil {
		r.unreachableTimer.Stop()
		r.unreachableTimer = nil
	}
}

func unreachableWhy(d time.Duration, n int, bound time.Duration) string {
	return fmt.Sprintf("no request could connect to the engine for %s (the last %d): it is gone or unreachable (abort.unreachable is %s)",
		d.Round(100*time.Millisecond), n, bound)
}

// resolveAuto chooses an automatic sweep step's rate from the baseline's and
// the probe's throughput; false (and the run aborted) if they had none.
func (r *run) resolveAuto(pr *phaseRun) bool {
	var baseline, probe float64
	for _, done := range r.phases {
		switch done.phase.Sweep {
		case SweepBaseline:
			baseline = done.res.Throughput()
		case SweepProbe:
			probe = done.res.Throughput()
		}
	}
	if probe <= 0 {
		r.stopArrivals(StopAborted, "automatic sweep: the throughput probe completed no request, so there is no rate to sweep to")
		return false
	}
	ph := pr.phase
	pr.rate = AutoRates(baseline, probe, ph.AutoMax)[ph.AutoStep-1]
	pr.pacer = r.d.Plan.openPacer(ph.Name, pr.rate, nil, Arrival{Process: ph.Arrival, CV: ph.CV})
	return true
}

// phaseRun is one phase in progress.
type phaseRun struct {
	r     *run
	index int
	phase Phase
	pacer Pacer   // open loop (resolved at run time for an automatic sweep)
	rate  float64 // its constant rate, if any

	closed  chan struct{} // closed when arrivals end
	full    chan struct{} // closed when the request limit is reached
	drained chan struct{} // closed after the end event

	mu           sync.Mutex
	res          PhaseResult
	inflight     int
	arrivalsDone bool
	isFull       bool
	ended        bool
	agents       sync.WaitGroup // an agentic replay's root sessions in progress (agentic_drive.go)
}

func (pr *phaseRun) event(kind PhaseEventKind, at time.Duration) PhaseEvent {
	return PhaseEvent{Kind: kind, Phase: pr.phase.Name, Index: pr.index, Measured: pr.phase.Measured, At: at,
		Rate: pr.rate, Concurrency: pr.phase.Concurrency}
}

// run emits the start event and drives arrivals until the phase's limits,
// a stop, or an abort; it returns while requests may still be in flight.
func (pr *phaseRun) run() {
	r := pr.r
	r.emit(pr.event(PhaseStart, r.now()))
	ph := pr.phase
	pr.mu.Lock()
	pr.res = PhaseResult{Name: ph.Name, Measured: ph.Measured, Sweep: ph.Sweep, Rate: pr.rate, Concurrency: ph.Concurrency, Start: r.now()}
	for _, l := range ph.Levels {
		pr.res.Concurrency = max(pr.res.Concurrency, l.Users)
	}
	pr.mu.Unlock()
	stopDeciding := pr.decideUntil()
	if pr.pacer != nil {
		pr.openLoop()
	} else {
		pr.closedLoop()
	}
	stopDeciding()
	pr.closeArrivals()
}

// deadline is the end of the phase's duration on the run clock (0: none).
func (pr *phaseRun) deadline() time.Duration {
	if pr.phase.Duration <= 0 {
		return 0
	}
	return pr.res.Start + pr.phase.Duration
}

// deadlineTimer fires at the phase's deadline (never when it has none).
func (pr *phaseRun) deadlineTimer() (<-chan time.Time, func()) {
	dl := pr.deadline()
	if dl == 0 {
		return nil, func() {}
	}
	t := time.NewTimer(dl - pr.r.now())
	return t.C, func() { t.Stop() }
}

// admit counts one more request in flight if the phase may still send.
// Admission and closing the arrivals share pr.mu, so the end event cannot
// fire between a request's admission and its send.
func (pr *phaseRun) admit() bool {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.arrivalsDone || pr.isFull || pr.r.halted() {
		return false
	}
	pr.res.Sent++
	pr.inflight++
	if pr.phase.Requests > 0 && pr.res.Sent >= pr.phase.Requests {
		pr.isFull = true
		close(pr.full)
	}
	return true
}

// send sends an admitted request and accounts for its end.
func (pr *phaseRun) send(req Request) Outcome {
	o := pr.r.sendOutcome(pr.r.reqCtx, req)
	pr.r.record(o)
	pr.mu.Lock()
	switch {
	case o.Canceled:
		pr.res.Canceled++
	case o.OK:
		pr.res.OK++
	default:
		pr.res.Failed++
	}
	pr.inflight--
	last := pr.arrivalsDone && pr.inflight == 0
	pr.mu.Unlock()
	if last {
		pr.end()
	}
	return o
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
	close(pr.closed)
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
	pr.r.emit(pr.event(PhaseEnd, at))
	close(pr.drained)
}

// sleep pauses a user or conversation; false if the phase's arrivals ended first.
func (pr *phaseRun) sleep(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-pr.closed:
		return false
	case <-pr.r.halt:
		return false
	}
}

// closedLoop runs the phase's users (a fixed number, or a ramp) until the
// phase's limits; users still in a request finish it, then find the phase closed.
func (pr *phaseRun) closedLoop() {
	levels := pr.phase.Levels
	if len(levels) == 0 {
		levels = []LevelChange{{At: 0, Users: pr.phase.Concurrency}}
	}
	pool := &userPool{pr: pr}
	deadline, stopDeadline := pr.deadlineTimer()
	defer stopDeadline()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for k := 0; ; k++ {
		var change <-chan time.Time
		if k < len(levels) {
			wait := pr.res.Start + levels[k].At - pr.r.now()
			if wait <= 0 {
				pool.setLevel(levels[k].Users)
				continue
			}
			timer.Reset(wait)
			change = timer.C
		}
		select {
		case <-change:
			pool.setLevel(levels[k].Users)
		case <-deadline:
			return
		case <-pr.full:
			return
		case <-pr.r.halt:
			return
		}
	}
}

// userPool is a closed loop's users; user u runs while u < level.
type userPool struct {
	pr      *phaseRun
	mu      sync.Mutex
	level   int
	running []bool
}

func (p *userPool) setLevel(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.level = n
	for len(p.running) < n {
		p.running = append(p.running, false)
	}
	for u := range n {
		if !p.running[u] {
			p.running[u] = true
			p.pr.r.tasks.Go(func() { p.user(u) })
		}
	}
}

// keep reports whether user u stays; a user leaving is marked under the same
// lock that setLevel reads, so a level raised at that moment restarts it.
func (p *userPool) keep(u int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if u < p.level {
		return true
	}
	p.running[u] = false
	return false
}

func (p *userPool) leave(u int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running[u] = false
}

// user is one closed-loop user: think (except before its first request),
// then send the next turn of its conversation, or start a new conversation.
func (p *userPool) user(u int) {
	pr := p.pr
	r := pr.r
	turns := r.d.Plan.turns
	think := newRand(r.d.Plan.seed, streamThink, uint64(pr.index)<<32|uint64(u))
	backoff := newBackoff(r.d.Plan.seed, pr.index, u)
	session, turn := 0, turns
	for first := true; p.keep(u); first = false {
		if !first && !pr.sleep(backoff.wait()) {
			break
		}
		if !first && pr.phase.think != nil && !pr.sleep(pr.phase.think.draw(think)) {
			break
		}
		if !pr.admit() {
			break
		}
		if turn == turns {
			session, turn = r.newSession(), 0
		}
		backoff.after(pr.send(pr.request(session*turns+turn, 0)))
		turn++
	}
	p.leave(u)
}

// openLoop sends each arrival at its intended time, each conversation in its
// own goroutine, and accounts for every arrival at a cap.
func (pr *phaseRun) openLoop() {
	r := pr.r
	ph := pr.phase
	var slots chan struct{}
	if ph.MaxConcurrency > 0 {
		slots = make(chan struct{}, ph.MaxConcurrency)
	}
	deadline, stopDeadline := pr.deadlineTimer()
	defer stopDeadline()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for n := 0; ; n++ {
		off, ok := pr.pacer.Offset(n)
		if !ok || (ph.Duration > 0 && off >= ph.Duration) {
			pr.waitAgents(deadline)
			if deadline != nil {
				select { // the phase lasts its duration even when arrivals end sooner
				case <-deadline:
				case <-r.halt:
				}
			}
			return
		}
		if ph.Requests > 0 && n >= ph.Requests {
			return
		}
		due := pr.res.Start + off
		if wait := due - r.now(); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-r.halt:
				return
			case <-pr.full:
				return
			}
		}
		session := r.newSession() // a dropped arrival keeps its number: arrival n is always request n
		if slots != nil {
			select {
			case slots <- struct{}{}:
			default:
				if ph.WhenCapped != "wait" {
					pr.count(func(res *PhaseResult) { res.Dropped++ })
					continue
				}
				select {
				case slots <- struct{}{}:
				case <-deadline:
					pr.dropRest(n)
					return
				case <-r.halt:
					return
				}
			}
		}
		if !pr.admit() {
			if slots != nil {
				<-slots
			}
			return
		}
		if r.now()-due > r.d.Plan.lateAfter {
			pr.count(func(res *PhaseResult) { res.Late++ })
		}
		pr.agents.Add(1)
		r.tasks.Go(func() {
			defer pr.agents.Done()
			pr.conversation(session, due)
			if slots != nil {
				<-slots
			}
		})
	}
}

// dropRest counts arrival n and every later one due before the phase's
// deadline as dropped: the deadline passed while they waited for the cap.
func (pr *phaseRun) dropRest(n int) {
	dropped := 0
	for ; ; n++ {
		off, ok := pr.pacer.Offset(n)
		if !ok || off >= pr.phase.Duration || (pr.phase.Requests > 0 && n >= pr.phase.Requests) {
			break
		}
		if dropped > 0 {
			pr.r.newSession()
		}
		dropped++
	}
	pr.count(func(res *PhaseResult) { res.Dropped += dropped })
}

func (pr *phaseRun) count(f func(*PhaseResult)) {
	pr.mu.Lock()
	f(&pr.res)
	pr.mu.Unlock()
}

// conversation sends an admitted arrival and, for a multi-turn dataset, its
// later turns, each as soon as the previous one returned.
func (pr *phaseRun) conversation(session int, due time.Duration) {
	if ap := pr.r.d.Plan.agentic; ap != nil {
		pr.agentRoot(ap, session, due)
		return
	}
	turns := pr.r.d.Plan.turns
	pr.send(pr.request(session*turns, due))
	for t := 1; t < turns; t++ {
		if !pr.admit() {
			return
		}
		pr.send(pr.request(session*turns+t, pr.r.now()))
	}
}
