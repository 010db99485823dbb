package reconcile

import (
	"math"
	"time"
)

// arrivals holds a live window's records (or rows) in the order they
// arrived, and drops each one exactly when the window's first definition
// did (decision 0601): at the first trim after its arrival whose cut-off
// (the trim's now − span) passes its time. That definition rescanned the
// whole window at every trim, that is for every finished request (decision
// 0602); here a trim costs amortised O(1) and the window is walked once per
// Findings, which walks it anyway.
//
// Times arrive nearly but not quite in order (requests end out of order by
// the time it takes to hand a record over; a scrape's row comes after its
// duration), so a trim cannot stop at the first item still inside the
// window. Each trim is instead noted beside the item that arrived last
// (cuts), the items at the front that it passes are dropped at once, and
// held applies what the front could not: walking back from the newest
// item, the latest cut-off of every trim made after an item's arrival is
// the running maximum of the cuts, and an item older than it is dropped.
// The result is the same set in the same order; only memory differs: an
// item behind a newer one at the front waits for held, or for that one to
// go, which bounds memory by the span plus the disorder.
type arrivals[T any] struct {
	at    func(*T) time.Duration // the time the window is cut on
	items []T                    // items[head:] are held, in arrival order
	// cuts[i] is the latest cut-off of the trims made after items[i]
	// arrived and before items[i+1] did (noCut: none).
	cuts []time.Duration
	head int
}

// noCut is the cut-off beside an item no trim has followed yet.
const noCut = time.Duration(math.MinInt64)

// add appends x, the newest arrival.
func (a *arrivals[T]) add(x T) {
	a.items = append(a.items, x)
	a.cuts = append(a.cuts, noCut)
}

// cut is a trim: everything that arrived before it and whose time is before
// from is out of the window. The front is dropped now, the rest by held.
func (a *arrivals[T]) cut(from time.Duration) {
	if a.head == len(a.items) {
		return
	}
	last := len(a.cuts) - 1
	a.cuts[last] = max(a.cuts[last], from)
	var zero T
	for a.head < len(a.items) && a.at(&a.items[a.head]) < from {
		a.items[a.head] = zero // what it points to (chunks, snapshots) can go
		a.head++
	}
	switch {
	case a.head == len(a.items):
		a.items, a.cuts, a.head = a.items[:0], a.cuts[:0], 0
	case a.head >= 64 && a.head > len(a.items)/2:
		// Move the held half down, so the backing array is reused (each
		// item moves at most once per doubling: amortised O(1)).
		n := copy(a.items, a.items[a.head:])
		copy(a.cuts, a.cuts[a.head:])
		clear(a.items[n:])
		a.items, a.cuts, a.head = a.items[:n], a.cuts[:n], 0
	}
}

// held drops every item a trim since its arrival has passed and returns the
// rest in arrival order: the window as the trims define it. The slice is
// the window's own, valid until the next add or cut.
func (a *arrivals[T]) held() []T {
	latest := noCut
	keep := 0
	for i := len(a.items) - 1; i >= a.head; i-- {
		latest = max(latest, a.cuts[i])
		if a.at(&a.items[i]) < latest {
			a.cuts[i] = dropped
		} else {
			a.cuts[i] = noCut // every cut so far is behind it: none need be kept
			keep++
		}
	}
	if keep == len(a.items)-a.head {
		return a.items[a.head:]
	}
	n := 0
	for i := a.head; i < len(a.items); i++ {
		if a.cuts[i] != dropped {
			a.items[n], a.cuts[n] = a.items[i], noCut
			n++
		}
	}
	clear(a.items[n:])
	a.items, a.cuts, a.head = a.items[:n], a.cuts[:n], 0
	return a.items
}

// dropped marks, inside held, an item to drop.
const dropped = time.Duration(math.MaxInt64)
