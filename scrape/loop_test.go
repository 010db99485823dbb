package scrape

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// handlerTransport serves requests in memory with a handler, so HTTP runs
// inside a synctest bubble without sockets (which would freeze the fake clock).
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	return rec.Result(), nil
}

func memTarget(name string, h http.HandlerFunc, timeout time.Duration) Target {
	return Target{URL: "http://" + name + "/metrics", Dialect: "sglang", Timeout: timeout,
		Client: &http.Client{Transport: handlerTransport{h}}}
}

type rowKey struct {
	Target string
	At     time.Duration
	OK     bool
}

func collect(out <-chan Row) []rowKey {
	var got []rowKey
	for r := range out {
		got = append(got, rowKey{r.Target, r.At, r.OK})
	}
	return got
}

func TestLoopRun(t *testing.T) {
	t.Parallel()
	body := fixture(t, "sglang.txt")
	synctest.Test(t, func(t *testing.T) {
		good := memTarget("good", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ctText)
			_, _ = w.Write(body)
		}, 0)
		// slow answers after 2.5 s, past the loop's 1 s interval (its
		// default timeout): every scrape of it times out, and it must not
		// delay the good target's scrapes.
		slow := memTarget("slow", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(2500 * time.Millisecond):
			case <-r.Context().Done():
			}
		}, 0)
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 3500*time.Millisecond)
		defer cancel()
		out := make(chan Row, 64)
		Loop{Targets: []Target{good, slow}, Interval: time.Second, Start: start}.Run(ctx, out)
		close(out) // Run never closes it: the caller does, once Run has returned

		var goodRows, slowRows []rowKey
		for _, r := range collect(out) {
			if r.Target == good.URL {
				goodRows = append(goodRows, r)
			} else {
				slowRows = append(slowRows, r)
			}
		}
		wantGood := []rowKey{{good.URL, 0, true}, {good.URL, time.Second, true}, {good.URL, 2 * time.Second, true}, {good.URL, 3 * time.Second, true}}
		if diff := cmp.Diff(wantGood, goodRows); diff != "" {
			t.Errorf("good target rows (-want +got):\n%s", diff)
		}
		// Each slow scrape ends at its 1 s timeout, so the next tick is
		// already due: 0 s, 1 s, 2 s; the one started at 3 s is cut short
		// by the run's end and not reported.
		wantSlow := []rowKey{{slow.URL, 0, false}, {slow.URL, time.Second, false}, {slow.URL, 2 * time.Second, false}}
		if diff := cmp.Diff(wantSlow, slowRows); diff != "" {
			t.Errorf("slow target rows (-want +got):\n%s", diff)
		}
	})
}

// TestLoopRunStopsOnBlockedConsumer: a consumer that stops reading does not
// keep Run alive past ctx's end.
func TestLoopRunStopsOnBlockedConsumer(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		tgt := memTarget("x", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("sglang:num_running_reqs 1\n")) }, 0)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		out := make(chan Row) // nobody reads
		done := make(chan struct{})
		go func() {
			Loop{Targets: []Target{tgt}, Interval: time.Second}.Run(ctx, out)
			close(done)
		}()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Run returned before ctx was done")
		default:
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Fatal("Run still blocked after ctx was done")
		}
	})
}

func TestScrapeAllAndSumRows(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		replica := func(name, running, finished string) Target {
			return memTarget(name, func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte("# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs " + running +
					"\n# TYPE sglang:num_requests_total counter\nsglang:num_requests_total " + finished + "\n"))
			}, time.Second)
		}
		dead := memTarget("dead", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }, time.Second)
		targets := []Target{replica("a", "3", "100"), dead, replica("b", "4", "50")}
		rows := ScrapeAll(context.Background(), targets, time.Now())
		if len(rows) != 3 || rows[0].Target != targets[0].URL || rows[1].OK || rows[2].Target != targets[2].URL {
			t.Fatalf("rows out of order or wrong: %+v", rows)
		}
		sum, ok := SumRows(rows)
		if !ok {
			t.Fatal("SumRows: not ok")
		}
		want := Snapshot{Dialect: "sglang", Gauges: map[Concept]float64{RequestsRunning: 7},
			Counters: map[Concept]float64{RequestsFinished: 150}, Histograms: map[Concept]Histogram{}}
		if diff := cmp.Diff(want, sum); diff != "" {
			t.Errorf("sum (-want +got):\n%s", diff)
		}
		if _, ok := SumRows(rows[1:2]); ok {
			t.Error("SumRows of a dead target alone is ok")
		}
	})
}
