// Command bigrun generates a run directory of any size (run.json and
// requests.jsonl, no scrapes) for measuring `llmbench report`:
//
//	go run ./report/internal/bigrun/cmd/bigrun -requests 1000000 -chunks 200 -dir /tmp/bigrun
//	/usr/bin/time -v llmbench report /tmp/bigrun
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/internal/bigrun"
	"github.com/llmbench-org/llmbench/rundir"
	"io"
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
	var spans []bigrun.Phase
	err := rundir.WriteWith(filepath.Join(dir, rundir.RequestsFile), func(w io.Writer) error {
		var err error
		spans, err = bigrun.Write(w, bigrun.Config{Requests: n, Chunks: chunks, Seed: 1, Phases: phases})
		return err
	})
	if err != nil {
		return err
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	meta := rundir.RunMeta{ID: "bigrun", Scenario: "bigrun", StartedAt: start, Ended: start.Add(time.Hour)}
	for i, sp := range spans {
		meta.Phases = append(meta.Phases, rundir.PhaseMeta{Name: sp.Name, Measured: i > 0 || len(spans) == 1, Start: sp.Start, End: sp.End})
	}
	return rundir.WriteJSON(filepath.Join(dir, rundir.RunFile), meta)
}
