package selfmetrics

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/race"
)

const ms = time.Millisecond

// okRecord: sent at 10 ms (planned at 8 ms), first token at 100 ms, then a
// one-token chunk 20 ms later and a two-token chunk 40 ms after that, end
// at 200 ms: TTFT 90 ms, ITLs 20, 20, 20 ms, E2E 190 ms, lag 2 ms.
func okRecord() *client.Record {
	return &client.Record{
		Intended: 8 * ms, Sent: 10 * ms, FirstToken: 100 * ms, End: 200 * ms,
		Chunks:       []client.Chunk{{At: 100 * ms, Tokens: 1}, {At: 120 * ms, Tokens: 1}, {At: 160 * ms, Tokens: 2}},
		OutputTokens: 4,
	}
}

// hist returns a histogram's sample count and sum from m's registry.
func hist(t *testing.T, m *Metrics, name string) (uint64, float64) {
	t.Helper()
	h := family(t, m, name).GetMetric()[0].GetHistogram()
	return h.GetSampleCount(), h.GetSampleSum()
}

func family(t *testing.T, m *Metrics, name string) *dto.MetricFamily {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name {
			return f
		}
	}
	t.Fatalf("no family %s", name)
	return nil
}

// The helpers below do what prometheus/testutil's ToFloat64, CollectAndCount
// and GatherAndCompare do: testutil itself imports github.com/kylelemons/godebug,
// which go.mod does not list, and this package may not edit go.mod.

// toFloat64 is the value of the one counter or gauge c collects.
func toFloat64(t *testing.T, c prometheus.Collector) float64 {
	t.Helper()
	ms := collect(c)
	if len(ms) != 1 {
		t.Fatalf("%d metrics collected, want 1", len(ms))
	}
	var pb dto.Metric
	if err := ms[0].Write(&pb); err != nil {
		t.Fatal(err)
	}
	switch {
	case pb.Counter != nil:
		return pb.Counter.GetValue()
	case pb.Gauge != nil:
		return pb.Gauge.GetValue()
	}
	t.Fatalf("neither a counter nor a gauge: %v", &pb)
	return 0
}

func collect(c prometheus.Collector) []prometheus.Metric {
	ch := make(chan prometheus.Metric)
	go func() { c.Collect(ch); close(ch) }()
	var ms []prometheus.Metric
	for m := range ch {
		ms = append(ms, m)
	}
	return ms
}

