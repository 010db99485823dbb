package promapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmbench-org/llmbench/internal/quiet"
	"github.com/llmbench-org/llmbench/internal/realtest"
	"github.com/llmbench-org/llmbench/scrape"
)

// exposition is an SGLang replica's /metrics whose finished counter grows
// by 10 at every scrape.
func exposition(scrapes int64, running int) string {
	return fmt.Sprintf(`# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{engine_type="unified",model_name="m",pp_rank="0",tp_rank="0"} %d
# TYPE sglang:token_usage gauge
sglang:token_usage{engine_type="unified",model_name="m",pp_rank="0",tp_rank="0"} 0.25
# TYPE sglang:num_requests_total counter
sglang:num_requests_total{engine_type="unified",model_name="m"} %d
# TYPE sglang:time_to_first_token_seconds histogram
sglang:time_to_first_token_seconds_bucket{engine_type="unified",le="0.1",model_name="m"} 7
sglang:time_to_first_token_seconds_bucket{engine_type="unified",le="0.2",model_name="m"} 9
sglang:time_to_first_token_seconds_bucket{engine_type="unified",le="+Inf",model_name="m"} 10
sglang:time_to_first_token_seconds_sum{engine_type="unified",model_name="m"} 1.25
sglang:time_to_first_token_seconds_count{engine_type="unified",model_name="m"} 10
# TYPE go_goroutines gauge
go_goroutines 9
`, running, 10*scrapes)
}

// replica serves exposition and counts its scrapes.
type replica struct {
	srv     *httptest.Server
	scrapes atomic.Int64
}

func newReplica(t *testing.T, running int) *replica {
	r := &replica{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		body := exposition(r.scrapes.Add(1), running)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *replica) addr() string { return strings.TrimPrefix(r.srv.URL, "http://") }

// TestRealPrometheus reads two replicas through a real Prometheus server:
// the instant query must give each replica exactly what scraping it directly
// gives, and their sum; the range query must show the counter growing.
func TestRealPrometheus(t *testing.T) {
	t.Parallel()
	quiet.Busy(t) // loads the machine: a timing-sensitive test elsewhere waits for it
	a, b := newReplica(t, 3), newReplica(t, 5)
	src := Source{URL: realtest.StartPrometheus(t, a.addr(), b.addr()), Selector: `job="engine"`}

	var smp Sample
	realtest.WaitFor(t, 20*time.Second, "both replicas in Prometheus", func() bool {
		var err error
		smp, err = src.Instant(context.Background(), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return len(smp.Replicas) == 2
	})

	// One round as a run stores it: a row per replica, named apart, that
	// sum to the fleet. It reads a scrape Prometheus began after the round
	// was asked for: A's counter is 10 × its scrapes, and n were done (or
	// under way) when the round began.
	n := a.scrapes.Load()
	rows := src.ScrapeRows(context.Background(), time.Now())
	if len(rows) != 2 || !rows[0].OK || !rows[1].OK || !strings.Contains(rows[0].Target, "#instance=") {
		t.Fatalf("rows %+v, want one ok row per replica", rows)
	}
	for _, r := range rows {
		if strings.HasSuffix(r.Target, "="+a.addr()) && r.Snapshot.Counters[scrape.RequestsFinished] < float64(10*(n+1)) {
			t.Errorf("the round read A's counter at %v, from a scrape before it began (%d scrapes then)", r.Snapshot.Counters[scrape.RequestsFinished], n)
		}
	}
	if sum, ok := scrape.SumRows(rows); !ok || sum.Gauges[scrape.RequestsRunning] != 8 {
		t.Errorf("the replicas' rows sum to %+v, want 8 running", sum)
	}

	// Prometheus holds what B served at some scrape; rebuild that body from
	// the counter it reports (B's gauges and histogram never change).
	direct := func(body string) scrape.Snapshot {
		fams, err := scrape.Parse([]byte(body), "text/plain; version=0.0.4")
		if err != nil {
			t.Fatal(err)
		}
		d, _ := scrape.DialectFor("sglang")
		return d.Map(fams)
	}
	gotB := smp.Replicas[b.addr()]
	wantB := direct(exposition(int64(gotB.Counters[scrape.RequestsFinished]/10), 5))
	if diff := cmp.Diff(wantB, gotB); diff != "" {
		t.Errorf("replica B through Prometheus vs scraped directly (-direct +prometheus):\n%s", diff)
	}
	gotA := smp.Replicas[a.addr()]
	if smp.Sum.Gauges[scrape.RequestsRunning] != 8 ||
		smp.Sum.Counters[scrape.RequestsFinished] != gotA.Counters[scrape.RequestsFinished]+gotB.Counters[scrape.RequestsFinished] ||
		smp.Sum.Histograms[scrape.TTFT].Count != 20 || smp.Sum.Gauges[scrape.KVCacheUsage] != 0.25 || smp.Sum.Dialect != "sglang" {
		t.Errorf("sum = %+v", smp.Sum)
	}

	seen, scrapesSeen := time.Now(), a.scrapes.Load()
	realtest.WaitFor(t, 20*time.Second, "two more scrapes of A", func() bool {
		return a.scrapes.Load() >= scrapesSeen+2 && time.Since(seen) > 2500*time.Millisecond
	})
	// From just before both replicas were first seen until now: the range
	// holds A's first stored scrape and later ones, however slow the machine.
	samples, err := src.Range(context.Background(), smp.At.Add(-time.Second), time.Now(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) < 3 {
		t.Fatalf("%d range samples, want at least 3", len(samples))
	}
	first, last := samples[0].Replicas[a.addr()], samples[len(samples)-1].Replicas[a.addr()]
	if d := scrape.Delta(first, last); d.Counters[scrape.RequestsFinished] <= 0 || len(d.Resets) > 0 {
		t.Errorf("A's Δ finished over the range = %v (resets %v), want > 0", d.Counters[scrape.RequestsFinished], d.Resets)
	}
	for i := 1; i < len(samples); i++ {
		if !samples[i].At.After(samples[i-1].At) {
			t.Errorf("samples out of order at %d", i)
		}
	}
}
