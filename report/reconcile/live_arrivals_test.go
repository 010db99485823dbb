package reconcile

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape"
)

// referenceLive is the live window as decision 0601 first wrote it: every
// trim walks the whole window and deletes what its cut-off passed. It is
// the definition Live must keep, at a cost per record that grew with the
// window (decision 0602).
type referenceLive struct {
	span    time.Duration
	records []client.Record
	rows    []scrape.Row
}

func (l *referenceLive) addRecord(r client.Record) { l.records = append(l.records, r); l.trim(r.End) }
func (l *referenceLive) addRow(r scrape.Row)       { l.rows = append(l.rows, r); l.trim(r.At) }

func (l *referenceLive) trim(now time.Duration) {
	from := now - l.span
	l.records = slices.DeleteFunc(l.records, func(r client.Record) bool { return r.End < from })
	l.rows = slices.DeleteFunc(l.rows, func(r scrape.Row) bool { return r.At < from })
}

// arrival is one thing handed to the window: a record or a row, or (both
// nil) a Findings at now.
type arrival struct {
	rec *client.Record
	row *scrape.Row
	now time.Duration
	key time.Duration // when it is handed over
}

// shuffledArrivals hands over a world's records and scrapes late by a
// random delay each (mostly a little, sometimes more than the window), so
// they arrive out of the order of their times, and asks for findings at
// random moments, some of them before things already handed over.
func shuffledArrivals(rng *rand.Rand, w *world, span time.Duration) []arrival {
	w.build()
	late := func() time.Duration {
		switch rng.IntN(10) {
		case 0:
			return time.Duration(rng.Int64N(int64(2 * span))) // very late: a stalled consumer
		case 1, 2, 3:
			return 0
		default:
			return time.Duration(rng.Int64N(int64(5 * time.Millisecond)))
		}
	}
	var out []arrival
	var last time.Duration
	for i := range w.records {
		r := w.records[i]
		out = append(out, arrival{rec: &r, key: r.End + late()})
		last = max(last, r.End)
	}
	for t := time.Duration(0); t <= last+w.scrapeEvery; t += w.scrapeEvery {
		row := w.row(t)
		if rng.IntN(8) == 0 {
			row = failed(row, "timeout")
		}
		out = append(out, arrival{row: &row, key: t + row.Duration + late()})
	}
	for range 40 {
		at := time.Duration(rng.Int64N(int64(last + span)))
		now := at + time.Duration(rng.Int64N(int64(20*time.Millisecond))) - 10*time.Millisecond // now and then behind what arrived
		out = append(out, arrival{now: now, key: at})
	}
	slices.SortStableFunc(out, func(a, b arrival) int { return compareDur(a.key, b.key) })
	return out
}

// TestLiveMatchesReference: on worlds handed over out of order, Live holds
// exactly the records and rows the reference holds, in the same order, at
// every Findings, and its findings are the reference window's.
func TestLiveMatchesReference(t *testing.T) {
	t.Parallel()
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 19))
		span := []time.Duration{20 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond, time.Second}[seed%4]
		dialect := []string{"vllm", "sglang"}[seed%2]
		w := newWorld(dialect)
		w.users = 1 + rng.IntN(12)
		w.think = time.Duration(rng.Int64N(int64(3 * time.Millisecond)))
		t.Run(fmt.Sprintf("seed=%d span=%s users=%d", seed, span, w.users), func(t *testing.T) {
			t.Parallel()
			l := NewLive(span, dialect)
			ref := &referenceLive{span: span}
			checks := 0
			for _, a := range shuffledArrivals(rng, w, span) {
				switch {
				case a.rec != nil:
					l.AddRecord(*a.rec)
					ref.addRecord(*a.rec)
				case a.row != nil:
					l.AddRow(*a.row)
					ref.addRow(*a.row)
				default:
					got := l.Findings(a.now, 2)
					ref.trim(a.now)
					want := l.findings(a.now, ref.records, ref.rows, 2)
					if ids(l.records.items[l.records.head:]) != ids(ref.records) {
						t.Fatalf("at %v records held:\n%s\nwant\n%s", a.now, ids(l.records.items[l.records.head:]), ids(ref.records))
					}
					if !reflect.DeepEqual(l.rows.items[l.rows.head:], ref.rows) {
						t.Fatalf("at %v rows held: %d, want %d", a.now, len(l.rows.items)-l.rows.head, len(ref.rows))
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("at %v findings\n%s\nwant\n%s", a.now, dump(got), dump(want))
					}
					checks++
				}
			}
			if checks == 0 {
				t.Fatal("no findings compared")
			}
		})
	}
}

