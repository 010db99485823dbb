package run

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/llmbench-org/llmbench/report/gates"
)

// TrialsResult is what a repeated run left: a trial set.
type TrialsResult struct {
	// Dir is the trial set's directory: trial-1 … trial-N and trials.json
	// ("" when none was made). With one trial it is the run directory.
	Dir string
	// Trials are the trials that left a run directory, in the order they
	// ran.
	Trials []Result
	// Gates are the verdicts of the gates evaluated over the whole set
	// (Gate); nil without gates, or when the set ended early.
	Gates *gates.Report
}

// Repeat runs cfg's scenario n times over, each trial a complete run (its
// own engine start where the run starts one, warmup, measurement and
// reports) in its own run directory, trial-1 … trial-n, inside one trial
// set directory under cfg.RunsDir, whose trials.json lists them in the
// order they ran (docs/decisions/0037). The trials run the same scenario,
// seed and plan: they differ only by noise, which is what a set is for.
//
// It prints each trial's headline figures as it ends and the spread across
// the trials at the end, then evaluates the gates over the whole set
// (Gate); a trial's own gates failing does not end the set. An interrupt
// (Stop or a cancelled context) during trial k keeps trials 1 … k−1 and
// what trial k measured, as a single run keeps what it measured, and no
// later trial starts; any other error of a trial ends the set too. Errors
// are a single run's: *ConfigError before anything starts, ErrInterrupted
// (wrapped), *GatesFailed from the set's gates.
//
// cfg.MetricsAddr serves throughout the set; cfg.Sinks receive every
// trial's records and are closed after each trial (Run closes them), so
// they must take records again after a Close.
//
// With n = 1 it is Run: one run directory, no set.
func Repeat(ctx context.Context, cfg Config, n int, sys IO) (TrialsResult, error) {
	if n < 1 {
		return TrialsResult{}, configError(fmt.Errorf("--repeat %d: want 1 or more trials", n))
	}
	if n == 1 {
		res, err := Run(ctx, cfg, sys)
		return TrialsResult{Dir: res.Dir, Trials: []Result{res}, Gates: res.Gates}, err
	}
	if err := checkRepeatable(cfg); err != nil {
		return TrialsResult{}, err
	}
	sys = sys.withDefaults()
	// Every problem of the scenario, its gates and baseline is found before
	// the first trial starts, as a single run finds them.
	ld, err := loadRun(cfg, sys)
	if err != nil {
		return TrialsResult{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := shareOwnMetrics(ctx, cfg.MetricsAddr, sys, &cfg); err != nil {
		return TrialsResult{}, err
	}
	dir, err := makeSetDir(ld.runDir(time.Now()))
	if err != nil {
		return TrialsResult{}, err
	}
	set := &trialSet{dir: dir, n: n, resolved: ld.resolved}
	res := TrialsResult{Dir: dir}
	fmt.Fprintf(sys.Stdout, "trial set: %d trials of %s in %s\n%s\n", n, ld.sc.Name, dir, sharingNote(ld.sc))
	for k := 1; k <= n; k++ {
		if told(ctx, cfg.Stop) {
			set.printSpread(sys.Stdout)
			return res, set.stoppedBefore(k)
		}
		_, err := set.runTrial(ctx, cfg, sys, k)
		res.Trials = set.runs
		if endsSet(err) {
			set.printSpread(sys.Stdout)
			return res, set.ended(err, k)
		}
	}
	set.printSpread(sys.Stdout)
	fmt.Fprintf(sys.Stdout, "trial set: %s\n", dir)
	if !hasGates(cfg, ld.sc) {
		return res, nil
	}
	junit := cfg.JUnit
	if junit == "" {
		junit = filepath.Join(dir, "junit.xml")
	}
	// The baseline and thresholds the set was run with are recorded in each
	// trial's run.json, where Gate reads them.
	res.Gates, err = Gate(dir, GateConfig{JUnit: junit}, sys.Stdout)
	return res, err
}

// checkRepeatable refuses what a trial set cannot carry: a start barrier
// holds one run, not a set of them, and a trial set is not a shard of one.
func checkRepeatable(cfg Config) error {
	switch {
	case cfg.Shard != "":
		return configError(fmt.Errorf("--repeat with --shard: a trial set is not sharded; run each shard once, or repeat the whole unsharded run"))
	case !cfg.StartAt.IsZero():
		return configError(fmt.Errorf("--repeat with --start-at: the start barrier holds one run, not a set of them"))
	}
	return nil
}
