package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/report/comparison"
	"github.com/llmbench-org/llmbench/report/noise"
	"github.com/llmbench-org/llmbench/run"
)

func newCompareCmd(cio *cliIO) *cobra.Command {
	var format, noisePath string
	var baselines []string
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
(docs/decisions/0034). An argument may also be a peer's result file (vLLM, SGLang, AIPerf, GuideLLM):
it is shown beside the first run, each difference split into definitions and measurement
(docs/decisions/2220). --format text, md (for a pull-request comment; significant worse changes in
bold), json (schema llmbench.compare/v1, in package report/comparison) or html (CDFs overlaid).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			render, ok := run.CompareRenderers[format]
			if !ok {
				return asUsage(fmt.Errorf("--format %q: want %s", format, run.CompareFormats))
			}
			runs, shown, err := run.ComparePeers(cio.stdout, format, args, baselines)
			switch {
			case err != nil:
				return err
			case shown && len(baselines)+len(runs) < 2:
				return nil
			case shown:
				fmt.Fprintln(cio.stdout)
			}
			if len(baselines)+len(runs) < 2 {
				return asUsage(errors.New("compare needs two run arguments (or --baseline and one argument), or a run and a peer's result file"))
			}
			return printComparison(cio, render, run.CompareConfig{Runs: runs, Baselines: baselines}, noisePath)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text, md for a pull-request comment or a CI job summary, json, or html")
	cmd.Flags().StringArrayVar(&baselines, "baseline", nil, "the baseline: a run, a trial set or a directory of runs (repeatable: a history); compared first")
	cmd.Flags().StringVar(&noisePath, "noise", "", "noise file with the floors learned by llmbench noise (default: $LLMBENCH_NOISE or ~/.config/llmbench/noise.json)")
	return cmd
}

// printComparison compares cfg's runs under the noise file of the --noise
// flag (or the default one) and renders the comparison on stdout.
func printComparison(cio *cliIO, render comparison.Renderer, cfg run.CompareConfig, noiseFlag string) error {
	cfg.Noise, cfg.NoiseRequired = noise.FileFor(cio.getenv, noiseFlag)
	return run.RenderComparison(cio.stdout, render, cfg)
}
