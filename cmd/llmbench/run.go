package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/live"
	"github.com/llmbench-org/llmbench/report/tui"
	"github.com/llmbench-org/llmbench/run"
	"github.com/llmbench-org/llmbench/scenarios"
)

type runOpts struct {
	scenario   string
	flags      *scenarios.Flags // the scenario --url and its flags build (nil: none given)
	runsDir    string           // parent of the run directory
	output     string           // auto | tui | plain
	every      time.Duration    // plain progress line interval
	baseline   string           // a run directory or summary.json for baseline gates
	thresholds []string         // gates beyond the scenario's
	junit      string           // where the gates' JUnit report goes ("" = the run directory's junit.xml)
	shard      string           // "i/n": send only shard i of n of the plan ("" = all)
	startAt    string           // RFC 3339: hold the load until then (the shards' start barrier)
	sets       []string         // --set FIELD=VALUE overrides of the scenario
	metrics    string           // serve llmbench's own /metrics here during the run
	verbose    bool             // the findings whole in the text summary
	width      int              // the text's columns (0: the terminal's, at most 100)
	repeat     int              // trials of the scenario (0 or 1: a single run, no trial set)
}

func newRunCmd(cio *cliIO) *cobra.Command {
	opts := runOpts{}
	var flags scenarios.Flags
	var fromFlags func() bool
	cmd := &cobra.Command{
		Use:   "run SCENARIO.yaml | run --url URL (--concurrency N | --rate R) (--duration D | --requests N)",
		Short: "Run a scenario: start or find the engine, drive the load, scrape /metrics, report",
		Long: `Run a scenario: start or find the engine, drive the load, scrape /metrics, report, and check
the run's gates. Exit codes: 0 the run worked and every gate passed; 1 the run could not be carried
out; 2 bad flags, arguments or scenario; 3 a gate failed or could not be evaluated; 4 no gate failed
but some were inconclusive (the evidence could not decide them: too few requests or runs, a run not
valid, a delayed host; each says what would decide it). 3 dominates 4.

Without a scenario file, --url and the flags beside it build one (an external engine, one phase of
load); the run directory keeps it as scenario.yaml, and the run ends with the command that reruns it.`,
		Example: `  llmbench run scenarios/quickstart.yaml
  llmbench run --url http://127.0.0.1:8000 --concurrency 8 --duration 30s
  llmbench run --url http://gpu:8000/v1 --model my-model --rate 4 --requests 200 --prompt-tokens 512`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.scenario = args[0]
			}
			if fromFlags() {
				opts.flags = &flags
			}
			if err := checkOutput(cio, cmd, opts.output); err != nil {
				return err
			}
			if opts.repeat < 1 {
				return asUsage(fmt.Errorf("--repeat %d: want 1 or more trials", opts.repeat))
			}
			dir, err := runScenario(cmd.Context(), opts, cio)
			if rerun := run.ScenarioFile(dir); opts.flags != nil && rerun != "" {
				fmt.Fprintf(cio.stdout, "rerun: llmbench run %s\n", rerun)
			}
			return err
		},
	}
	fromFlags = addScenarioFlags(cmd, &flags)
	cmd.Flags().IntVar(&opts.repeat, "repeat", 1, "run the scenario N times over, each trial a complete run in its own directory of one trial set (trials.json), the gates evaluated over the set")
	addOutputFlags(cmd, &opts, "run directory")
	cmd.Flags().StringVar(&opts.baseline, "baseline", "", "a previous run directory (or summary.json) for baseline and regression gates")
	cmd.Flags().StringArrayVar(&opts.thresholds, "threshold", nil, "a gate to check besides the scenario's gates.thresholds (repeatable), e.g. \"client.ttft.p99 < 500ms\"")
	cmd.Flags().StringVar(&opts.shard, "shard", "", "i/n: send only shard i (0-based) of n of the plan, for n load generators on n machines (merge their runs with llmbench merge)")
	cmd.Flags().StringVar(&opts.startAt, "start-at", "", "RFC 3339 time (e.g. 2026-12-02T10:00:00Z): start the load then, with the engine up and connections open; give every shard the same time so they start together")
	cmd.Flags().StringVar(&opts.junit, "junit", "", "write the gates' JUnit report here (default: junit.xml in the run directory)")
	cmd.Flags().BoolVarP(&opts.verbose, "verbose", "v", false, "print every finding whole, with its evidence (report.md and report.html always have them)")
	cmd.Flags().IntVar(&opts.width, "width", 0, "the text summary's and progress lines' width in columns, at least 60 (default: the terminal's, at most 100)")
	cmd.Flags().StringVar(&opts.metrics, "metrics-addr", "", "serve llmbench's own Prometheus /metrics at HOST:PORT during the run (deploy/grafana has a dashboard)")
	addSetFlag(cmd, &opts.sets)
	return cmd
}

// checkOutput checks the live view's flag, named as the user gave it: a TUI
// needs a terminal. It notes an old flag name used (oldNames).
func checkOutput(cio *cliIO, cmd *cobra.Command, output string) error {
	flag := oldNames(cmd, cio.stderr)
	switch output {
	case "auto", "plain":
	case "tui":
		if !cio.isTTY || cio.stdin == nil {
			return asUsage(fmt.Errorf("%s tui needs a terminal, and stdout (or stdin) is not one: use %s plain", flag, flag))
		}
	default:
		return asUsage(fmt.Errorf("%s must be auto, tui or plain, not %q", flag, output))
	}
	return nil
}

// runScenario runs one scenario through the run package and returns its run
// directory: the CLI's part is the live view and turning signals (or Ctrl-C
// in the TUI) into the two-stage stop. With --repeat N > 1 run.Repeat runs
// a trial set and returns the set's directory.
func runScenario(ctx context.Context, opts runOpts, cio *cliIO) (string, error) {
	ctx, abort := context.WithCancel(ctx)
	defer abort()
	stop, view := startControl(ctx, abort, cio, opts)

	startAt, err := run.ParseStartAt(opts.startAt)
	if err != nil {
		return "", asUsage(err)
	}
	cfg := run.Config{
		Scenario: opts.scenario, Flags: opts.flags, Sets: opts.sets, RunsDir: opts.runsDir,
		Baseline: opts.baseline, Thresholds: opts.thresholds, JUnit: opts.junit, Shard: opts.shard, StartAt: startAt,
		Stop: stop, Views: []run.View{view}, MetricsAddr: opts.metrics, Verbose: opts.verbose, Width: opts.width,
	}
	res, err := run.Repeat(ctx, cfg, max(opts.repeat, 1), cio.runIO())
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

// useTUI decides the live view: the TUI on a terminal (unless --view plain),
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
		fmt.Fprintf(cio.stderr, "llmbench: running %s against %s\n  writing %s\n", l.Name(), l.Engine, l.RunDir)
		live.PrintProgress(ctx, cio.stderr, opts.every, opts.width, l.Progress)
	}
}
