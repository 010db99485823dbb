// Command memsoak runs an open-loop scenario against the built-in engine (in
// a child process, as `llmbench run` starts it) and samples the client's
// memory while it runs: resident set, heap in use, bytes allocated and
// garbage collections. It is the benchmark behind "flat memory during a run"
// (docs/decisions/0004): the resident set after the last sample should stay
// within 1.2× of the one after the first minute.
//
//	go run ./cmd/llmbench/internal/memsoak -duration 10m -rate 200 -every 30s
//
// It prints one line per sample and a summary; -memprofile writes a heap
// profile at the end (`go tool pprof -sample_index=alloc_space` reads what
// was allocated, inuse_space what was still held).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"

	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/run"
)

const scenarioTemplate = `name: memsoak
seed: 1
engine:
  kind: sim
  dialect: sglang
  preset: tiny              # no EOS: every request streams its output_tokens
  # 10 ms passes: at 200 requests/s of 32 tokens each, about 65 streams at
  # once, with few enough chunks that the engine keeps up on a shared 2-core machine
  sim: {max_running_requests: 256, decode_base: 10ms}
workload:
  arrival: constant
  rate: %g
  duration: %s
  prompt_tokens: {dist: uniform, min: 64, max: 256}
  output_tokens: {dist: uniform, min: 16, max: 48}
scrape:
  interval: 1s
`

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		os.Exit(sim.ServeArgs(os.Args[2:], os.Stdout, os.Stderr))
	}
	rate := flag.Float64("rate", 200, "requests per second (constant arrivals)")
	duration := flag.Duration("duration", time.Minute, "how long the load runs")
	every := flag.Duration("every", 10*time.Second, "sampling interval")
	runs := flag.String("runs", "", "directory for the run directory (default: a temporary one, removed after)")
	memprofile := flag.String("memprofile", "", "write a heap profile here when the load ends")
	var sets multiFlag
	flag.Var(&sets, "set", "a scenario override, as llmbench run --set (repeatable)")
	flag.Parse()
	if err := soak(*rate, *duration, *every, *runs, *memprofile, sets); err != nil {
		fmt.Fprintln(os.Stderr, "memsoak:", err)
		os.Exit(1)
	}
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// sample is the client process's memory at one instant.
type sample struct {
	at                time.Duration
	rss               int64 // bytes; -1 where /proc is not there
	heapInUse         uint64
	allocated         uint64 // cumulative
	gcCycles          uint64
	goroutines        uint64
	totalRuntimeBytes uint64  // everything the Go runtime mapped and did not release
	gcCPU             float64 // CPU-seconds the collector used (cumulative, estimated by the runtime)
	gcPauses          *metrics.Float64Histogram
}

var metricNames = []string{
	"/memory/classes/heap/objects:bytes",
	"/gc/heap/allocs:bytes",
	"/gc/cycles/total:gc-cycles",
	"/sched/goroutines:goroutines",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/cpu/classes/gc/total:cpu-seconds",
	"/sched/pauses/total/gc:seconds",
}

func take(start time.Time) sample {
	m := make([]metrics.Sample, len(metricNames))
	for i, n := range metricNames {
		m[i].Name = n
	}
	metrics.Read(m)
	return sample{
		at: time.Since(start), rss: residentSet(),
		heapInUse: m[0].Value.Uint64(), allocated: m[1].Value.Uint64(), gcCycles: m[2].Value.Uint64(),
		goroutines: m[3].Value.Uint64(), totalRuntimeBytes: m[4].Value.Uint64() - m[5].Value.Uint64(),
		gcCPU: m[6].Value.Float64(), gcPauses: m[7].Value.Float64Histogram(),
	}
}

