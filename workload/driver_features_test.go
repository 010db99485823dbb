package workload

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// run runs a plan in a synctest bubble with rec as its Sender.
func runPlan(t *testing.T, p *Plan, s Sender, onPhase func(context.Context, PhaseEvent)) (Result, error) {
	t.Helper()
	return (&Driver{Plan: p, Sender: s, Start: time.Now(), OnPhase: onPhase}).Run(t.Context(), nil)
}

func TestClosedLoopThinkTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := plan(t, "name: think\nengine: {kind: sim}\nworkload: {concurrency: 1, think_time: 400ms, duration: 1900ms}\n")
		rec := &recorder{start: time.Now(), work: func(Request) time.Duration { return 100 * time.Millisecond }}
		if _, err := runPlan(t, p, rec, nil); err != nil {
			t.Fatal(err)
		}
		var at []time.Duration
		for _, c := range rec.all() {
			at = append(at, c.At)
		}
		want := []time.Duration{0, 500 * time.Millisecond, time.Second, 1500 * time.Millisecond}
		if diff := cmp.Diff(want, at); diff != "" {
			t.Errorf("send times (-want +got):\n%s", diff)
		}
	})
}

// inFlightAt samples rec's in-flight count at the given offsets from start.
func inFlightAt(rec *recorder, start time.Time, times []time.Duration) (func() []int64, chan struct{}) {
	got := make([]int64, len(times))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i, at := range times {
			time.Sleep(time.Until(start.Add(at)))
			got[i] = rec.inflight.Load()
		}
	}()
	return func() []int64 { <-done; return got }, done
}

func TestClosedLoopUserRamp(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// Up from 0 to 4 users over 4 s, hold 1 s, down to 1 over 3 s.
		p := plan(t, `name: ramp
engine: {kind: sim}
workload:
  stages: [{duration: 4s, concurrency: 4}, {duration: 1s, concurrency: 4}, {duration: 3s, concurrency: 1}]
`)
		start := time.Now()
		rec := &recorder{start: start, work: func(Request) time.Duration { return 100 * time.Millisecond }}
		times := []time.Duration{500 * time.Millisecond, 1550 * time.Millisecond, 2550 * time.Millisecond, 3550 * time.Millisecond,
			4550 * time.Millisecond, 5550 * time.Millisecond, 6550 * time.Millisecond, 7550 * time.Millisecond, 8550 * time.Millisecond}
		samples, _ := inFlightAt(rec, start, times)
		res, err := runPlan(t, p, rec, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Users join at 1, 2, 3, 4 s and leave at 6 and 7 s (after their
		// current request); the phase ends at 8 s, when the third would leave.
		if diff := cmp.Diff([]int64{0, 1, 2, 3, 4, 4, 3, 2, 0}, samples()); diff != "" {
			t.Errorf("in flight at %v (-want +got):\n%s", times, diff)
		}
		if ph := res.Phases[0]; ph.Concurrency != 4 || ph.ArrivalsEnd != 8*time.Second {
			t.Errorf("phase result %+v", ph)
		}
	})
}

func TestOpenLoopCapDropsAndCounts(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := plan(t, "name: cap\nengine: {kind: sim}\nworkload: {rate: 10, arrival: constant, duration: 3s, max_concurrency: 2}\n")
		rec := &recorder{start: time.Now(), work: func(Request) time.Duration { return 450 * time.Millisecond }}
		res, err := runPlan(t, p, rec, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Two slots of 450 ms against an arrival every 100 ms: of every five
		// arrivals two are sent and three dropped.
		ph := res.Phases[0]
		if ph.Sent != 12 || ph.Dropped != 18 || ph.Late != 0 {
			t.Errorf("sent %d, dropped %d, late %d; want 12, 18, 0", ph.Sent, ph.Dropped, ph.Late)
		}
		var idx []int
		for _, c := range rec.all() {
			idx = append(idx, c.Index)
			if c.At != c.Intended || c.Intended != time.Duration(c.Index)*100*time.Millisecond {
				t.Errorf("request %d: intended %v, sent %v", c.Index, c.Intended, c.At)
			}
		}
		slices.Sort(idx)
		// A dropped arrival keeps its number: arrival n is always request n.
		if diff := cmp.Diff([]int{0, 1, 5, 6, 10, 11, 15, 16, 20, 21, 25, 26}, idx); diff != "" {
			t.Errorf("indices sent (-want +got):\n%s", diff)
		}
	})
}

