package run

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
)

// BenchmarkTimestampAccuracy measures how far the client's first-token and
// end timestamps lag the built-in engine's own flush times, at 64 and 1,024
// concurrent streams, through the whole `llmbench run` pipeline (client,
// recorder, scrapes, live view), with the built-in engine in a child process
// (the default) and in llmbench's own process. Reported per run: the lag's p50 and p99 (TTFT and E2E),
// the chunks streamed per second, the client process's CPU use and its
// garbage collections during the load.
//
//	go test -run '^$' -bench TimestampAccuracy -benchtime 1x ./run
func BenchmarkTimestampAccuracy(b *testing.B) {
	for _, process := range []string{"separate", "inline"} {
		for _, streams := range []int{64, 1024} {
			b.Run(fmt.Sprintf("engine=%s/streams=%d", process, streams), func(b *testing.B) {
				for b.Loop() {
					accuracyRun(b, process, streams)
				}
			})
		}
	}
}

func accuracyRun(b *testing.B, process string, streams int) {
	yaml := fmt.Sprintf(`
name: accuracy
engine:
  kind: sim
  preset: tiny
  process: %s
  sim: {max_running_requests: %d, kv_blocks: 65536}
workload:
  concurrency: %d
  requests: %d
  prompt_tokens: 32
  output_tokens: 64
scrape:
  interval: 1s
`, process, streams, streams, 4*streams)
	path := writeScenario(b, yaml)
	cio, _, _ := testIO(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	began := time.Now()
	dir, err := runScenario(ctx, runOpts{scenario: path, runsDir: b.TempDir(), output: "plain", every: time.Minute}, cio)
	if err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(began)
	records := readJSONL[client.Record](b, filepath.Join(dir, rundir.RequestsFile))
	truth := map[string]sim.RequestTruth{}
	for _, tr := range readJSONL[sim.RequestTruth](b, filepath.Join(dir, rundir.TruthFile)) {
		truth[tr.ID] = tr
	}
	var ttftLag, e2eLag []time.Duration
	chunks := 0
	for _, r := range records {
		tr, ok := truth[r.ID]
		ttft, has := r.TTFT()
		if !ok || !has || !r.OK() {
			continue
		}
		chunks += len(r.Chunks)
		ttftLag = append(ttftLag, ttft-(tr.FirstTokenFlushed-tr.Arrival))
		e2eLag = append(e2eLag, r.E2E()-(tr.Finish-tr.Arrival))
	}
	if len(ttftLag) == 0 {
		b.Fatal("no request joined to the ground truth")
	}
	s, err := report.Build(dir)
	if err != nil {
		b.Fatal(err)
	}
	q := func(xs []time.Duration, p float64) float64 {
		slices.Sort(xs)
		return float64(xs[int(p*float64(len(xs)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(q(ttftLag, 0.5), "ttft-lag-p50-ms")
	b.ReportMetric(q(ttftLag, 0.99), "ttft-lag-p99-ms")
	b.ReportMetric(q(e2eLag, 0.5), "e2e-lag-p50-ms")
	b.ReportMetric(q(e2eLag, 0.99), "e2e-lag-p99-ms")
	b.ReportMetric(float64(chunks)/elapsed.Seconds(), "chunks/s")
	b.ReportMetric(100*s.Health.Client.CPUUtilization, "client-cpu-%")
	b.ReportMetric(1000*s.Health.Client.SchedLatencyP99_s, "sched-p99-ms")
	b.ReportMetric(float64(s.Health.Client.GCCycles), "gc-cycles")
}
