package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/live"
	"github.com/llmbench-org/llmbench/report/tui"
	"github.com/llmbench-org/llmbench/run"
)

type runOpts struct {
	scenario   string
	runsDir    string        // parent of the run directory
	output     string        // auto | tui | plain
	every      time.Duration // plain progress line interval
	baseline   string        // a run directory or summary.json for baseline gates
	thresholds []string      // gates beyond the scenario's
	junit      string        // where the gates' JUnit report goes ("" = the run directory's junit.xml)
	shard      string        // "i/n": send only shard i of n of the plan ("" = all)
	startAt    string        // RFC 3339: hold the load until then (the shards' start barrier)
	sets       []string      // --set FIELD=VALUE overrides of the scenario
	metrics    string        // serve llmbench's own /metrics here during the run
	verbose    bool          // the findings whole in the text summary
	repeat     int           // trials of the scenario (1: a single run, no trial set)
}

func newRunCmd(cio *cliIO) *cobra.Command {
	opts := runOpts{}
	cmd := &cobra.Command{
		Use:   "run SCENARIO.yaml",
		Short: "Run a scenario: start or find the engine, drive the load, scrape /metrics, report",
		Long: `Run a scenario: start or find the engine, drive the load, scrape /metrics, report, and check
the run's gates. Exit codes: 0 the run worked and every gate passed; 1 the run could not be carried
out; 2 bad flags, arguments or scenario; 3 a gate failed or could not be evaluated; 4 no gate failed
but some were inconclusive (the evidence could not decide them: too few requests or runs, a run not
valid, a delayed host; each says what would decide it). 3 dominates 4.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.scenario = args[0]
			if err := checkOutput(cio, opts.output); err != nil {
				return err
			}
			if opts.repeat < 1 {
				return asUsage(fmt.Errorf("--repeat %d: want 1 or more trials", opts.repeat))
			}
			_, err := runScenario(cmd.Context(), opts, cio)
			return err
		},
	}
	cmd.Flags().IntVar(&opts.repeat, "repeat", 1, "run the scenario N times over, each trial a complete run in its own directory of one trial set (trials.json), the gates evaluated over the set")
	cmd.Flags().StringVar(&opts.runsDir, "runs", "runs", "directory under which the run directory is created")
	cmd.Flags().StringVar(&opts.output, "output", "auto", "live view: auto (TUI on a terminal, plain lines otherwise), tui, plain")
	cmd.Flags().DurationVar(&opts.every, "every", 2*time.Second, "interval of plain progress lines")
	cmd.Flags().StringVar(&opts.baseline, "baseline", "", "a previous run directory (or summary.json) for baseline and regression gates")
	cmd.Flags().StringArrayVar(&opts.thresholds, "threshold", nil, "a gate to check besides the scenario's gates.thresholds (repeatable), e.g. \"client.ttft.p99 < 500ms\"")
	cmd.Flags().StringVar(&opts.shard, "shard", "", "i/n: send only shard i (0-based) of n of the plan, for n load generators on n machines (merge their runs with llmbench merge)")
	cmd.Flags().StringVar(&opts.startAt, "start-at", "", "RFC 3339 time (e.g. 2026-12-02T10:00:00Z): start the load then, with the engine up and connections open; give every shard the same time so they start together")
	cmd.Flags().StringVar(&opts.junit, "junit", "", "write the gates' JUnit report here (default: junit.xml in the run directory)")
	cmd.Flags().BoolVarP(&opts.verbose, "verbose", "v", false, "print every finding whole, with its evidence (report.md and report.html always have them)")
	cmd.Flags().StringVar(&opts.metrics, "metrics-addr", "", "serve llmbench's own Prometheus /metrics at HOST:PORT during the run (deploy/grafana has a dashboard)")
	addSetFlag(cmd, &opts.sets)
	return cmd
}

// checkOutput checks --output: a TUI needs a terminal.
func checkOutput(cio *cliIO, output string) error {
	switch output {
	case "auto", "plain":
	case "tui":
		if !cio.isTTY || cio.stdin == nil {
			return asUsage(errors.New("--output tui needs a terminal, and stdout (or stdin) is not one: use --output plain"))
		}
	default:
		return asUsage(fmt.Errorf("--output must be auto, tui or plain, not %q", output))
	}
	return nil
}

// runScenario runs one scenario through the run package and returns its run
// directory: the CLI's part is the live view and turning signals (or Ctrl-C
// in the TUI) into the two-stage stop. With --repeat N > 1 it runs a trial
// set (run.Repeat) and returns the set's directory.
func runScenario(ctx context.Context, opts runOpts, cio *cliIO) (string, error) {
	ctx, abort := context.WithCancel(ctx)
	defer abort()
	stop, view := startControl(ctx, abort, cio, opts)

	startAt, err := startTime(opts.startAt)
	if err != nil {
		return "", asUsage(err)
	}
	cfg := run.Config{
		Scenario: opts.scenario, Sets: opts.sets, RunsDir: opts.runsDir,
		Baseline: opts.baseline, Thresholds: opts.thresholds, JUnit: opts.junit, Shard: opts.shard, StartAt: startAt,
		Stop: stop, Views: []run.View{view}, MetricsAddr: opts.metrics, Verbose: opts.verbose,
	}
	if opts.repeat > 1 {
		res, err := run.Repeat(ctx, cfg, opts.repeat, cio.runIO())
		return res.Dir, err
	}
	res, err := run.Run(ctx, cfg, cio.runIO())
	return res.Dir, err
}

// startControl sets up how a run is watched and stopped: the live view,
// and the interrupts (signals, or Ctrl-C in the TUI) turned into the
// two-stage stop: the first closes stop, the second calls abort.
func startControl(ctx context.Context, abort context.CancelFunc, cio *cliIO, opts runOpts) (chan struct{}, run.View) {
	tuiOn := useTUI(cio, opts)
	intr := run.NewInterrupter(abort, cio.stderr, !tuiOn)
	go intr.Forward(ctx, cio.signals)
	return intr.Stop(), progressView(cio, opts, tuiOn, intr.Interrupt)
}

// useTUI decides the live view: the TUI on a terminal (unless --output plain),
// plain lines otherwise.
func useTUI(cio *cliIO, opts runOpts) bool {
	switch opts.output {
	case "tui":
		return true
	case "plain":
		return false
	}
	return cio.isTTY && cio.stdin != nil
}

// progressView shows the run's progress while it goes on: the TUI, or a plain
// line on stderr every opts.every. interrupt is the TUI's Ctrl-C (in raw mode
// Ctrl-C is a key press, not a signal).
func progressView(cio *cliIO, opts runOpts, tuiOn bool, interrupt func()) run.View {
	if tuiOn {
		return func(ctx context.Context, l run.Live) {
			h := tui.Header{Scenario: l.Name(), RunDir: l.RunDir, Engine: l.Engine, Planned: l.Planned, PlannedRequests: l.PlannedRequests, Phases: l.Phases}
			if err := tui.Run(ctx, h, l.Progress, tui.Options{Input: cio.stdin, Output: cio.stdout, Interrupt: interrupt}); err != nil {
				fmt.Fprintf(cio.stderr, "llmbench: live view: %v\n", err)
			}
		}
	}
	return func(ctx context.Context, l run.Live) {
		fmt.Fprintf(cio.stderr, "llmbench: running %s against %s, writing %s\n", l.Name(), l.Engine, l.RunDir)
		live.PrintProgress(ctx, cio.stderr, opts.every, l.Progress)
	}
}

// startTime reads --start-at ("" = none): an RFC 3339 time, which says its
// time zone, so that shards on machines in different zones read one instant.
func startTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--start-at %q: want an RFC 3339 time such as 2026-12-02T10:00:00Z", s)
	}
	return t, nil
}
