package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/run"
)

func newExportWorkloadCmd(cio *cliIO) *cobra.Command {
	var format, output string
	cmd := &cobra.Command{
		Use:   "export-workload RUN_DIR",
		Short: "Write a run's requests in a format the peers replay (a Mooncake trace, a JSONL dataset)",
		Long: `Write the requests the run's measured phases sent, in order, so that another tool (or llmbench)
replays the same load: --format mooncake (AIPerf's mooncake_trace, llmbench's trace replay) or jsonl
(vllm bench serve --dataset-name custom, llmbench's jsonl dataset); docs/decisions/2222.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := run.ExportWorkloadFile(args[0], format, output, cio.stdout)
			if err == nil {
				fmt.Fprintf(cio.stderr, "%d requests written\n", n)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&format, "format", run.ExportMooncake, "mooncake or jsonl")
	cmd.Flags().StringVarP(&output, "output", "o", "", "the file to write (default: standard output)")
	return cmd
}
