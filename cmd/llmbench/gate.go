package main

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/report/gates"
	"github.com/llmbench-org/llmbench/run"
)

func newGateCmd(cio *cliIO) *cobra.Command {
	var (
		cfg  run.GateConfig
		list bool
	)
	cmd := &cobra.Command{
		Use:   "gate RUN_DIR",
		Short: "Check a run against its scenario's thresholds and a baseline run; exit 3 when a gate fails",
		Long: `Evaluates every gate the run was run with (RUN_DIR/scenario.yaml's gates.thresholds and the
--threshold expressions given to llmbench run, recorded in run.json) and every --threshold given here
against the run's summary, prints one line per gate, and exits 3 when any gate fails or cannot be
evaluated. Expressions look like

  client.ttft.p99 < 500ms
  client.requests.failed == 0
  client.ttft.p99 < baseline * 1.10
  client.ttft.p99 regression < 10%

A regression gate compares with the run given by --baseline (a run directory, or a summary.json),
or else with the baseline the run was given, where it still is; a --baseline that no gate uses, or a
--junit with no gate, is a usage error (exit 2).
when both runs have their raw records it fails only when the whole 95% bootstrap confidence
interval of the regression lies beyond the allowed one. --metrics lists the metric names.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				return printGateMetrics(cio)
			}
			if len(args) != 1 {
				return asUsage(errors.New("gate needs RUN_DIR (or --metrics)"))
			}
			_, err := run.Gate(args[0], cfg, cio.stdout)
			return err
		},
	}
	cmd.Flags().StringVar(&cfg.Baseline, "baseline", "", "baseline run to compare with: a run directory or a summary.json")
	cmd.Flags().StringArrayVar(&cfg.Thresholds, "threshold", nil, `a gate expression beyond the scenario's, e.g. "client.ttft.p99 < 500ms" (repeatable)`)
	cmd.Flags().StringVar(&cfg.JUnit, "junit", "", "also write the results as JUnit XML to this file")
	cmd.Flags().BoolVar(&list, "metrics", false, "list the metric names gates can use, and exit")
	return cmd
}

func printGateMetrics(cio *cliIO) error {
	tw := tabwriter.NewWriter(cio.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tunit\tbetter\tmeaning")
	for _, m := range gates.Metrics() {
		better := m.Better
		if better == "" {
			better = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name, m.Unit, better, m.Doc)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(cio.stdout, "\nEvery client.* and server.* metric also reads one phase alone (a sweep point, say):"+
		" phase[NAME].<metric>, e.g. phase[rate-8].client.ttft.p99 < 1s.")
	return err
}
