package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/engine/sim"
)

// serveOpts are the flags of `llmbench serve`.
type serveOpts struct {
	addr, dialect, preset, model string
	params, faults               []string
	truth, steps, traceLog       string
	grace                        time.Duration
}

// newServeCmd is `llmbench serve`: the built-in simulated engine alone, so
// any OpenAI client can talk to it.
func newServeCmd() *cobra.Command {
	var o serveOpts
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
		// Arguments and the combined configuration are checked before running;
		// their errors say "invalid argument" so the CLI maps them to usage (exit 2).
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("invalid argument %q: serve takes no arguments", args[0])
			}
			if _, err := o.config(); err != nil {
				return fmt.Errorf("invalid argument: %w", err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := o.config()
			if err != nil {
				return err
			}
			return serve(cmd.Context(), cmd, cfg, o.grace, nil)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:30000", "listen address (host:port; port 0 picks a free one)")
	f.StringVar(&o.dialect, "dialect", sim.DialectSGLang, "metrics dialect and id conventions: sglang, vllm or fastdeploy")
	f.StringVar(&o.preset, "preset", "", "performance preset ("+sim.DefaultPreset+" when empty)")
	f.StringVar(&o.model, "model", "", "served model name (default "+sim.DefaultModel+")")
	f.StringArrayVar(&o.params, "param", nil, "override a performance parameter, key=value (repeatable)")
	f.StringArrayVar(&o.faults, "fault", nil, "inject a fault, key=value (repeatable)")
	f.StringVar(&o.truth, "truth", "", "append per-request ground truth to this JSONL file")
	f.StringVar(&o.steps, "steps-truth", "", "append per-forward-pass ground truth to this JSONL file")
	f.StringVar(&o.traceLog, "trace-log", "", "fastdeploy dialect: write trace_logger.log lines to this file")
	f.DurationVar(&o.grace, "grace", 30*time.Second, "how long in-flight requests may run after a stop signal")
	return cmd
}

// config turns the flags into an engine configuration, checking everything.
func (o *serveOpts) config() (sim.Config, error) {
	if !slices.Contains([]string{sim.DialectSGLang, sim.DialectVLLM, sim.DialectFastDeploy}, o.dialect) {
		return sim.Config{}, fmt.Errorf("--dialect %q: want sglang, vllm or fastdeploy", o.dialect)
	}
	p, err := sim.Preset(o.preset)
	if err != nil {
		return sim.Config{}, fmt.Errorf("--preset: %w", err)
	}
	if p, err = sim.WithParamOverrides(p, o.params); err != nil {
		return sim.Config{}, fmt.Errorf("--param: %w", err)
	}
	if err := p.Validate(); err != nil {
		return sim.Config{}, fmt.Errorf("--param: %w", err)
	}
	faults, err := sim.WithFaultOverrides(sim.Faults{}, o.faults)
	if err != nil {
		return sim.Config{}, fmt.Errorf("--fault: %w", err)
	}
	if err := faults.Validate(); err != nil {
		return sim.Config{}, fmt.Errorf("--fault: %w", err)
	}
	if o.traceLog != "" && o.dialect != sim.DialectFastDeploy {
		return sim.Config{}, errors.New("--trace-log needs --dialect fastdeploy")
	}
	if o.grace < 0 {
		return sim.Config{}, fmt.Errorf("--grace %v: must be >= 0", o.grace)
	}
	return sim.Config{
		Addr: o.addr, Dialect: o.dialect, Model: o.model, Params: p, Faults: faults,
		TruthPath: o.truth, StepTruthPath: o.steps, TraceLogPath: o.traceLog,
		// Nobody reads the truth in memory here; --truth gets all of it.
		MaxRequestTruth: -1, MaxStepTruth: -1,
	}, nil
}

// serve runs the engine until ctx ends or a signal arrives (sigs nil = the
// process's SIGINT and SIGTERM), then stops it within grace; a second signal
// cuts the in-flight requests at once.
func serve(ctx context.Context, cmd *cobra.Command, cfg sim.Config, grace time.Duration, sigs <-chan os.Signal) error {
	if sigs == nil {
		ch := make(chan os.Signal, 2)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(ch)
		sigs = ch
	}
	e, err := sim.New(cfg)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	ep, err := e.Start(ctx)
	if err != nil {
		_ = e.Stop(context.Background())
		return fmt.Errorf("serve: %w", err)
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "llmbench serve: %s dialect, model %q, max %d running requests, KV %d tokens\n",
		ep.Dialect, ep.Model, cfg.Params.MaxRunningRequests, cfg.Params.KVCapacityTokens())
	fmt.Fprintf(out, "listening on %s  (metrics %s)\n", ep.BaseURL, ep.MetricsURL)

	select {
	case <-ctx.Done():
	case <-sigs:
	}
	fmt.Fprintf(out, "stopping: in-flight requests have %v to finish (signal again to cut them)\n", grace)
	stopCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-stopCtx.Done():
		}
	}()
	if err := e.Stop(stopCtx); err != nil {
		return fmt.Errorf("serve: stop: %w", err)
	}
	fmt.Fprintln(out, "stopped")
	return nil
}
