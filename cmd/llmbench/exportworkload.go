package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/run"
)

func newExportWorkloadCmd(cio *cliIO) *cobra.Command {
	var format, output string
	cmd := &cobra.Command{
		Use:   "export-workload RUN_DIR",
		Short: "Write a run's requests in a format the peers replay (a Mooncake trace, a JSONL dataset)",
		Long: `Write the requests the run's measured phases sent, in the order they were meant to go, so that
another tool (or llmbench) replays the same load: --format mooncake writes a Mooncake trace
({timestamp ms, input_length, output_length, hash_ids} per line: AIPerf's --custom-dataset-type
mooncake_trace, llmbench's workload.trace format mooncake); --format jsonl writes {prompt,
output_tokens, max_tokens} per line (vllm bench serve --dataset-name custom; llmbench's jsonl
dataset). Times are each open-loop request's intended send, else its hand-over; lengths the plan's
prompt target and max_tokens. The run keeps no prompt text: hash_ids are each request's own (no
shared prefix) and jsonl prompts are words of llmbench's synthetic vocabulary (docs/decisions/2222).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var w io.Writer = cio.stdout
			var f *os.File
			if output != "" && output != "-" {
				var err error
				if f, err = os.Create(output); err != nil {
					return err
				}
				w = f
			}
			n, err := run.ExportWorkload(args[0], format, w)
			if f != nil {
				err = errors.Join(err, f.Close())
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cio.stderr, "%d requests written\n", n)
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", run.ExportMooncake, "mooncake or jsonl")
	cmd.Flags().StringVarP(&output, "output", "o", "", "the file to write (default: standard output)")
	return cmd
}
