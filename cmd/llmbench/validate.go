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

// loadPlan loads a scenario, with the --set overrides applied, and builds
// its plan, which reads and checks the data files it names. Every error is
// the user's to fix.
func loadPlan(path string, sets []string) (scenarios.Scenario, *workload.Plan, error) {
	var overrides []scenarios.Override
	for _, s := range sets {
		o, err := scenarios.ParseOverride(s)
		if err != nil {
			return scenarios.Scenario{}, nil, configError{err}
		}
		overrides = append(overrides, o)
	}
	sc, err := scenarios.Load(path, overrides...)
	if err != nil {
		return sc, nil, configError{err}
	}
	plan, err := workload.NewPlan(sc)
	if err != nil {
		return sc, nil, configError{err}
	}
	// The gates' expressions belong to the gates package, not to the
	// scenario's schema: they are checked here, against the plan's phases.
	if sc.Gates != nil {
		if _, err := parseGates(path, sc.Gates, nil, phaseNames(plan)); err != nil {
			return sc, nil, configError{err}
		}
	}
	return sc, plan, nil
}

// phaseNames lists the plan's phases, for gates that name one.
func phaseNames(plan *workload.Plan) []string {
	var names []string
	for _, ph := range plan.Phases() {
		names = append(names, ph.Name)
	}
	return names
}

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
			var errs []error
			for _, path := range args {
				sc, plan, err := loadPlan(path, sets)
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
	addSetFlag(cmd, &sets)
	return cmd
}

// addSetFlag adds --set FIELD=VALUE, repeatable, to a command that loads a
// scenario.
func addSetFlag(cmd *cobra.Command, sets *[]string) {
	cmd.Flags().StringArrayVar(sets, "set", nil,
		"override a scenario field (repeatable), e.g. --set workload.rate=20 --set 'workload.prompt_tokens={dist: uniform, min: 64, max: 512}'; an empty value unsets it")
}
