package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/report/comparison"
	"github.com/llmbench-org/llmbench/report/gates"
	"github.com/llmbench-org/llmbench/rundir"
)

func newCompareCmd(cio *cliIO) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "compare RUN_DIR RUN_DIR...",
		Short: "Put runs side by side, phase by phase: each metric's change against the first run, significant only when its 95 % bootstrap interval excludes zero",
		Long: `Compare runs with the first one, phase by phase (sweep points matched by offered load), and warn when
they measured different things (a scenario field that changes the load, or the engine, differs).
A change is worse or better only when its 95 % bootstrap interval excludes zero.
--format text, md (for a pull-request comment; significant worse changes in bold) or json
(schema llmbench.compare/v1, documented in package report/comparison).`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			render, ok := comparison.Renderers[format]
			if !ok {
				return asUsage(fmt.Errorf("--format %q: want text, md or json", format))
			}
			var runs []comparison.Run
			for _, dir := range args {
				if !comparison.IsRun(dir) {
					return asUsage(fmt.Errorf("%s is not a run directory (no %s or %s)", dir, rundir.RunFile, rundir.SummaryFile))
				}
				r, err := comparison.Load(dir)
				if err != nil {
					return err
				}
				runs = append(runs, r)
			}
			return render(cio.stdout, comparison.Compare(gates.DefaultBootstrap, runs...))
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text, md for a pull-request comment or a CI job summary, or json")
	return cmd
}
