package main

import (
	"errors"
	"fmt"

	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/workload"
	"github.com/spf13/cobra"
)

// configError is a scenario the user must fix: exit code 2 (the root
// command reads ExitCode).
type configError struct{ err error }

func (e configError) Error() string { return e.err.Error() }
func (e configError) Unwrap() error { return e.err }
func (e configError) ExitCode() int { return 2 }

// loadPlan loads a scenario and builds its plan, which reads and checks the
// data files it names. Every error is the user's to fix.
func loadPlan(path string) (scenarios.Scenario, *workload.Plan, error) {
	sc, err := scenarios.Load(path)
	if err != nil {
		return sc, nil, configError{err}
	}
	plan, err := workload.NewPlan(sc)
	if err != nil {
		return sc, nil, configError{err}
	}
	return sc, plan, nil
}

func newValidateCmd() *cobra.Command {
	var resolved bool
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
			var errs []error
			for _, path := range args {
				sc, plan, err := loadPlan(path)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				if resolved {
					out, err := sc.Resolved()
					if err != nil {
						return err
					}
					fmt.Fprintf(cmd.OutOrStdout(), "# %s\n%s", path, out)
					continue
				}
				sum := plan.Summary()
				fmt.Fprintf(cmd.OutOrStdout(), "%s: ok (%s: %d phase(s), %s)\n", path, sc.Name, len(sum.Phases), sum.Dataset)
			}
			if len(errs) > 0 {
				return configError{errors.Join(errs...)}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&resolved, "resolved", false, "print each scenario with every default filled")
	return cmd
}
