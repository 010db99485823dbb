package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/report/comparison"
	"github.com/llmbench-org/llmbench/run"
)

// abOpts are `llmbench ab`'s settings beyond a run's.
type abOpts struct {
	run          runOpts
	setsA, setsB []string // overrides of one side only
	format       string   // the comparison's format
}

func newABCmd(cio *cliIO) *cobra.Command {
	opts := abOpts{}
	cmd := &cobra.Command{
		Use:   "ab A.yaml [B.yaml]",
		Short: "Run two scenarios interleaved, A1 B1 A2 B2 …, as two trial sets, and compare them",
		Long: `Run scenario A and scenario B (or A again with --set-b overrides) alternately, --repeat
trials each: A1 B1 A2 B2 …, so that a slow drift of the host or of a shared engine falls on
both sides alike. Each trial is a complete run; the trials go into the trial sets A/ and B/
of one directory under --runs, and the two sets are then compared as 'llmbench compare A B'
compares them. Without B.yaml and --set-b both sides run A: an A/A pair, whose differences
are the noise.`,
		Example: `  llmbench ab scenarios/ci-gate.yaml --set-b engine.sim.decode_base=10ms --repeat 5
  llmbench ab old.yaml new.yaml --format md > comparison.md`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(cio, cmd, opts.run.output); err != nil {
				return err
			}
			if _, ok := comparison.Renderers[opts.format]; !ok {
				return asUsage(fmt.Errorf("--format %q: want text, md or json", opts.format))
			}
			return runAB(cmd.Context(), args, opts, cio)
		},
	}
	cmd.Flags().IntVar(&opts.run.repeat, "repeat", 3, "trials of each side")
	addOutputFlags(cmd, &opts.run, "pair's directory")
	cmd.Flags().StringVar(&opts.format, "format", "text", "the comparison: text, md or json (as llmbench compare)")
	cmd.Flags().StringVar(&opts.run.metrics, "metrics-addr", "", "serve llmbench's own Prometheus /metrics at HOST:PORT throughout the pair")
	addSetFlag(cmd, &opts.run.sets)
	cmd.Flags().StringArrayVar(&opts.setsA, "set-a", nil, "override a field of side A only (repeatable; after --set)")
	cmd.Flags().StringArrayVar(&opts.setsB, "set-b", nil, "override a field of side B only (repeatable; after --set), e.g. --set-b engine.sim.decode_base=10ms")
	return cmd
}

// runAB runs the interleaved pair (run.AB) and compares its two trial sets
// as `llmbench compare` does.
func runAB(ctx context.Context, args []string, opts abOpts, cio *cliIO) error {
	ctx, abort := context.WithCancel(ctx)
	defer abort()
	stop, view := startControl(ctx, abort, cio, opts.run)
	cfg := run.ABConfig{SetsA: opts.setsA, SetsB: opts.setsB, Trials: opts.run.repeat,
		Base: run.Config{Scenario: args[0], Sets: opts.run.sets, RunsDir: opts.run.runsDir, Stop: stop, Views: []run.View{view}, MetricsAddr: opts.run.metrics}}
	if len(args) == 2 {
		cfg.B = args[1]
	}
	res, err := run.AB(ctx, cfg, cio.runIO())
	if err != nil {
		return err
	}
	fmt.Fprintf(cio.stdout, "A/B pair: %s\n", res.Dir)
	return printComparison(cio, comparison.Renderers[opts.format], run.CompareConfig{Runs: []string{res.A.Dir, res.B.Dir}}, "")
}
