package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/internal/version"
)

func newVersionCmd(cio *cliIO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print llmbench's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cio.stdout, "llmbench %s\n", version.String())
			return err
		},
	}
}