func ids(rs []client.Record) string {
	s := ""
	for _, r := range rs {
		s += fmt.Sprintf("%s@%v ", r.ID, r.End)
	}
	return s
}

// TestArrivalsHeld: the window's bookkeeping on hand-made sequences.
func TestArrivalsHeld(t *testing.T) {
	t.Parallel()
	type step struct {
		add  time.Duration // an arrival at this time, or
		cut  time.Duration // a trim with this cut-off
		isAt bool          // add when true
	}
	at := func(d time.Duration) step { return step{add: d, isAt: true} }
	cut := func(d time.Duration) step { return step{cut: d} }
	for _, tc := range []struct {
		name  string
		steps []step
		want  []time.Duration
	}{
		{"in order: the front goes", []step{at(1), at(2), cut(2), at(3)}, []time.Duration{2, 3}},
		{"behind a newer front: dropped by held", []step{at(5), at(1), at(6), cut(3)}, []time.Duration{5, 6}},
		{"a cut before an arrival spares it", []step{at(5), cut(4), at(1)}, []time.Duration{5, 1}},
		{"a later cut takes what the earlier spared", []step{at(5), cut(4), at(1), at(7), cut(2)}, []time.Duration{5, 7}},
		{"a cut-off equal to a time keeps it", []step{at(9), at(1), cut(0), at(2), cut(1)}, []time.Duration{9, 1, 2}},
		{"everything passes", []step{at(1), at(2), cut(10)}, nil},
		{"nothing arrived", []step{cut(10)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := arrivals[time.Duration]{at: func(d *time.Duration) time.Duration { return *d }}
			for _, s := range tc.steps {
				if s.isAt {
					a.add(s.add)
				} else {
					a.cut(s.cut)
				}
			}
			got := a.held()
			if !slices.Equal(got, tc.want) {
				t.Errorf("held %v, want %v", got, tc.want)
			}
			if again := a.held(); !slices.Equal(again, tc.want) {
				t.Errorf("held a second time %v, want %v", again, tc.want)
			}
		})
	}
}

// TestArrivalsReusesMemory: a window that slides for a long time keeps its
// backing array at the window's size, not the run's.
func TestArrivalsReusesMemory(t *testing.T) {
	t.Parallel()
	a := arrivals[time.Duration]{at: func(d *time.Duration) time.Duration { return *d }}
	const span = 1000
	for i := range time.Duration(100_000) {
		a.add(i)
		a.cut(i - span)
	}
	if held := len(a.items) - a.head; held != span+1 {
		t.Errorf("%d held, want %d", held, span+1)
	}
	if c := cap(a.items); c > 4*span {
		t.Errorf("backing array of %d for a window of %d", c, span)
	}
}

// BenchmarkLiveAddRecord is the live window's cost per finished request,
// with a window that holds `held` records: it must not grow with held
// (the first definition's walk made it linear). Every 1,000 records a
// Findings runs, as the live view's 4 Hz does at a few thousand requests a
// second; its cost is shared by the records.
func BenchmarkLiveAddRecord(b *testing.B) {
	for _, held := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("held=%d", held), func(b *testing.B) {
			const gap = 100 * time.Microsecond // 10,000 requests a second
			l := NewLive(time.Duration(held)*gap, "vllm")
			rng := rand.New(rand.NewPCG(1, 2))
			rec := client.Record{ID: "r", Sent: 0, FirstToken: time.Millisecond, PromptTokens: 8, OutputTokens: 8, Status: 200}
			end := time.Second
			for range held { // fill the window first
				end += gap
				rec.End = end - time.Duration(rng.Int64N(int64(20*gap))) // out of order, as requests end
				l.AddRecord(rec)
			}
			b.ResetTimer()
			for i := range b.N {
				end += gap
				rec.End = end - time.Duration(rng.Int64N(int64(20*gap)))
				l.AddRecord(rec)
				if i%1000 == 999 {
					b.StopTimer() // the findings themselves walk the window by design
					l.records.held()
					b.StartTimer()
				}
			}
		})
	}
}