func TestOpenLoopCapWaitCountsLate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := plan(t, "name: capwait\nengine: {kind: sim}\nworkload: {rate: 10, arrival: constant, duration: 3s, max_concurrency: 2, when_capped: wait}\n")
		rec := &recorder{start: time.Now(), work: func(Request) time.Duration { return 450 * time.Millisecond }}
		res, err := runPlan(t, p, rec, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Slots free at 0.45, 0.55, 0.9, 1.0, ... 2.7, 2.8 s: 2 + 12 sends
		// before the 3 s deadline, every one after the first two late; the
		// 16 arrivals still waiting at the deadline are dropped.
		ph := res.Phases[0]
		if ph.Sent != 14 || ph.Late != 12 || ph.Dropped != 16 {
			t.Errorf("sent %d, late %d, dropped %d; want 14, 12, 16", ph.Sent, ph.Late, ph.Dropped)
		}
		for _, c := range rec.all() {
			if c.Intended != time.Duration(c.Index)*100*time.Millisecond || c.At < c.Intended {
				t.Errorf("request %d: intended %v, sent %v: the intended time must be kept", c.Index, c.Intended, c.At)
			}
		}
	})
}

// failing is an OutcomeSender whose requests take work and fail when fail says so.
type failing struct {
	work     time.Duration
	fail     func(r Request) bool
	mu       sync.Mutex
	sentAt   []time.Duration
	canceled atomic.Int64
	start    time.Time
}

func (f *failing) SendOutcome(ctx context.Context, r Request) Outcome {
	f.mu.Lock()
	f.sentAt = append(f.sentAt, time.Since(f.start))
	f.mu.Unlock()
	work := f.work
	if !f.fail(r) {
		work = time.Hour // successes hang until canceled
	}
	t := time.NewTimer(work)
	defer t.Stop()
	select {
	case <-t.C:
		return Outcome{OK: false}
	case <-ctx.Done():
		f.canceled.Add(1)
		return Outcome{Canceled: true}
	}
}

func (f *failing) Send(ctx context.Context, r Request) { f.SendOutcome(ctx, r) }

func TestAbortAfterErrors(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := plan(t, "name: abort\nengine: {kind: sim}\nworkload: {rate: 10, arrival: constant, duration: 1m, abort: {errors: 3}}\n")
		// Every other request fails after 250 ms; the others hang until the abort cancels them.
		s := &failing{start: time.Now(), work: 250 * time.Millisecond, fail: func(r Request) bool { return r.Index%2 == 0 }}
		res, err := runPlan(t, p, s, nil)
		if !errors.Is(err, ErrAborted) || res.Stop != StopAborted || !strings.Contains(res.Reason, "3 requests failed") {
			t.Fatalf("Run: %v, stop %q (%s)", err, res.Stop, res.Reason)
		}
		// Failures at 0.25, 0.45, 0.65 s: the third aborts the run.
		if got := time.Since(s.start); got != 650*time.Millisecond {
			t.Errorf("Run returned at %v, want 650ms", got)
		}
		ph := res.Phases[0]
		if ph.Sent != 7 || ph.Failed != 3 || ph.Canceled != 4 || s.canceled.Load() != 4 {
			t.Errorf("sent %d, failed %d, canceled %d (sender saw %d); want 7, 3, 4",
				ph.Sent, ph.Failed, ph.Canceled, s.canceled.Load())
		}
	})
}

