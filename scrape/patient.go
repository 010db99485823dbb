package scrape

import "time"

// SnapshotTimeout is the least time a window's opening or closing snapshot
// (and each poll that settles one) waits for its answer, whatever the
// scrape timeout. A periodic scrape's timeout is the interval (Prometheus's
// rule: a round must not outlast its tick), and a missed one leaves a hole
// of one interval. A missed window snapshot loses the whole phase's server
// view, and on a host whose CPUs are taken (other processes, or llmbench's
// own load) a scrape of a healthy engine can outlast a short interval
// before the scraper reads its answer: beside two CPU hogs under the race
// detector, every 100 ms scrape of the built-in engine timed out, and so did
// both snapshots of every phase. The cost falls on a target that does not
// answer at all: each window snapshot waits this long for it, so it is no
// longer than the wait for the engine to count the phase's requests (run's
// settle timeout, also 5 s), against DefaultTimeout's 10 s.
const SnapshotTimeout = 5 * time.Second

// Patienter is a Source whose scrapes can be given a longer timeout.
type Patienter interface {
	// Patient returns the source with each scrape's (or query's) timeout
	// raised to at least timeout; a longer one is kept.
	Patient(timeout time.Duration) Source
}

// Patient is src with each scrape's timeout raised to at least timeout,
// for the snapshots a window cannot do without; src itself when it cannot
// be given one (nil stays nil).
func Patient(src Source, timeout time.Duration) Source {
	if p, ok := src.(Patienter); ok {
		return p.Patient(timeout)
	}
	return src
}

// Patient returns a copy of the targets whose timeouts are at least timeout
// (a target with none already waits DefaultTimeout).
func (ts Targets) Patient(timeout time.Duration) Source {
	out := make(Targets, len(ts))
	for i, t := range ts {
		if t.Timeout > 0 && t.Timeout < timeout {
			t.Timeout = timeout
		}
		out[i] = t
	}
	return out
}
