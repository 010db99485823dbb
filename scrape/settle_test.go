package scrape

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// finishedAt is a fake engine whose finished counter follows a script of
// values, one per poll (the last repeats); a negative value fails the poll.
func finishedAt(values ...float64) Poller {
	var i atomic.Int64
	return func(ctx context.Context) (Snapshot, error) {
		n := int(i.Add(1)) - 1
		v := values[min(n, len(values)-1)]
		if v < 0 {
			return Snapshot{}, errors.New("scrape failed")
		}
		return Snapshot{Counters: map[Concept]float64{RequestsFinished: v}}, nil
	}
}

func TestSettlerWait(t *testing.T) {
	t.Parallel()
	base := Snapshot{Counters: map[Concept]float64{RequestsFinished: 100}}
	tests := []struct {
		name    string
		poll    Poller
		timeout time.Duration // 0: 1 s
		want    Settled
	}{
		{
			name: "already there",
			poll: finishedAt(420),
			want: Settled{Finished: 320, Want: 320, OK: true, Polls: 1},
		},
		{
			name: "settles on the third poll",
			poll: finishedAt(417, 419, 420),
			want: Settled{Finished: 320, Want: 320, OK: true, Polls: 3, Waited: 200 * time.Millisecond},
		},
		{
			name: "more than we sent: foreign traffic",
			poll: finishedAt(430),
			want: Settled{Finished: 330, Want: 320, OK: true, Over: true, Polls: 1},
		},
		{
			name: "never settles",
			poll: finishedAt(418),
			want: Settled{Finished: 318, Want: 320, Polls: 10, Waited: 900 * time.Millisecond,
				Reason: "not settled after 1s: the engine counted 318 of 320 finished requests"},
		},
		{
			name: "failed scrapes are retried",
			poll: finishedAt(-1, -1, 420),
			want: Settled{Finished: 320, Want: 320, OK: true, Polls: 3, Waited: 200 * time.Millisecond},
		},
		{
			name: "the target died",
			poll: finishedAt(419, -1),
			want: Settled{Finished: 319, Want: 320, Polls: 10, Waited: 900 * time.Millisecond,
				Reason: "not settled after 1s: last scrape failed: scrape failed"},
		},
		{
			name:    "a target that refuses every poll is given up on",
			poll:    finishedAt(419, -1),
			timeout: 5 * time.Second, // which it would otherwise wait out
			want: Settled{Finished: 319, Want: 320, Polls: 11, Waited: time.Second,
				Reason: "not settled: the last 10 polls failed (scrape failed)"},
		},
		{
			name:    "a failure streak broken by a success keeps waiting",
			poll:    finishedAt(419, -1, -1, -1, -1, -1, -1, -1, -1, -1, 419, -1, -1, -1, -1, -1, -1, -1, -1, -1, 420),
			timeout: 5 * time.Second,
			want:    Settled{Finished: 320, Want: 320, OK: true, Polls: 21, Waited: 2 * time.Second},
		},
		{
			name: "the engine restarted: its count went down, and can never settle",
			poll: finishedAt(419, -1, -1, 40),
			want: Settled{Finished: 40, Want: 320, Polls: 4, Waited: 300 * time.Millisecond,
				Reason: "the engine restarted in the window (its finished-request counter went down): the count is stitched from the scrapes, not settled"},
		},
		{
			name: "no finished counter (llama.cpp)",
			poll: func(context.Context) (Snapshot, error) {
				return Snapshot{Counters: map[Concept]float64{GenerationTokens: 5}}, nil
			},
			want: Settled{Want: 320, Polls: 1, Reason: "the engine has no finished-request counter"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				s := Settler{Poll: tt.poll, Timeout: max(tt.timeout, time.Second), Every: 100 * time.Millisecond}
				got := s.Wait(context.Background(), base, 320)
				if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(Settled{}, "Snapshot")); diff != "" {
					t.Errorf("Wait (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func TestSettlerWaitCanceled(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
		defer cancel()
		got := Settler{Poll: finishedAt(0), Timeout: time.Minute}.Wait(ctx, Snapshot{Counters: map[Concept]float64{RequestsFinished: 0}}, 5)
		if got.OK || got.Polls != 3 || !strings.Contains(got.Reason, "context deadline exceeded") {
			t.Errorf("got %+v, want 3 polls then stopped", got)
		}
	})
}

// TestPollTargets settles a fleet of two in-memory replicas that finish
// their last requests a little late.
func TestPollTargets(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		replica := func(name string, finished func(time.Duration) int) Target {
			return memTarget(name, func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte("# TYPE sglang:num_requests_total counter\nsglang:num_requests_total " +
					strconv.Itoa(finished(time.Since(start))) + "\n"))
			}, time.Second)
		}
		a := replica("a", func(d time.Duration) int { return 100 + min(int(d/(100*time.Millisecond)), 5) }) // 100 → 105 over 0.5 s
		b := replica("b", func(time.Duration) int { return 50 })
		var kept []Row
		poll := PollTargets([]Target{a, b}, start, func(r Row) { kept = append(kept, r) })
		base, err := poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got := Settler{Poll: poll, Every: 100 * time.Millisecond}.Wait(context.Background(), base, 5)
		if !got.OK || got.Finished != 5 || got.Polls != 6 {
			t.Errorf("got %+v, want settled at 5 after 6 polls", got)
		}
		if len(kept) != 2*7 {
			t.Errorf("kept %d rows, want %d (every poll stores every target's row)", len(kept), 2*7)
		}
		if _, err := PollTargets(nil, start, nil)(context.Background()); err == nil {
			t.Error("no targets: no error")
		}
	})
}
