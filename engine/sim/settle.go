package sim

import (
	"sync"
	"sync/atomic"
	"time"
)

// settler lets Truth include every request whose last bytes have already
// been written: a handler writes the end of a response and then records its
// truth, so a client can see the end a moment before the record exists.
// Handlers enter a section around "write the end, record"; Truth waits for
// the sections open at its call to close. Two epoch slots (as in RCU) keep
// new sections from delaying it, and a bound keeps a stalled client's write
// from blocking it for long.
type settler struct {
	mu    sync.Mutex // one waiter at a time
	epoch atomic.Uint32
	open  [2]atomic.Int64
}

// enter opens a section; pass the result to exit.
func (s *settler) enter() uint32 {
	ep := s.epoch.Load() & 1
	s.open[ep].Add(1)
	return ep
}

func (s *settler) exit(ep uint32) { s.open[ep].Add(-1) }

// wait returns once the sections open at the call have closed, or after max.
func (s *settler) wait(max time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.epoch.Add(1) - 1
	deadline := time.Now().Add(max)
	for s.open[old&1].Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Microsecond)
	}
}
