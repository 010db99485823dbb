package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/report/comparison"
	"github.com/llmbench-org/llmbench/report/gates"
	"github.com/llmbench-org/llmbench/report/noise"
	"github.com/llmbench-org/llmbench/rundir"
)

func newCompareCmd(cio *cliIO) *cobra.Command {
	var (
		format    string
		baselines []string
		noisePath string
	)
	cmd := &cobra.Command{
		Use:   "compare RUN_DIR RUN_DIR...",
		Short: "Put runs side by side, phase by phase: each metric's change against the first run, called worse or better only beyond the noise",
		Long: `Compare runs with the first one, phase by phase (sweep points matched by offered load), and warn when
they measured different things (a scenario field that changes the load, or the engine, differs).
Each argument is a run directory, a trial set (llmbench run --repeat N) or a directory of runs; with
--baseline (repeatable: a history) the baseline's runs come first and every argument is compared
with them. A change is worse or better only when its 95 % interval excludes zero: a bootstrap over
runs, then requests, widened by the metric's noise floor where a side has a single run (--noise, or
the default noise file; else a default floor); otherwise it is "no change beyond noise"
(docs/decisions/0034). --format text, md (for a pull-request comment; significant worse changes in
bold) or json (schema llmbench.compare/v1, documented in package report/comparison).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			render, ok := comparison.Renderers[format]
			if !ok {
				return asUsage(fmt.Errorf("--format %q: want text, md or json", format))
			}
			if len(baselines)+len(args) < 2 {
				return asUsage(errors.New("compare needs two run arguments (or --baseline and one argument)"))
			}
			var runs []comparison.Run
			if len(baselines) > 0 {
				base, err := loadHistory(baselines)
				if err != nil {
					return err
				}
				runs = append(runs, base)
			}
			for _, dir := range args {
				if !comparison.IsRun(dir) {
					return asUsage(fmt.Errorf("%s is not a run directory (no %s or %s), a trial set (no %s) or a directory of runs", dir, rundir.RunFile, rundir.SummaryFile, rundir.TrialsFile))
				}
				r, err := comparison.Load(dir)
				if err != nil {
					return err
				}
				runs = append(runs, r)
			}
			o := gates.Options{Bootstrap: gates.DefaultBootstrap}
			floors, err := compareFloors(cio, noisePath, runs[0].Dir)
			if err != nil {
				return err
			}
			o.Floors = floors
			return render(cio.stdout, comparison.CompareWith(o, runs...))
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text, md for a pull-request comment or a CI job summary, or json")
	cmd.Flags().StringArrayVar(&baselines, "baseline", nil, "the baseline: a run, a trial set or a directory of runs (repeatable: a history); compared first")
	cmd.Flags().StringVar(&noisePath, "noise", "", "noise file with the floors learned by llmbench noise (default: $LLMBENCH_NOISE or ~/.config/llmbench/noise.json)")
	return cmd
}

// loadHistory is the baselines as one side: every run of every path.
func loadHistory(paths []string) (comparison.Run, error) {
	var out comparison.Run
	for i, p := range paths {
		r, err := comparison.Load(p)
		if err != nil {
			return comparison.Run{}, asUsage(fmt.Errorf("--baseline: %w", err))
		}
		if i == 0 {
			out = r
			out.Trials = nil
		}
		out.Trials = append(out.Trials, r.Trials...)
	}
	return out, nil
}

// compareFloors are the noise floors for the baseline's scenario and host:
// from --noise (an entry it lacks is an error) or the default noise file.
func compareFloors(cio *cliIO, path, baseline string) (gates.Floors, error) {
	required := path != ""
	if !required && cio.getenv != nil {
		path = noise.DefaultPath(cio.getenv)
	}
	if path == "" {
		return gates.Floors{}, nil
	}
	f, err := noise.Load(path)
	if err != nil {
		return gates.Floors{}, asUsage(fmt.Errorf("--noise: %w", err))
	}
	k, err := noise.KeyOf(baseline)
	if err != nil {
		return gates.Floors{}, nil
	}
	e, ok := f.Lookup(k)
	if !ok {
		if required {
			return gates.Floors{}, asUsage(fmt.Errorf("--noise %s has no floors for scenario %s (%s) on host %q; learn them with llmbench noise", path, k.Scenario, k.ScenarioHash, k.Host))
		}
		return gates.Floors{}, nil
	}
	return e.Floors(path), nil
}
