package main

import "github.com/spf13/cobra"

type cobraCommand = cobra.Command

// The commands under test, wrapped in a root so that args start with the
// command's name, as on the command line.
func newPlanCmdForTest() *cobra.Command     { return testRoot(newPlanCmd()) }
func newValidateCmdForTest() *cobra.Command { return testRoot(newValidateCmd()) }

func testRoot(sub *cobra.Command) *cobra.Command {
	root := &cobra.Command{Use: "llmbench", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(sub)
	return root
}