func TestAbortAboveErrorRate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := plan(t, "name: rate\nengine: {kind: sim}\nworkload: {concurrency: 1, duration: 1m, abort: {error_rate: 0.3, min_requests: 10}}\n")
		outcome := func(ctx context.Context, r Request) Outcome {
			time.Sleep(10 * time.Millisecond)
			return Outcome{OK: r.Index%5 > 1} // 40 % fail
		}
		res, err := runPlan(t, p, OutcomeSenderFunc(outcome), nil)
		if !errors.Is(err, ErrAborted) {
			t.Fatalf("Run: %v", err)
		}
		// Checked from the 10th finished request on: 4 of 10 failed.
		if ph := res.Phases[0]; ph.Sent != 10 || ph.Failed != 4 || ph.OK != 6 {
			t.Errorf("phase %+v; want 10 sent, 4 failed", ph)
		}
	})
}

func TestAutomaticSweepChoosesRates(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := plan(t, `name: auto
engine: {kind: sim}
workload:
  sweep: {auto: {points: 3, probe_concurrency: 8}}
  arrival: constant
  duration: 2s
`)
		// 150 ms per request, so that no request ends exactly at a phase's 2 s deadline.
		rec := &recorder{start: time.Now(), work: func(Request) time.Duration { return 150 * time.Millisecond }}
		res, err := runPlan(t, p, rec, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Phases) != 5 {
			t.Fatalf("%d phases ran, want baseline, probe and 3 rates", len(res.Phases))
		}
		// Baseline: 1 user sends at 0, 0.15, ... 1.95 s: 14 requests over
		// 2.1 s. Probe: 8 users, 112 requests over 2.1 s. The rates are spaced
		// from the baseline's throughput up to the probe's.
		base, probe := res.Phases[0], res.Phases[1]
		near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
		if base.Sent != 14 || probe.Sent != 112 || !near(base.Throughput(), 14/2.1) || !near(probe.Throughput(), 112/2.1) {
			t.Fatalf("baseline %d sent (%g/s), probe %d sent (%g/s); want 14 (6.67/s) and 112 (53.3/s)",
				base.Sent, base.Throughput(), probe.Sent, probe.Throughput())
		}
		for k, ph := range res.Phases[2:] {
			want := 14/2.1 + float64(k+1)*(112/2.1-14/2.1)/3
			if !near(ph.Rate, want) || ph.Sent != int(math.Ceil(2*ph.Rate)) || ph.Name != fmt.Sprintf("auto-%d", k+1) {
				t.Errorf("%s: rate %g, sent %d; want rate %g, sent ⌈2s × rate⌉", ph.Name, ph.Rate, ph.Sent, want)
			}
		}
	})
}

func TestWarmupCooldownEvents(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := plan(t, `name: phases
engine: {kind: sim}
workload:
  rate: 4
  arrival: constant
  duration: 1s
  warmup: {duration: 1s, concurrency: 2}
  cooldown: {duration: 1s}
`)
		rec := &recorder{start: time.Now(), work: func(Request) time.Duration { return 300 * time.Millisecond }}
		var events []PhaseEvent
		res, err := runPlan(t, p, rec, func(_ context.Context, ev PhaseEvent) { events = append(events, ev) })
		if err != nil {
			t.Fatal(err)
		}
		ms := time.Millisecond
		want := []PhaseEvent{
			{Kind: PhaseStart, Phase: "warmup", Index: 0, At: 0, Concurrency: 2},
			{Kind: PhaseEnd, Phase: "warmup", Index: 0, At: 1200 * ms, Concurrency: 2}, // users' last round: 0.9–1.2 s
			{Kind: PhaseStart, Phase: "main", Index: 1, Measured: true, At: 1200 * ms, Rate: 4},
			{Kind: PhaseStart, Phase: "cooldown", Index: 2, At: 2200 * ms, Rate: 4},           // no drain: right after main's arrivals
			{Kind: PhaseEnd, Phase: "main", Index: 1, Measured: true, At: 2250 * ms, Rate: 4}, // main's last arrival at 1.95 s
			{Kind: PhaseEnd, Phase: "cooldown", Index: 2, At: 3250 * ms, Rate: 4},
		}
		if diff := cmp.Diff(want, events); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		for _, c := range rec.all() {
			if c.Phase == "warmup" && c.Intended != 0 || c.Phase != "warmup" && c.Intended != c.At {
				t.Errorf("request %d of %s: intended %v, sent %v", c.Index, c.Phase, c.Intended, c.At)
			}
		}
		if got := []int{res.Phases[0].Sent, res.Phases[1].Sent, res.Phases[2].Sent}; !slices.Equal(got, []int{8, 4, 4}) {
			t.Errorf("sent per phase %v, want [8 4 4]", got)
		}
	})
}

