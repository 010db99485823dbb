package main

import (
	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/run"
)

func newValidateCmd() *cobra.Command {
	var resolved bool
	var sets []string
	cmd := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check scenario files: every error with file:line, and the data files they name",
		Long: `Validate loads each scenario strictly (unknown keys, wrong types, missing
fields and impossible values are errors, each with file:line and the field),
then reads the data files it names (traces, datasets, histograms). Nothing is
sent. With --resolved it prints each valid scenario with its defaults filled,
as a run directory keeps it.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return run.Validate(args, sets, resolved, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&resolved, "resolved", false, "print each scenario with every default filled")
	addSetFlag(cmd, &sets)
	return cmd
}

// addSetFlag adds --set FIELD=VALUE, repeatable, to a command that loads a
// scenario.
func addSetFlag(cmd *cobra.Command, sets *[]string) {
	cmd.Flags().StringArrayVar(sets, "set", nil,
		"override a scenario field (repeatable), e.g. --set workload.rate=20 --set 'workload.prompt_tokens={dist: uniform, min: 64, max: 512}'; an empty value unsets it")
}
