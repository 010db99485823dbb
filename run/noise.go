package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/llmbench-org/llmbench/report/gates"
	"github.com/llmbench-org/llmbench/report/noise"
)

// NoiseConfig is `llmbench noise`: A/A pairs of one scenario, run back to
// back, and the noise file their floors go into.
type NoiseConfig struct {
	Scenario string   // path of the scenario file
	Sets     []string // FIELD=VALUE overrides of the scenario
	RunsDir  string   // parent of the run directories
	Pairs    int      // A/A pairs to run (at least 1)
	Out      string   // the noise file to write ("" = noise.DefaultPath of the environment)
}

// LearnNoise runs cfg.Pairs A/A pairs of the scenario and records each
// metric's floor, the largest regression of a pair's second run against its
// first (nothing changed between them, so what moved is the machine's
// run-to-run noise), in the noise file cfg.Out under the scenario's hash and
// this host (docs/decisions/0034). It prints a line per run and then the
// floors on sys.Stdout; each run's own report is not printed. A run whose
// gates fail still counts: the floors are about the figures, not the gates.
func LearnNoise(ctx context.Context, cfg NoiseConfig, sys IO) (noise.Entry, error) {
	if cfg.Pairs < 1 {
		return noise.Entry{}, configError(errors.New("--pairs must be at least 1"))
	}
	if cfg.Out == "" {
		cfg.Out = noise.DefaultPath(sys.withDefaults().Getenv)
	}
	if cfg.Out == "" {
		return noise.Entry{}, configError(errors.New("no noise file: give --out (no $LLMBENCH_NOISE, no home directory)"))
	}
	out := sys.withDefaults().Stdout
	quiet := sys
	quiet.Stdout = io.Discard
	var got [][2]gates.Run
	var first string
	for i := range cfg.Pairs {
		var pair [2]gates.Run
		for j := range pair {
			res, err := Run(ctx, Config{Scenario: cfg.Scenario, Sets: cfg.Sets, RunsDir: cfg.RunsDir}, quiet)
			var gf *GatesFailed
			if err != nil && !errors.As(err, &gf) {
				return noise.Entry{}, err
			}
			if first == "" {
				first = res.Dir
			}
			if pair[j], err = gates.LoadRun(res.Dir); err != nil {
				return noise.Entry{}, err
			}
			fmt.Fprintf(out, "pair %d/%d run %c: %s (valid: %v)\n", i+1, cfg.Pairs, 'A'+j, res.Dir, pair[j].Summary.Health.Valid)
		}
		got = append(got, pair)
	}
	e, err := saveFloors(first, got, cfg.Out)
	if err != nil {
		return e, err
	}
	printFloors(out, cfg.Out, e)
	return e, nil
}

// saveFloors learns the floors of the pairs, keyed by the first run's
// scenario and host, and puts them into the noise file at path.
func saveFloors(first string, pairs [][2]gates.Run, path string) (noise.Entry, error) {
	k, err := noise.KeyOf(first)
	if err != nil {
		return noise.Entry{}, err
	}
	e, err := noise.Learn(k, pairs, noise.Metrics, time.Now())
	if err != nil {
		return e, err
	}
	f, err := noise.Load(path)
	if err != nil {
		return e, err
	}
	f.Put(e)
	return e, f.Save(path)
}

func printFloors(w io.Writer, path string, e noise.Entry) {
	fmt.Fprintf(w, "noise floors of %s (%s) on %s, %d A/A pairs (%d with a run not valid), written to %s:\n",
		e.Scenario, e.ScenarioHash, e.Host, e.Pairs, e.InvalidPairs, path)
	names := e.Names()
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-40s ±%.1f%%\n", n, 100*e.Metrics[n].Floor)
	}
}
