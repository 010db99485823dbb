package workload

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sent is what a test Sender saw of one request.
type sent struct {
	Request
	At      time.Duration // run clock at Send
	EndErr  error         // the request context's error when Send returned
	EndedAt time.Duration
}

// recorder is a Sender that takes work(r) of fake time per request and
// records every call.
type recorder struct {
	start    time.Time
	work     func(r Request) time.Duration
	mu       sync.Mutex
	calls    []sent
	inflight atomic.Int64
}

func (rec *recorder) Send(ctx context.Context, r Request) {
	rec.inflight.Add(1)
	defer rec.inflight.Add(-1)
	at := time.Since(rec.start)
	timer := time.NewTimer(rec.work(r))
	select {
	case <-timer.C:
	case <-ctx.Done():
		timer.Stop()
	}
	rec.mu.Lock()
	rec.calls = append(rec.calls, sent{Request: r, At: at, EndErr: ctx.Err(), EndedAt: time.Since(rec.start)})
	rec.mu.Unlock()
}

func (rec *recorder) all() []sent {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]sent(nil), rec.calls...)
}

func TestClosedLoopKeepsExactlyNInFlight(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const users = 4
		p := plan(t, "name: closed\nengine: {kind: sim}\nworkload: {concurrency: 4, duration: 10s}\n")
		start := time.Now()
		// Requests take 100–160 ms, in whole 10 ms steps; samples fall at 5 ms
		// past each step, when nothing starts or ends.
		rec := &recorder{start: start, work: func(r Request) time.Duration {
			return time.Duration(100+10*(r.Index%7)) * time.Millisecond
		}}
		var samples []int64
		sampler := make(chan struct{})
		go func() {
			defer close(sampler)
			time.Sleep(5 * time.Millisecond)
			for time.Since(start) < 9800*time.Millisecond {
				samples = append(samples, rec.inflight.Load())
				time.Sleep(10 * time.Millisecond)
			}
		}()
		d := &Driver{Plan: p, Sender: rec, Start: start}
		res, err := d.Run(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		<-sampler
		for i, n := range samples {
			if n != users {
				t.Fatalf("sample %d (at %v): %d in flight, want %d", i, 5*time.Millisecond+time.Duration(i)*10*time.Millisecond, n, users)
			}
		}
		calls := rec.all()
		if len(calls) != res.Phases[0].Sent {
			t.Errorf("sender saw %d requests, result says %d sent", len(calls), res.Phases[0].Sent)
		}
		seen := make([]bool, len(calls))
		for _, c := range calls {
			if c.Intended != 0 || c.Phase != "main" || c.At >= 10*time.Second {
				t.Errorf("request %d: intended %v, phase %q, sent at %v", c.Index, c.Intended, c.Phase, c.At)
			}
			seen[c.Index] = true
		}
		for i, ok := range seen {
			if !ok {
				t.Errorf("request index %d was never sent: indices must be 0..n-1", i)
			}
		}
		// Each user sends back to back from 0 to 10 s: about 10 s / 130 ms each.
		if n := len(calls); n < 4*70 || n > 4*80 {
			t.Errorf("%d requests sent, want about %d", n, 4*10000/130)
		}
		if res.Stop != StopCompleted || res.Phases[0].ArrivalsEnd != 10*time.Second {
			t.Errorf("stop %q, arrivals ended at %v; want completed at 10s", res.Stop, res.Phases[0].ArrivalsEnd)
		}
	})
}

func TestClosedLoopRequestCount(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := plan(t, "name: count\nengine: {kind: sim}\nworkload: {concurrency: 3, requests: 10}\n")
		start := time.Now()
		rec := &recorder{start: start, work: func(Request) time.Duration { return time.Second }}
		res, err := (&Driver{Plan: p, Sender: rec, Start: start}).Run(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		// 3 users, 10 requests of 1 s: rounds at 0, 1, 2 s and a last one at 3 s.
		if got := len(rec.all()); got != 10 || res.Phases[0].Sent != 10 {
			t.Errorf("sent %d (result %d), want 10", got, res.Phases[0].Sent)
		}
		if got := time.Since(start); got != 4*time.Second {
			t.Errorf("run took %v, want 4s", got)
		}
	})
}

func TestOpenLoopSendsAtIntendedTimes(t *testing.T) {
	t.Parallel()
	for _, arrival := range []string{"constant", "poisson"} {
		t.Run(arrival, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				p := plan(t, "name: open\nseed: 5\nengine: {kind: sim}\nworkload: {rate: 50, arrival: "+arrival+", duration: 2s}\n")
				start := time.Now()
				time.Sleep(3 * time.Second) // the run clock started before the driver: phase offsets count from the phase start
				// Requests take 300 ms, so many overlap: an open loop does not wait for them.
				rec := &recorder{start: start, work: func(Request) time.Duration { return 300 * time.Millisecond }}
				res, err := (&Driver{Plan: p, Sender: rec, Start: start}).Run(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				calls := rec.all()
				pacer := p.Phases()[0].Pacer
				want := 0
				for n := 0; ; n++ {
					off, _ := pacer.Offset(n)
					if off >= 2*time.Second {
						break
					}
					want++
				}
				if len(calls) != want || res.Phases[0].Sent != want {
					t.Fatalf("sent %d (result %d), want %d", len(calls), res.Phases[0].Sent, want)
				}
				if arrival == "constant" && want != 100 {
					t.Errorf("constant 50/s for 2s planned %d arrivals, want 100", want)
				}
				for _, c := range calls {
					off, _ := pacer.Offset(c.Index)
					if c.Intended != 3*time.Second+off || c.At != c.Intended {
						t.Errorf("request %d: intended %v, sent %v; want both at %v", c.Index, c.Intended, c.At, 3*time.Second+off)
					}
				}
				ph := res.Phases[0]
				if ph.Late != 0 || ph.Dropped != 0 || ph.Start != 3*time.Second || ph.ArrivalsEnd != 5*time.Second {
					t.Errorf("phase result %+v", ph)
				}
			})
		})
	}
}

