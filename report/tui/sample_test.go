package tui

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/llmbench-org/llmbench/live"
)

// recorder stands in for the program's Send.
type recorder struct {
	mu   sync.Mutex
	msgs []tea.Msg
}

func (r *recorder) send(m tea.Msg) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, m)
}

// kinds summarises what was sent: the Elapsed of each sample, -1 for the end.
func (r *recorder) kinds() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]time.Duration, len(r.msgs))
	for i, m := range r.msgs {
		switch m := m.(type) {
		case sampleMsg:
			out[i] = m.p.Elapsed
		case endMsg:
			out[i] = -1
		default:
			out[i] = -2
		}
	}
	return out
}

func TestSampleAtFixedRateThenEnd(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		progress := func() live.Progress { return live.Progress{Elapsed: time.Since(start)} }
		ctx, cancel := context.WithCancel(t.Context())
		var rec recorder
		done := make(chan struct{})
		go func() { defer close(done); sample(ctx, 250*time.Millisecond, progress, rec.send, make(chan struct{})) }()

		time.Sleep(time.Second + time.Millisecond)
		synctest.Wait()
		ms := time.Millisecond
		want := []time.Duration{0, 250 * ms, 500 * ms, 750 * ms, 1000 * ms}
		if got := rec.kinds(); !slices.Equal(got, want) {
			t.Fatalf("after 1 s sent %v, want %v", got, want)
		}

		cancel()
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Fatal("sampler still running after the context ended")
		}
		want = append(want, 1001*ms, -1)
		if got := rec.kinds(); !slices.Equal(got, want) {
			t.Errorf("after cancel sent %v, want a final sample then the end: %v", got, want)
		}
	})
}

func TestSampleStopsWhenProgramExits(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		exited := make(chan struct{})
		var rec recorder
		done := make(chan struct{})
		go func() {
			defer close(done)
			sample(t.Context(), 100*time.Millisecond, func() live.Progress { return live.Progress{} }, rec.send, exited)
		}()
		time.Sleep(150 * time.Millisecond)
		close(exited)
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Fatal("sampler still running after the program exited")
		}
		if got := rec.kinds(); !slices.Equal(got, []time.Duration{0, 0}) {
			t.Errorf("sent %v, want two samples and no end", got)
		}
	})
}
