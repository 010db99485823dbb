package promapi

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmbench-org/llmbench/scrape"
)

// requireReal skips a test that needs a real component, unless
// LLMBENCH_REQUIRE_REAL=1 makes its absence a failure (REAL-COMPONENTS.md).
func requireReal(t *testing.T, binary, install string) string {
	t.Helper()
	path, err := exec.LookPath(binary)
	if err == nil {
		return path
	}
	if os.Getenv("LLMBENCH_REQUIRE_REAL") == "1" {
		t.Fatalf("%s not found and LLMBENCH_REQUIRE_REAL=1: %s", binary, install)
	}
	t.Skipf("%s not found; install it to run this test: %s", binary, install)
	return ""
}

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

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startPrometheus runs a real Prometheus scraping targets every second and
// returns its URL once it is ready.
func startPrometheus(t *testing.T, bin string, targets ...string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf("global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n  - job_name: engine\n    static_configs:\n      - targets: [%q, %q]\n",
		targets[0], targets[1])
	if err := os.WriteFile(filepath.Join(dir, "prom.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	var out bytes.Buffer
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prom.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus output:\n%s", out.String())
		}
	})
	url := "http://" + addr
	waitFor(t, 20*time.Second, "prometheus ready", func() bool {
		resp, err := http.Get(url + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return url
}

func waitFor(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting %v for %s", limit, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestRealPrometheus reads two replicas through a real Prometheus server:
// the instant query must give each replica exactly what scraping it directly
// gives, and their sum; the range query must show the counter growing.
func TestRealPrometheus(t *testing.T) {
	t.Parallel()
	bin := requireReal(t, "prometheus", "apt-get install -y prometheus")
	a, b := newReplica(t, 3), newReplica(t, 5)
	src := Source{URL: startPrometheus(t, bin, a.addr(), b.addr()), Selector: `job="engine"`}

	var smp Sample
	waitFor(t, 20*time.Second, "both replicas in Prometheus", func() bool {
		var err error
		smp, err = src.Instant(context.Background(), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return len(smp.Replicas) == 2
	})

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
	waitFor(t, 20*time.Second, "two more scrapes of A", func() bool {
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