func TestStopDrainsInFlight(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := plan(t, "name: stop\nengine: {kind: sim}\nworkload: {concurrency: 3, duration: 1m}\n")
		start := time.Now()
		rec := &recorder{start: start, work: func(Request) time.Duration { return time.Second }}
		stop := make(chan struct{})
		time.AfterFunc(2500*time.Millisecond, func() { close(stop) })
		res, err := (&Driver{Plan: p, Sender: rec, Start: start}).Run(t.Context(), stop)
		if err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != 3*time.Second {
			t.Errorf("Run returned at %v, want 3s (the in-flight round finishing)", got)
		}
		calls := rec.all()
		if len(calls) != 9 {
			t.Errorf("%d requests sent, want 9 (3 users × rounds at 0, 1, 2 s)", len(calls))
		}
		for _, c := range calls {
			if c.EndErr != nil || c.At > 2500*time.Millisecond {
				t.Errorf("request %d sent at %v ended with %v: a stop must let in-flight requests finish", c.Index, c.At, c.EndErr)
			}
		}
		if res.Stop != StopStopped {
			t.Errorf("stop reason %q, want %q", res.Stop, StopStopped)
		}
	})
}

// A stop that came before Run sends nothing, for a closed loop and an open
// one alike, every time: the stop is seen before the first arrival, not by
// a goroutine racing it (a run stopped while it waited for --start-at
// once sent one request).
func TestStopBeforeRunSendsNothing(t *testing.T) {
	t.Parallel()
	for _, workload := range []string{"{concurrency: 3, duration: 1m}", "{rate: 50, arrival: constant, duration: 1m}"} {
		for range 50 {
			p := plan(t, "name: stopped\nengine: {kind: sim}\nworkload: "+workload+"\n")
			rec := &recorder{start: time.Now(), work: func(Request) time.Duration { return 0 }}
			stop := make(chan struct{})
			close(stop)
			res, err := (&Driver{Plan: p, Sender: rec, Start: time.Now()}).Run(t.Context(), stop)
			if err != nil || res.Stop != StopStopped {
				t.Fatalf("%s: stop %q, err %v", workload, res.Stop, err)
			}
			if n := len(rec.all()); n != 0 {
				t.Fatalf("%s: %d requests sent after a stop that came before the run", workload, n)
			}
		}
	}
}

func TestCancelAbortsInFlight(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := plan(t, "name: cancel\nengine: {kind: sim}\nworkload: {rate: 10, arrival: constant, duration: 1m}\n")
		start := time.Now()
		rec := &recorder{start: start, work: func(Request) time.Duration { return time.Hour }}
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(1550*time.Millisecond, cancel)
		res, err := (&Driver{Plan: p, Sender: rec, Start: start}).Run(ctx, nil)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run error = %v, want context.Canceled", err)
		}
		if got := time.Since(start); got != 1550*time.Millisecond {
			t.Errorf("Run returned at %v, want 1.55s", got)
		}
		calls := rec.all()
		if len(calls) != 16 {
			t.Errorf("%d requests sent, want 16 (0 to 1.5 s at 10/s)", len(calls))
		}
		for _, c := range calls {
			if !errors.Is(c.EndErr, context.Canceled) || c.EndedAt != 1550*time.Millisecond {
				t.Errorf("request %d ended at %v with %v, want canceled at 1.55s", c.Index, c.EndedAt, c.EndErr)
			}
		}
		if res.Stop != StopCanceled || res.Phases[0].Sent != 16 {
			t.Errorf("result %+v", res)
		}
	})
}

func TestPhaseEventsBracketRequests(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := plan(t, "name: events\nengine: {kind: sim}\nworkload: {concurrency: 2, duration: 1s}\n")
		start := time.Now()
		rec := &recorder{start: start, work: func(Request) time.Duration { return 700 * time.Millisecond }}
		var events []PhaseEvent
		onPhase := func(ctx context.Context, ev PhaseEvent) {
			events = append(events, ev)
			time.Sleep(50 * time.Millisecond) // a snapshot takes time; the phase waits for it
		}
		res, err := (&Driver{Plan: p, Sender: rec, Start: start, OnPhase: onPhase}).Run(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		want := []PhaseEvent{
			{Kind: PhaseStart, Phase: "main", Measured: true, At: 0, Concurrency: 2},
			// Arrivals start at 50 ms; rounds at 50 and 750 ms; the last ends at 1.45 s.
			{Kind: PhaseEnd, Phase: "main", Measured: true, At: 1450 * time.Millisecond, Concurrency: 2},
		}
		if diff := cmp.Diff(want, events); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		for _, c := range rec.all() {
			if c.At < 50*time.Millisecond || c.EndedAt > 1450*time.Millisecond {
				t.Errorf("request %d ran %v–%v, outside its phase's events", c.Index, c.At, c.EndedAt)
			}
		}
		if got := res.Phases[0]; got.Start != 50*time.Millisecond || got.End != 1450*time.Millisecond || got.Sent != 4 {
			t.Errorf("phase result %+v", got)
		}
	})
}
