package workload

import (
	"testing"
	"time"
)

func TestBackoffDelay(t *testing.T) {
	for _, tc := range []struct {
		k    int
		want time.Duration
	}{{-1, 0}, {0, 0}, {1, 50 * time.Millisecond}, {2, 100 * time.Millisecond}, {3, 200 * time.Millisecond},
		{4, 400 * time.Millisecond}, {5, 800 * time.Millisecond}, {6, time.Second}, {7, time.Second}, {1000, time.Second}} {
		if got := BackoffDelay(tc.k); got != tc.want {
			t.Errorf("BackoffDelay(%d) = %v, want %v", tc.k, got, tc.want)
		}
	}
}

// waits is the waits a user makes for a sequence of outcomes.
func waits(seed int64, user int, os []Outcome) []time.Duration {
	b := newBackoff(seed, 0, user)
	var out []time.Duration
	for _, o := range os {
		b.after(o)
		out = append(out, b.wait())
	}
	return out
}

func TestBackoffWaits(t *testing.T) {
	down, busy, ok, canceled := Outcome{Unreachable: true}, Outcome{Unavailable: true}, Outcome{OK: true}, Outcome{Canceled: true}
	failed := Outcome{} // another failure: the engine answered
	seq := []Outcome{down, down, busy, canceled, down, down, down, down, down, ok, down, failed}
	wantK := []int{1, 2, 3, 3, 4, 5, 6, 7, 8, 0, 1, 0}
	got := waits(7, 0, seq)
	for i, w := range got {
		d := BackoffDelay(wantK[i])
		if w < d/2 || w > d {
			t.Errorf("wait %d = %v, want within [%v, %v] (failure %d in a row)", i, w, d/2, d, wantK[i])
		}
	}
	again := waits(7, 0, seq)
	for i := range got {
		if got[i] != again[i] {
			t.Fatalf("the same seed waited %v then %v at %d: the jitter must come from the seed", got[i], again[i], i)
		}
	}
	other := waits(7, 1, seq)
	same := 0
	for i := range got {
		if got[i] == other[i] && got[i] != 0 {
			same++
		}
	}
	if same == len(seq)-2 {
		t.Error("two users waited alike at every step: their jitter must differ, or they come back together")
	}
}
