package main

import (
	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/run"
)

func newMergeCmd(cio *cliIO) *cobra.Command {
	return &cobra.Command{
		Use:   "merge OUT_DIR SHARD_RUN_DIR...",
		Short: "Merge the runs of the shards of one run (run --shard i/n) into one run directory and summarise it",
		Long: `Merge the run directories of the n shards of one run (llmbench run --shard i/n,
started together with --start-at) into OUT_DIR, as if one generator had sent
every request, and summarise it. Each SHARD_RUN_DIR is a shard's run
directory, or a directory holding them up to two levels down (the volume
every shard of a Kubernetes Job wrote into). An engine every shard scraped
counts once; distinct engines (each shard's own) add up.`,
		Example: `  llmbench merge merged/ runs-0/20261202T100000Z-chat-shard0of2 runs-1/20261202T100000Z-chat-shard1of2
  llmbench merge /results/bench-1/merged /results/bench-1`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return run.Merge(args[0], args[1:], cio.stdout) },
	}
}
