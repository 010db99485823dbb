package sim

import (
	"net/http"
	"time"

	"github.com/llmbench-org/llmbench/engine/sim/batch"
)

// lateSlack is how far behind schedule a pass may start and still be
// timed from the previous pass's scheduled end: timer wake-ups are late by up
// to about a millisecond, and timing from the schedule keeps the modeled
// rate instead of adding that lateness to every pass.
const lateSlack = 2 * time.Millisecond

// run is the batching loop: it owns the scheduler.
func (e *Engine) run() {
	defer close(e.loopDone)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var restartC <-chan time.Time
	if every := e.cfg.Faults.RestartEvery; every > 0 {
		tick := time.NewTicker(every)
		defer tick.Stop()
		restartC = tick.C
	}
	var switchC <-chan time.Time
	if after := e.cfg.Faults.DialectSwitchAfter; after > 0 {
		t := time.NewTimer(after - e.now())
		defer t.Stop()
		switchC = t.C
	}
	var ops []inboxOp
	for {
		select {
		case <-restartC:
			e.restart()
		case <-e.restartNow:
			e.restart()
		case reply := <-e.scrapeRestart:
			e.restartForScrape(reply)
		case <-switchC:
			e.switchDialect()
			switchC = nil
		default:
		}
		e.serveCacheResets()
		if !e.holding {
			ops = e.takeInbox(ops)
			e.apply(ops)
			clear(ops)
		}

		b := e.sched.Schedule()
		if b == nil {
			e.lastEnd = -1
			select {
			case <-e.kick:
				continue
			case <-restartC:
				e.restart()
				continue
			case reply := <-e.scrapeRestart:
				e.restartForScrape(reply)
				continue
			case <-switchC:
				e.switchDialect()
				switchC = nil
				continue
			case <-e.stopLoop:
				e.abortAll(batch.FinishAbort)
				return
			}
		}
		start := e.now()
		base := start
		if e.lastEnd >= 0 && start-e.lastEnd < lateSlack {
			base = e.lastEnd
		}
		target := base + b.Duration
		e.beginPass(b, start)

		stopped := false
		if d := target - e.now(); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-e.stopLoop:
				timer.Stop()
				stopped = true
			}
		}
		e.sched.Complete(b)
		end := e.now()
		e.lastEnd = target
		if end-target > lateSlack {
			e.lastEnd = end
		}
		e.endPass(b, start, end)
		if stopped {
			e.abortAll(batch.FinishAbort)
			return
		}
	}
}

// apply feeds arrivals and aborts to the scheduler, between passes.
func (e *Engine) apply(ops []inboxOp) {
	if len(ops) == 0 {
		return
	}
	now := e.now()
	for _, op := range ops {
		s := op.s
		switch op.kind {
		case opAdd:
			s.queueEnter = now
			e.sched.Add(&s.seq)
			e.active[s] = struct{}{}
			e.metrics.received(s)
			e.trace.event(evPreprocessingEnd, s.chunkID, now)
			e.trace.event(evQueueStart, s.chunkID, now)
		case opAbort:
			if _, ok := e.active[s]; !ok {
				continue // already finished: its final outcome is on its way
			}
			e.sched.Abort(&s.seq)
			delete(e.active, s)
			e.metrics.aborted(s, now)
			s.deliver(0, batch.FinishAbort)
		}
	}
}

func (e *Engine) beginPass(b *batch.Batch, start time.Duration) {
	for _, q := range b.Preempted {
		e.trace.event(evPreempted, q.Owner.(*stream).chunkID, start)
	}
	for _, q := range b.Admitted {
		s := q.Owner.(*stream)
		if s.queueLeave == 0 {
			s.queueLeave = start
			e.metrics.queued(s, start)
			e.trace.event(evQueueEnd, s.chunkID, start)
			e.trace.event(evAllocStart, s.chunkID, start)
			e.trace.event(evAllocEnd, s.chunkID, start)
			e.trace.event(evInferenceStart, s.chunkID, start)
		} else {
			e.trace.event(evRescheduled, s.chunkID, start)
		}
	}
	for _, q := range b.Seqs {
		s := q.Owner.(*stream)
		if q.StepPrefill() > 0 && s.prefillStart == 0 {
			s.prefillStart = start
		}
	}
	e.metrics.scheduled(b, e.sched, start)
}