// exposition is the text exposition of the named families of m.
func exposition(t *testing.T, m *Metrics, names ...string) string {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range fams {
		for _, n := range names {
			if f.GetName() == n {
				if _, err := expfmt.MetricFamilyToText(&b, f); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return b.String()
}

func near(a, b float64) bool { d := a - b; return d < 1e-9 && d > -1e-9 }

func TestObserve(t *testing.T) {
	m := New()
	m.Observe(okRecord())
	// A timeout after its first token: counted with its class, its tokens
	// count, its lag counts; its latencies do not.
	m.Observe(&client.Record{Intended: 50 * ms, Sent: 49 * ms, FirstToken: 80 * ms, End: 900 * ms,
		Chunks: []client.Chunk{{At: 80 * ms}, {At: 90 * ms}}, OutputTokens: 3, ErrorClass: client.ErrTimeout})
	// Never sent (canceled in the queue): no lag observation.
	m.Observe(&client.Record{Intended: 70 * ms, ErrorClass: client.ErrCanceled})
	// A class the package does not know still gets its own series. Closed
	// loop (no Intended): no lag observation, as in the summary.
	m.Observe(&client.Record{Sent: ms, End: 2 * ms, ErrorClass: "weird"})

	for outcome, want := range map[string]float64{"ok": 1, "timeout": 1, "canceled": 1, "weird": 1, "connect": 0, "http_status": 0} {
		if got := toFloat64(t, m.requests.WithLabelValues(outcome)); got != want {
			t.Errorf("requests{outcome=%q} = %v, want %v", outcome, got, want)
		}
	}
	if got := toFloat64(t, m.tokens); got != 7 {
		t.Errorf("output tokens = %v, want 7", got)
	}
	for _, c := range []struct {
		name  string
		count uint64
		sum   float64
	}{
		{TTFTName, 1, 0.090},
		{ITLName, 3, 0.060},
		{E2EName, 1, 0.190},
		{ScheduleLagName, 2, 0.002}, // 2 ms and early (-1 ms) as 0; the closed-loop one none
	} {
		n, s := hist(t, m, c.name)
		if n != c.count || !near(s, c.sum) {
			t.Errorf("%s: count %d sum %v, want %d and %v", c.name, n, s, c.count, c.sum)
		}
	}

	// The TTFT histogram, buckets and all: vLLM's layout.
	want := `# HELP llmbench_ttft_seconds Client time to first token of successful requests (from the request on the wire), seconds; vLLM's buckets.
# TYPE llmbench_ttft_seconds histogram
llmbench_ttft_seconds_bucket{le="0.001"} 0
llmbench_ttft_seconds_bucket{le="0.005"} 0
llmbench_ttft_seconds_bucket{le="0.01"} 0
llmbench_ttft_seconds_bucket{le="0.02"} 0
llmbench_ttft_seconds_bucket{le="0.04"} 0
llmbench_ttft_seconds_bucket{le="0.06"} 0
llmbench_ttft_seconds_bucket{le="0.08"} 0
llmbench_ttft_seconds_bucket{le="0.1"} 1
llmbench_ttft_seconds_bucket{le="0.25"} 1
llmbench_ttft_seconds_bucket{le="0.5"} 1
llmbench_ttft_seconds_bucket{le="0.75"} 1
llmbench_ttft_seconds_bucket{le="1"} 1
llmbench_ttft_seconds_bucket{le="2.5"} 1
llmbench_ttft_seconds_bucket{le="5"} 1
llmbench_ttft_seconds_bucket{le="7.5"} 1
llmbench_ttft_seconds_bucket{le="10"} 1
llmbench_ttft_seconds_bucket{le="20"} 1
llmbench_ttft_seconds_bucket{le="40"} 1
llmbench_ttft_seconds_bucket{le="80"} 1
llmbench_ttft_seconds_bucket{le="160"} 1
llmbench_ttft_seconds_bucket{le="640"} 1
llmbench_ttft_seconds_bucket{le="2560"} 1
llmbench_ttft_seconds_bucket{le="+Inf"} 1
llmbench_ttft_seconds_sum 0.09
llmbench_ttft_seconds_count 1
`
	if got := exposition(t, m, TTFTName); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Every ITL of 20 ms lands in the (0.01, 0.025] bucket.
	b := family(t, m, ITLName).GetMetric()[0].GetHistogram().GetBucket()
	if b[0].GetUpperBound() != 0.01 || b[0].GetCumulativeCount() != 0 || b[1].GetUpperBound() != 0.025 || b[1].GetCumulativeCount() != 3 {
		t.Errorf("ITL buckets %v", b[:2])
	}
}

// TestObserveWrote: latencies count from the last byte on the wire; a
// non-streamed success has an E2E and no TTFT or ITL.
func TestObserveWrote(t *testing.T) {
	m := New()
	m.Observe(&client.Record{Sent: 10 * ms, Wrote: 30 * ms, FirstToken: 130 * ms, End: 530 * ms, OutputTokens: 1,
		Chunks: []client.Chunk{{At: 130 * ms}}})
	m.Observe(&client.Record{Sent: 10 * ms, End: 410 * ms, OutputTokens: 9, NoStream: true})
	if n, s := hist(t, m, TTFTName); n != 1 || !near(s, 0.1) {
		t.Errorf("TTFT count %d sum %v, want 1 and 0.1", n, s)
	}
	if n, _ := hist(t, m, ITLName); n != 0 {
		t.Errorf("ITL count %d, want 0", n)
	}
	if n, s := hist(t, m, E2EName); n != 2 || !near(s, 0.9) {
		t.Errorf("E2E count %d sum %v, want 2 and 0.9", n, s)
	}
}

func TestInFlightScrapesPhase(t *testing.T) {
	m := New()
	m.Begin()
	m.Begin()
	m.End()
	if got := toFloat64(t, m.inFlight); got != 1 {
		t.Errorf("in flight = %v, want 1", got)
	}
	m.ObserveScrape(true)
	m.ObserveScrape(true)
	m.ObserveScrape(false)
	want := `# HELP llmbench_scrapes_total Scrapes of the engine's metrics, by result: "ok" or "failed".
# TYPE llmbench_scrapes_total counter
llmbench_scrapes_total{result="failed"} 1
llmbench_scrapes_total{result="ok"} 2
`
	if got := exposition(t, m, ScrapesName); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	if n := len(collect(m.phase)); n != 0 {
		t.Errorf("%d phase series before any phase, want 0", n)
	}
	m.SetPhase("warmup")
	m.SetPhase("measure")
	want = `# HELP llmbench_phase The run's current phase: 1 on the series of the phase under way.
# TYPE llmbench_phase gauge
llmbench_phase{phase="measure"} 1
`
	if got := exposition(t, m, PhaseName); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	m.SetPhase("")
	if n := len(collect(m.phase)); n != 0 {
		t.Errorf("%d phase series after SetPhase(\"\"), want 0", n)
	}
}

// TestLint: the exposition follows Prometheus' naming conventions, and every
// name carries the prefix.
func TestLint(t *testing.T) {
	m := New()
	m.SetPhase("measure")
	m.Observe(okRecord())
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	problems, err := promlint.NewWithMetricFamilies(fams).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	if len(fams) != 9 {
		t.Errorf("%d families, want 9", len(fams))
	}
	for _, f := range fams {
		if !strings.HasPrefix(f.GetName(), "llmbench_") {
			t.Errorf("%s lacks the llmbench_ prefix", f.GetName())
		}
	}
	// Its own registry: nothing reaches the global one.
	if New().Registry() == nil {
		t.Fatal("nil registry")
	}
}

func TestNilIsNoop(t *testing.T) {
	var m *Metrics
	m.Begin()
	m.End()
	m.Observe(okRecord())
	m.ObserveScrape(false)
	m.SetPhase("x")
	if _, err := m.Serve(context.Background(), "127.0.0.1:0"); err == nil {
		t.Error("Serve on nil succeeded")
	}
}

// TestObserveCheap: the per-request path does not allocate. Not under the
// race detector: its sync.Pool drops a quarter of what is put back, on
// purpose, so the ITL buffers are made again there and nowhere else.
func TestObserveCheap(t *testing.T) {
	if race.Enabled {
		t.Skip("sync.Pool drops buffers on purpose under -race: the normal build counts the allocations")
	}
	m := New()
	r := okRecord()
	r.ErrorClass = ""
	fail := &client.Record{Sent: ms, End: 2 * ms, ErrorClass: client.ErrHTTPStatus}
	m.Observe(r) // warm the pool
	if a := testing.AllocsPerRun(200, func() { m.Begin(); m.Observe(r); m.Observe(fail); m.End() }); a > 0 {
		t.Errorf("%v allocations per request, want 0", a)
	}
}

func TestConcurrent(t *testing.T) {
	m := New()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				m.Begin()
				m.Observe(okRecord())
				m.ObserveScrape(i%2 == 0)
				m.SetPhase("p")
				m.End()
			}
		}()
	}
	stop := make(chan struct{})
	go func() { // scrapes race the writers
		for {
			select {
			case <-stop:
				return
			default:
				_, _ = m.Registry().Gather()
			}
		}
	}()
	wg.Wait()
	close(stop)
	if got := toFloat64(t, m.ok); got != 4000 {
		t.Errorf("ok = %v, want 4000", got)
	}
	if got := toFloat64(t, m.inFlight); got != 0 {
		t.Errorf("in flight = %v, want 0", got)
	}
	if n, _ := hist(t, m, ITLName); n != 12000 {
		t.Errorf("ITL count %d, want 12000", n)
	}
}

func TestServe(t *testing.T) {
	m := New()
	m.Observe(okRecord())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := m.Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(addr, ":0") {
		t.Fatalf("bound address %s", addr)
	}
	for _, path := range []string{"/metrics", "/"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), `llmbench_requests_total{outcome="ok"} 1`) {
			t.Errorf("GET %s: %d\n%s", path, resp.StatusCode, body)
		}
	}
	if _, err := m.Serve(ctx, addr); err == nil {
		t.Error("a second Serve on a bound address succeeded")
	}
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			break
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("still serving 5 s after ctx ended")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
