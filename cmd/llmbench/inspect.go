package main

import (
	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/redact"
	"github.com/llmbench-org/llmbench/run"
)

func newInspectCmd(cio *cliIO) *cobra.Command {
	var dialect string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "inspect URL|FILE",
		Short: "Show what llmbench sees of an engine's /metrics: the dialect and the canonical values",
		Long: "inspect scrapes a /metrics URL once (or reads an exposition file), detects the engine's dialect\n" +
			"(or uses --dialect), and prints the canonical values llmbench derives and the metric behind each.\n" +
			"Given the engine's API root instead (http://host:8000 or http://host:8000/v1), it first finds the\n" +
			"model and the metrics as a run against an external engine would, and says what it found.\n" +
			"NVIDIA's DCGM exporter (dcgm-exporter, :9400/metrics) is read too: the GPUs, each with its labels.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := run.Inspect(cmd.Context(), args[0], dialect, cio.stderr)
			if err != nil {
				return err
			}
			// The report quotes the URL it read, userinfo and query included,
			// and the engine's own label values: the one redaction policy
			// applies to what inspect prints as to every output.
			return rep.Write(redact.SafeWriter(cio.stdout), asJSON)
		},
	}
	cmd.Flags().StringVar(&dialect, "dialect", "", "metric dialect (default: detect from the metric names); dcgm for NVIDIA's DCGM exporter")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
