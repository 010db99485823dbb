package sim

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/llmbench-org/llmbench/selfmon"
)

// ServeOptions are the settings of the built-in engine served alone
// (`llmbench serve`), which is also how a run starts it in a child process.
type ServeOptions struct {
	Addr, Dialect, Preset, Model string
	Params, Faults               []string // key=value overrides of the preset and of the faults
	Truth, Steps, TraceLog       string   // files for per-request truth, per-step truth, FastDeploy's trace log
	Grace                        time.Duration
	OTLPTracesEndpoint           string // --otlp-traces-endpoint (otlp.go)
	SGLangExport                 SGLangExportFlags
	APIKeyEnv                    string // --api-key-env: the variable holding the key to require (apikey.go)
}

// Bind defines the options' flags on fs, with their defaults. The command
// line and the tests that act as `llmbench serve` read the same flags.
func (o *ServeOptions) Bind(fs *flag.FlagSet) {
	fs.StringVar(&o.Addr, "addr", "127.0.0.1:30000", "listen address (host:port; port 0 picks a free one)")
	fs.StringVar(&o.Dialect, "dialect", DialectSGLang, "metrics dialect and id conventions: "+strings.Join(Dialects, ", "))
	fs.StringVar(&o.Preset, "preset", "", "performance preset ("+DefaultPreset+" when empty)")
	fs.StringVar(&o.Model, "model", "", "served model name (default "+DefaultModel+")")
	fs.Var((*repeated)(&o.Params), "param", "override a performance parameter, key=value (repeatable)")
	fs.Var((*repeated)(&o.Faults), "fault", "inject a fault, key=value (repeatable)")
	fs.StringVar(&o.Truth, "truth", "", "append per-request ground truth to this JSONL file")
	fs.StringVar(&o.Steps, "steps-truth", "", "append per-forward-pass ground truth to this JSONL file")
	fs.StringVar(&o.TraceLog, "trace-log", "", "fastdeploy dialect: write trace_logger.log lines to this file")
	fs.StringVar(&o.OTLPTracesEndpoint, "otlp-traces-endpoint", "", "export each request's spans (vLLM's llm_request; SGLang's request spans in the sglang dialect) to this OTLP/HTTP protobuf URL (http://host:port/v1/traces)")
	o.SGLangExport.bind(fs)
	fs.StringVar(&o.APIKeyEnv, "api-key-env", "", "require the API key this environment variable holds, as the engine's --api-key does (a variable, so the key is not on the command line)")
	fs.DurationVar(&o.Grace, "grace", 30*time.Second, "how long in-flight requests may run after a stop signal")
}

// repeated is a flag that may be given many times; each value is kept.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }
func (r *repeated) Type() string       { return "stringArray" } // as pflag names a repeatable string

// Config turns the options into an engine configuration, checking everything.
func (o *ServeOptions) Config() (Config, error) {
	if !slices.Contains(Dialects, o.Dialect) {
		return Config{}, fmt.Errorf("--dialect %q: want %s", o.Dialect, orList(Dialects))
	}
	p, err := Preset(o.Preset)
	if err != nil {
		return Config{}, fmt.Errorf("--preset: %w", err)
	}
	if p, err = WithParamOverrides(p, o.Params); err != nil {
		return Config{}, fmt.Errorf("--param: %w", err)
	}
	if err := p.Validate(); err != nil {
		return Config{}, fmt.Errorf("--param: %w", err)
	}
	faults, err := WithFaultOverrides(Faults{}, o.Faults)
	if err != nil {
		return Config{}, fmt.Errorf("--fault: %w", err)
	}
	if err := faults.Validate(); err != nil {
		return Config{}, fmt.Errorf("--fault: %w", err)
	}
	if o.TraceLog != "" && o.Dialect != DialectFastDeploy {
		return Config{}, errors.New("--trace-log needs --dialect fastdeploy")
	}
	if o.Grace < 0 {
		return Config{}, fmt.Errorf("--grace %v: must be >= 0", o.Grace)
	}
	var key string
	if o.APIKeyEnv != "" {
		if key = os.Getenv(o.APIKeyEnv); key == "" {
			return Config{}, fmt.Errorf("--api-key-env %s: the variable is not set", o.APIKeyEnv)
		}
	}
	exportDir, err := o.SGLangExport.dir(o.Dialect)
	if err != nil {
		return Config{}, err
	}
	return Config{
		Addr: o.Addr, Dialect: o.Dialect, Model: o.Model, Params: p, Faults: faults,
		TruthPath: o.Truth, StepTruthPath: o.Steps, TraceLogPath: o.TraceLog, OTLPTracesEndpoint: o.OTLPTracesEndpoint, APIKey: key,
		SGLangExportDir: exportDir,
		// Nobody reads the truth in memory here; the truth file gets all of it.
		MaxRequestTruth: -1, MaxStepTruth: -1,
	}, nil
}

// orList spells a list of choices "a, b or c".
func orList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// Serve runs the engine until ctx ends or a signal arrives on sigs, then
// stops it within grace; a second signal cuts the in-flight requests at once.
// It says what it serves, and when it stops, on out.
func Serve(ctx context.Context, cfg Config, grace time.Duration, out io.Writer, sigs <-chan os.Signal) error {
	e, err := New(cfg)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	ep, err := e.Start(ctx)
	if err != nil {
		_ = e.Stop(context.Background())
		return fmt.Errorf("serve: %w", err)
	}
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

// ServeArgs is `llmbench serve ARGS` for a program that stands in for the
// llmbench executable as a run's child engine (a test binary, a benchmark
// command): the same flags, the collector kept out of the truth stamps as
// `llmbench serve` keeps it (selfmon.QuietGC), SIGINT and SIGTERM to stop.
// It returns the process's exit code: 2 for flags it refuses, 1 when the
// engine fails.
func ServeArgs(args []string, stdout, stderr io.Writer) int {
	var o ServeOptions
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o.Bind(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := o.Config()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	restore, _ := selfmon.QuietGC(os.Getenv)
	defer restore()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := Serve(context.Background(), cfg, o.Grace, stdout, sigs); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}
