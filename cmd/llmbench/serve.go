package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/llmbench-org/llmbench/selfmon"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/engine/sim"
)

// newServeCmd is `llmbench serve`: the built-in simulated engine alone, so
// any OpenAI client can talk to it.
func newServeCmd() *cobra.Command {
	var o sim.ServeOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the built-in simulated engine alone (OpenAI-compatible API and /metrics)",
		Long: `Run the built-in simulated engine until SIGINT or SIGTERM, then stop
gracefully: no new requests, in-flight streams run to their end within --grace
(a second signal cuts them).

Every performance parameter of the preset can be overridden with --param
key=value (YAML names, e.g. decode_base=4ms, max_running_requests=64), and
faults injected with --fault key=value (e.g. error_rate=0.05, stall_rate=0.1,
stall_for=2s). Presets: ` + fmt.Sprint(sim.PresetNames()) + `.`,
		Example: `  llmbench serve --addr 127.0.0.1:30000 --dialect sglang --preset tiny
  llmbench serve --dialect vllm --param decode_base=8ms --fault error_rate=0.01`,
		// Arguments and the combined configuration are checked before running
		// (a usage error, exit 2).
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("invalid argument %q: serve takes no arguments", args[0])
			}
			if _, err := o.Config(); err != nil {
				return fmt.Errorf("invalid argument: %w", err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := o.Config()
			if err != nil {
				return err
			}
			// Truth is stamped right after each flush: the collector stays
			// out of it without letting memory grow (docs/decisions/0004).
			restore, _ := selfmon.QuietGC(os.Getenv)
			defer restore()
			sigs := make(chan os.Signal, 2)
			signal.Notify(sigs, stopSignals...)
			defer signal.Stop(sigs)
			return sim.Serve(cmd.Context(), cfg, o.Grace, cmd.OutOrStdout(), sigs)
		},
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	o.Bind(fs)
	cmd.Flags().AddGoFlagSet(fs)
	return cmd
}