func TestMultiTurnConversationsInOrder(t *testing.T) {
	t.Parallel()
	for _, load := range []string{"concurrency: 2, duration: 1s", "rate: 2, arrival: constant, duration: 2s"} {
		t.Run(strings.Fields(load)[0], func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				p := plan(t, "name: mt\nengine: {kind: sim}\nworkload: {"+load+", dataset: {type: multi_turn, turns: 3}, prompt_tokens: 4, output_tokens: 2}\n")
				rec := &recorder{start: time.Now(), work: func(Request) time.Duration { return 100 * time.Millisecond }}
				if _, err := runPlan(t, p, rec, nil); err != nil {
					t.Fatal(err)
				}
				byIndex := map[int]sent{}
				for _, c := range rec.all() {
					byIndex[c.Index] = c
				}
				convs := 0
				for i, c := range byIndex {
					if i%3 == 0 {
						convs++
						continue
					}
					prev, ok := byIndex[i-1]
					if !ok {
						t.Fatalf("turn %d of conversation %d sent without turn %d", i%3, i/3, i%3-1)
					}
					if c.At < prev.EndedAt || len(c.Messages) != len(prev.Messages)+2 {
						t.Errorf("request %d sent at %v with %d messages; the previous turn ended at %v with %d",
							i, c.At, len(c.Messages), prev.EndedAt, len(prev.Messages))
					}
				}
				if convs < 4 {
					t.Errorf("%d conversations, want at least 4", convs)
				}
			})
		})
	}
}

func TestTraceReplaySendsAtScaledOffsets(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := plan(t, "name: trace\nengine: {kind: sim}\nworkload: {trace: {format: mooncake, path: mooncake.jsonl, time_scale: 0.5}}\n")
		rec := &recorder{start: time.Now(), work: func(Request) time.Duration { return time.Second }}
		res, err := runPlan(t, p, rec, nil)
		if err != nil {
			t.Fatal(err)
		}
		ms := time.Millisecond
		wantAt := map[int]time.Duration{0: 0, 1: 750 * ms, 2: 2010250 * time.Microsecond, 3: 2500 * ms}
		wantTokens := map[int][2]int{0: {700, 40}, 1: {1100, 24}, 2: {650, 60}, 3: {30, 5}}
		for _, c := range rec.all() {
			if c.At != wantAt[c.Index] || c.PromptTokens != wantTokens[c.Index][0] || c.MaxTokens != wantTokens[c.Index][1] {
				t.Errorf("request %d at %v with %d/%d tokens; want %v with %v", c.Index, c.At, c.PromptTokens, c.MaxTokens, wantAt[c.Index], wantTokens[c.Index])
			}
		}
		if res.Phases[0].Sent != 4 {
			t.Errorf("sent %d, want the trace's 4 usable rows", res.Phases[0].Sent)
		}
	})
}

