//go:build unix

// Command reportprof runs the work of `llmbench report DIR` (run.Finalize):
// reading the run once, its summary and report.html (Finalize also writes
// summary.json and report.md and evaluates gates, small beside these; the
// report package does not depend on run), for profiling it (on Unix: it
// reads getrusage):
//
//	go run ./report/internal/bigrun/cmd/reportprof -cpuprofile cpu.prof DIR
//	go run ./report/internal/bigrun/cmd/reportprof -stages DIR
//
// -stages times the three stages apart instead (reading requests.jsonl, the
// summary, report.html), wall and CPU, with the collections run so far;
// -summaryprofile profiles three more summaries of the run read once.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/llmbench-org/llmbench/report"
	reporthtml "github.com/llmbench-org/llmbench/report/html"
)

func main() {
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	memProfile := flag.String("memprofile", "", "write an allocation profile to this file")
	summaryProfile := flag.String("summaryprofile", "", "with -stages: profile three more summaries into this file")
	stages := flag.Bool("stages", false, "time the stages apart")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: reportprof [flags] RUN_DIR")
		os.Exit(2)
	}
	if err := profile(flag.Arg(0), *cpuProfile, *memProfile, *summaryProfile, *stages); err != nil {
		fmt.Fprintln(os.Stderr, "reportprof:", err)
		os.Exit(1)
	}
}

func profile(dir, cpuProfile, memProfile, summaryProfile string, stages bool) error {
	if memProfile != "" {
		runtime.MemProfileRate = 64 << 10
		defer writeProfile("allocs", memProfile)
	}
	if cpuProfile != "" {
		stop, err := startCPU(cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	// As run.Finalize sets it.
	debug.SetMemoryLimit(768 << 20)
	defer debug.SetMemoryLimit(math.MaxInt64)
	wall, cpu := time.Now(), cpuSeconds()
	lap := func(stage string) {
		if !stages {
			return
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		now := cpuSeconds()
		fmt.Printf("%-16s %6.2fs wall %6.2fs CPU, %d collections so far\n", stage, time.Since(wall).Seconds(), now-cpu, ms.NumGC)
		wall, cpu = time.Now(), now
	}
	l, err := report.Load(dir)
	if err != nil {
		return err
	}
	lap("read")
	if summaryProfile != "" && stages {
		stop, err := startCPU(summaryProfile)
		if err != nil {
			return err
		}
		for range 3 {
			l.Summary()
		}
		stop()
		lap("3 summaries")
	}
	s := l.Summary()
	lap("summary")
	if _, err := reporthtml.WriteFile(dir, reporthtml.FromLoaded(l, s)); err != nil {
		return err
	}
	lap("report.html")
	return nil
}

func startCPU(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func writeProfile(name, path string) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "reportprof:", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		fmt.Fprintln(os.Stderr, "reportprof:", err)
	}
}

// cpuSeconds is the CPU the process used so far, user and system.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
