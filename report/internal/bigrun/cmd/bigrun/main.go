// Command bigrun generates a run directory of any size (run.json and
// requests.jsonl, no scrapes) for measuring `llmbench report`:
//
//	go run ./report/internal/bigrun/cmd/bigrun -requests 1000000 -chunks 200 -dir /tmp/bigrun
//	/usr/bin/time -v llmbench report /tmp/bigrun
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/internal/bigrun"
)

func main() {
	dir := flag.String("dir", "", "the run directory to create")
	n := flag.Int("requests", 1_000_000, "requests")
	chunks := flag.Int("chunks", 200, "output chunks per successful request")
	phases := flag.String("phases", "warmup,rate-500,rate-1000,rate-2000", "phases, comma-separated (the first is not measured)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "bigrun: -dir is required")
		os.Exit(2)
	}
	if err := run(*dir, *n, *chunks, strings.Split(*phases, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "bigrun:", err)
		os.Exit(1)
	}
}

func run(dir string, n, chunks int, phases []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, report.RequestsFile))
	if err != nil {
		return err
	}
	spans, err := bigrun.Write(f, bigrun.Config{Requests: n, Chunks: chunks, Seed: 1, Phases: phases})
	if err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	meta := report.RunMeta{ID: "bigrun", Scenario: "bigrun", StartedAt: start, Ended: start.Add(time.Hour)}
	for i, sp := range spans {
		meta.Phases = append(meta.Phases, report.PhaseMeta{Name: sp.Name, Measured: i > 0 || len(spans) == 1, Start: sp.Start, End: sp.End})
	}
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, report.RunFile), b, 0o644)
}