// TestAbortWhenTheEngineIsGone: closed-loop users whose requests stop
// connecting would hammer a refused port for the rest of the run; after
// abort.unreachable (default 5 s) of nothing but connection failures the
// run stops and says why. A single reachable request resets the streak, and
// 0s never aborts.
func TestAbortWhenTheEngineIsGone(t *testing.T) {
	t.Parallel()
	gone := func(from int) OutcomeSenderFunc {
		return func(ctx context.Context, r Request) Outcome {
			if r.Index < from {
				time.Sleep(50 * time.Millisecond)
				return Outcome{OK: true}
			}
			time.Sleep(time.Millisecond) // a refused connection fails fast
			return Outcome{Unreachable: true}
		}
	}
	t.Run("default", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := plan(t, "name: gone\nengine: {kind: sim}\nworkload: {concurrency: 2, duration: 1m}\n")
			start := time.Now()
			res, err := runPlan(t, p, gone(20), nil)
			if !errors.Is(err, ErrAborted) || !strings.Contains(res.Reason, "no request could connect to the engine for 5s") {
				t.Fatalf("Run: %v (%s)", err, res.Reason)
			}
			// 20 requests of 50 ms on 2 users: the engine is gone from 0.5 s.
			if got := time.Since(start); got < 5500*time.Millisecond || got > 5600*time.Millisecond {
				t.Errorf("aborted after %v, want 5 s after the last success at 0.5 s", got)
			}
		})
	})
	t.Run("a success resets the streak", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := plan(t, "name: flaky\nengine: {kind: sim}\nworkload: {concurrency: 1, duration: 12s}\n")
			flaky := OutcomeSenderFunc(func(ctx context.Context, r Request) Outcome {
				time.Sleep(100 * time.Millisecond)
				// One success every five requests: about every second and a
				// half with the users' back-off (backoff.go), which spaces the
				// failures out (every 40th made 4 s when users retried at once).
				return Outcome{OK: r.Index%5 == 0, Unreachable: r.Index%5 != 0}
			})
			if res, err := runPlan(t, p, flaky, nil); err != nil || res.Stop != StopCompleted {
				t.Fatalf("Run: %v, stop %q (%s)", err, res.Stop, res.Reason)
			}
		})
	})
	t.Run("0s never aborts", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := plan(t, "name: failover\nengine: {kind: sim}\nworkload: {concurrency: 2, duration: 10s, abort: {unreachable: 0s, first_failures: 0}}\n")
			if res, err := runPlan(t, p, gone(0), nil); err != nil || res.Stop != StopCompleted {
				t.Fatalf("Run: %v, stop %q (%s)", err, res.Stop, res.Reason)
			}
		})
	})
}

// TestAbortWhenNothingWorks: when the first requests all fail (a wrong model
// name, a missing key), the run stops after abort.first_failures of them
// (default 20) rather than repeat the failure for its whole duration; one
// success among them, and it goes on.
func TestAbortWhenNothingWorks(t *testing.T) {
	t.Parallel()
	failing := OutcomeSenderFunc(func(ctx context.Context, r Request) Outcome {
		time.Sleep(5 * time.Millisecond) // a 404 answers fast
		return Outcome{}
	})
	t.Run("default", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := plan(t, "name: typo\nengine: {kind: sim}\nworkload: {concurrency: 4, duration: 10m}\n")
			res, err := runPlan(t, p, failing, nil)
			if !errors.Is(err, ErrAborted) || !strings.Contains(res.Reason, "the first 20 requests all failed") {
				t.Fatalf("Run: %v (%s)", err, res.Reason)
			}
			// The 20th failure stops it; the other 3 users' requests end at
			// the same instant of the fake clock.
			if ph := res.Phases[0]; ph.Failed < 20 || ph.Failed > 23 {
				t.Errorf("%d failed before the abort, want 20 to 23", ph.Failed)
			}
		})
	})
	t.Run("one success", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := plan(t, "name: flaky\nengine: {kind: sim}\nworkload: {concurrency: 1, requests: 40}\n")
			once := OutcomeSenderFunc(func(ctx context.Context, r Request) Outcome {
				time.Sleep(5 * time.Millisecond)
				return Outcome{OK: r.Index == 7}
			})
			if res, err := runPlan(t, p, once, nil); err != nil || res.Phases[0].Failed != 39 {
				t.Fatalf("Run: %v, %+v", err, res.Phases)
			}
		})
	})
}