// residentSet is VmRSS from /proc/self/status (via procfs), in bytes; -1
// off Linux.
func residentSet() int64 {
	self, err := procfs.Self()
	if err != nil {
		return -1
	}
	st, err := self.NewStatus()
	if err != nil {
		return -1
	}
	return int64(st.VmRSS)
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

func soak(rate float64, duration, every time.Duration, runsDir, memprofile string, sets []string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "memsoak")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if runsDir == "" {
		runsDir = filepath.Join(tmp, "runs")
	}
	scenario := filepath.Join(tmp, "memsoak.yaml")
	if err := os.WriteFile(scenario, fmt.Appendf(nil, scenarioTemplate, rate, duration), 0o644); err != nil {
		return err
	}

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	start := time.Now()
	samples := []sample{take(start)}
	printSample := func(s sample) {
		rss := "n/a"
		if s.rss >= 0 {
			rss = fmt.Sprintf("%.1f", mib(uint64(s.rss)))
		}
		fmt.Printf("%7.0fs  rss %7s MiB  heap-in-use %7.1f MiB  runtime %7.1f MiB  allocated %9.1f MiB  gc %4d  goroutines %5d\n",
			s.at.Seconds(), rss, mib(s.heapInUse), mib(s.totalRuntimeBytes), mib(s.allocated), s.gcCycles, s.goroutines)
	}
	fmt.Printf("memsoak: %g requests/s for %s, sampling every %s (GOGC=%q GOMEMLIMIT=%q)\n",
		rate, duration, every, os.Getenv("GOGC"), os.Getenv("GOMEMLIMIT"))
	printSample(samples[0])

	// A view's context ends when the load does: what run.Run does after
	// (finalize reads the run directory back) is not the run's memory and is
	// not sampled.
	loadEnded := make(chan struct{})
	ended := func(ctx context.Context, _ run.Live) { <-ctx.Done(); close(loadEnded) }
	done := make(chan error, 1)
	go func() {
		_, err := run.Run(ctx, run.Config{Scenario: scenario, Sets: sets, RunsDir: runsDir, Views: []run.View{ended}},
			run.IO{Stdout: discardLines{}, Stderr: os.Stderr, Getenv: os.Getenv, Self: []string{self}})
		done <- err
	}()
	tick := time.NewTicker(every)
	defer tick.Stop()
wait:
	for {
		select {
		case <-tick.C:
			s := take(start)
			samples = append(samples, s)
			printSample(s)
			if memprofile != "" && s.at >= duration-every {
				if err := writeHeapProfile(memprofile); err != nil {
					return err
				}
				memprofile = ""
			}
		case <-loadEnded:
			s := take(start)
			samples = append(samples, s)
			printSample(s)
			break wait
		}
	}
	summarize(samples, rate)
	fmt.Println("finalizing the run directory (not sampled)")
	return <-done
}

// writeHeapProfile writes the heap profile while the load still runs: a
// collection first, so in-use figures are what is held now (with the
// collector off they would be as of the last collection, maybe none).
func writeHeapProfile(path string) error {
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// summarize prints the resident set at one minute and at the last sample of
// the load, and the allocation rate per request.
func summarize(samples []sample, rate float64) {
	if len(samples) < 2 {
		return
	}
	first := samples[0]
	var atMinute *sample
	for i := range samples {
		if samples[i].at >= time.Minute {
			atMinute = &samples[i]
			break
		}
	}
	last := samples[len(samples)-1]
	elapsed := (last.at - first.at).Seconds()
	perRequest := float64(last.allocated-first.allocated) / (elapsed * rate)
	fmt.Printf("allocated %.1f MiB/s, about %.0f bytes per request; GOMAXPROCS %d\n",
		mib(last.allocated-first.allocated)/elapsed, perRequest, runtime.GOMAXPROCS(0))
	fmt.Printf("%d garbage collections (one every %.1f s), %.3f CPU-seconds in the collector (%.2f%% of the cores), stop-the-world pauses up to %s\n",
		last.gcCycles-first.gcCycles, elapsed/float64(max(1, last.gcCycles-first.gcCycles)), last.gcCPU-first.gcCPU,
		100*(last.gcCPU-first.gcCPU)/(elapsed*float64(runtime.GOMAXPROCS(0))), maxPause(first.gcPauses, last.gcPauses))
	if atMinute != nil && atMinute.rss > 0 && last.rss > 0 {
		fmt.Printf("rss at %s: %.1f MiB; at %s: %.1f MiB; ratio %.2f\n",
			atMinute.at.Round(time.Second), mib(uint64(atMinute.rss)), last.at.Round(time.Second), mib(uint64(last.rss)),
			float64(last.rss)/float64(atMinute.rss))
	}
}

// maxPause is the upper edge of the highest bucket that gained a pause
// between two samples of the runtime's pause histogram.
func maxPause(before, after *metrics.Float64Histogram) time.Duration {
	for i := len(after.Counts) - 1; i >= 0; i-- {
		if after.Counts[i] > before.Counts[i] {
			return time.Duration(after.Buckets[i+1] * float64(time.Second))
		}
	}
	return 0
}

// discardLines drops the run's text summary (memsoak prints its own).
type discardLines struct{}

func (discardLines) Write(p []byte) (int, error) { return len(p), nil }
