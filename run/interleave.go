package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// PairResult is what an interleaved A/B left: two trial sets side by side.
type PairResult struct {
	// Dir holds the pair: A/ and B/, each a trial set ("" when none was
	// made).
	Dir  string
	A, B TrialsResult
	// Order lists the trials' run directories in the order they ran: A1,
	// B1, A2, B2, …
	Order []string
}

// Interleave runs a and b alternately, n trials each: A1 B1 A2 B2 … An Bn,
// into the trial sets A/ and B/ of one directory under a.RunsDir, so that a
// slow drift of the host or of a shared engine (a warming cache, a
// neighbour's load, thermal throttling) falls on both sides alike instead
// of on whichever ran second (docs/decisions/0037). Each trial is a
// complete run, as in Repeat; each set's trials.json lists its trials in
// order. a and b are whole runs' configurations; the pair is run in a's
// runs directory, a's MetricsAddr serves both sides throughout, and both
// should share Stop, so that one interrupt stops the pair. Comparing the two sets is the caller's (`llmbench ab` prints
// what `llmbench compare A B` does). Gates belong to `run` and `gate`,
// not to a pair: a or b with thresholds, a baseline or a JUnit path is a
// *ConfigError.
//
// An interrupt during a trial keeps every trial that ran and what that
// trial measured, and starts no further one.
func Interleave(ctx context.Context, a, b Config, n int, sys IO) (PairResult, error) {
	if n < 1 {
		return PairResult{}, configError(fmt.Errorf("--repeat %d: want 1 or more trials of each side", n))
	}
	sys = sys.withDefaults()
	sides := []Config{a, b}
	var names [2]string
	var resolved [2][]byte
	for i, cfg := range sides {
		if len(cfg.Thresholds) > 0 || cfg.Baseline != "" || cfg.JUnit != "" {
			return PairResult{}, configError(errors.New("an A/B pair is compared, not gated: gate either set with `llmbench gate SET --baseline OTHER`"))
		}
		if err := checkRepeatable(cfg); err != nil {
			return PairResult{}, err
		}
		ld, err := loadRun(cfg, sys)
		if err != nil {
			return PairResult{}, fmt.Errorf("%s: %w", "AB"[i:i+1], err)
		}
		names[i], resolved[i] = ld.sc.Name, ld.resolved
		if i == 1 {
			fmt.Fprintf(sys.Stdout, "A/B: %d trials each of %s (A) and %s (B), interleaved A1 B1 A2 B2 …\n%s\n", n, names[0], names[1], sharingNote(ld.sc))
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := shareOwnMetrics(ctx, a.MetricsAddr, sys, &sides[0], &sides[1]); err != nil {
		return PairResult{}, err
	}
	runsDir := a.RunsDir
	if runsDir == "" {
		runsDir = "runs"
	}
	dir, err := makeSetDir(filepath.Join(runsDir, time.Now().UTC().Format("20060102T150405Z")+"-ab-"+names[0]+"-vs-"+names[1]))
	if err != nil {
		return PairResult{}, err
	}
	res := PairResult{Dir: dir}
	sets := [2]*trialSet{{dir: filepath.Join(dir, "A"), side: "A", n: n, resolved: resolved[0]}, {dir: filepath.Join(dir, "B"), side: "B", n: n, resolved: resolved[1]}}
	for _, s := range sets {
		if err := os.Mkdir(s.dir, 0o755); err != nil {
			return res, fmt.Errorf("create trial set directory: %w", err)
		}
	}
	err = interleave(ctx, sides, sets, n, sys, &res)
	for _, s := range sets {
		s.printSpread(sys.Stdout)
	}
	res.A = TrialsResult{Dir: sets[0].dir, Trials: sets[0].runs}
	res.B = TrialsResult{Dir: sets[1].dir, Trials: sets[1].runs}
	return res, err
}

// interleave runs the trials in turn, A1 B1 A2 B2 …, until all have run or
// one ends the pair.
func interleave(ctx context.Context, sides []Config, sets [2]*trialSet, n int, sys IO, res *PairResult) error {
	for k := 1; k <= n; k++ {
		for i, s := range sets {
			if told(ctx, sides[i].Stop) {
				return s.stoppedBefore(k)
			}
			r, err := s.runTrial(ctx, sides[i], sys, k)
			if r.Dir != "" {
				res.Order = append(res.Order, r.Dir)
			}
			if endsSet(err) {
				return s.ended(err, k)
			}
		}
	}
	return nil
}