func (e *Engine) endPass(b *batch.Batch, start, end time.Duration) {
	if b.DecodeSeqs > 0 {
		e.decodeN++
	}
	e.metrics.passed(b, e.sched, end, e.decodeN)
	e.gpu.pass(b, start, end)
	for _, q := range b.Seqs {
		s := q.Owner.(*stream)
		n := q.StepEmitted()
		if q.StepPrefill() > 0 && n > 0 && s.prefillEnd == 0 {
			s.prefillEnd = end
		}
		if n > 0 {
			e.metrics.delivered(s, n, end)
			if s.delivered == 0 {
				s.firstDelivery = end
				e.trace.event(evFirstToken, s.chunkID, end)
				e.trace.event(evDecodeStart, s.chunkID, end)
			}
			s.delivered += n
			s.lastDelivery = end
		}
		final := ""
		if q.Finished() {
			final = q.FinishReason
			delete(e.active, s)
			e.metrics.finished(s, end)
			e.countFinished()
			e.trace.event(evInferenceEnd, s.chunkID, end)
		}
		if n > 0 || final != "" {
			s.deliver(n, final)
		}
	}
	e.stepIdx++
	e.truth.addStep(StepTruth{
		Index:         e.stepIdx,
		Start:         start,
		End:           end,
		Modeled:       b.Duration,
		BatchSize:     len(b.Seqs),
		DecodeSeqs:    b.DecodeSeqs,
		PrefillTokens: b.PrefillTokens,
		DecodeTokens:  b.DecodeTokens,
		PrefillDone:   b.PrefillDone,
		Admitted:      len(b.Admitted),
		Preempted:     len(b.Preempted),
		Finished:      len(b.Finished),
		Running:       e.sched.Running(),
		Waiting:       e.sched.Waiting(),
		KVUsedBlocks:  e.sched.KVUsedBlocks(),
		KVUsage:       e.sched.KVUsage(),
	})
}

// finishRestart is the final outcome of requests cut by a restart.
const finishRestart = "restart"

// abortAll ends every request still in the engine with the given outcome
// (the engine is stopping or restarting).
func (e *Engine) abortAll(outcome string) {
	now := e.now()
	// Requests posted but not yet applied are cut too.
	for _, op := range e.takeInbox(nil) {
		if op.kind == opAdd {
			op.s.deliver(0, outcome)
		}
	}
	for s := range e.active {
		e.sched.Abort(&s.seq)
		e.metrics.aborted(s, now)
		s.deliver(0, outcome)
	}
	clear(e.active)
}

// restart cuts every request, and starts a fresh scheduler and metric set,
// as a process restart would. The engine answers 503 during the downtime.
func (e *Engine) restart() {
	e.downUntil.Store(int64(e.now() + e.cfg.Faults.RestartDowntime))
	e.goDown()
	e.abortAll(finishRestart)
	sched, err := batch.New(e.cfg.Params)
	if err != nil {
		panic(err) // the params were validated by New
	}
	e.sched = sched
	e.decodeN = 0
	e.lastEnd = -1
	e.setMetrics(e.newMetrics())
	e.restarts.Add(1)
	e.finishedN = 0
}

// restartForScrape is Faults.RestartAtFinished's restart, asked for by a
// /metrics read while the loop holds requests back: the old process's
// metrics go to the reader (their final counts: nothing runs in it any
// more), then the engine restarts.
func (e *Engine) restartForScrape(reply chan<- http.Handler) {
	old := *e.metricsHTTP.Load()
	e.restart()
	e.holding, e.heldDone = false, true
	e.restartHeld.Store(false)
	reply <- old
}

// countFinished counts a finished request toward Faults.RestartAtFinished,
// and holds new requests back once it is reached.
func (e *Engine) countFinished() {
	e.finishedN++
	if n := e.cfg.Faults.RestartAtFinished; n > 0 && !e.heldDone && !e.holding && e.finishedN >= n {
		e.holding = true
		e.restartHeld.Store(true)
	}
}
