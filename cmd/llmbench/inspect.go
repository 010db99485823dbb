package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/scrape"
)

func newInspectCmd(cio *cliIO) *cobra.Command {
	var dialect string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "inspect URL|FILE",
		Short: "Show what llmbench sees of an engine's /metrics: the dialect and the canonical values",
		Long: "inspect scrapes a /metrics URL once (or reads an exposition file), detects the engine's dialect\n" +
			"(or uses --dialect), and prints the canonical values llmbench derives and the metric behind each.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dialect != "" && dialect != scrape.Auto {
				if _, err := scrape.DialectFor(dialect); err != nil {
					return usageError(err)
				}
			}
			rep, err := scrape.InspectDialect(cmd.Context(), args[0], dialect)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cio.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			if err := rep.WriteText(cio.stdout); err != nil {
				return fmt.Errorf("write report: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dialect, "dialect", "", "metric dialect (default: detect from the metric names)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
