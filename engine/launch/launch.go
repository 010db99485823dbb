// Package launch starts a real engine under test — SGLang, vLLM, FastDeploy,
// llama.cpp or any command — as a child process of llmbench: it builds the
// command line, picks free loopback ports, sends stdout and stderr to
// engine.log, waits until the engine answers, and stops it with its whole
// process group so that nothing outlives the run.
//
// It measures nothing: the Endpoint it returns says where the engine answers,
// where its /metrics are and which metric dialect they speak.
package launch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llmbench-org/llmbench/engine"
	"github.com/llmbench-org/llmbench/engines"
)

// Kinds of engine llmbench can launch: every engine family with a launch
// command (package engines; Kinds lists them), and any command.
const (
	KindSGLang     = engines.SGLang
	KindVLLM       = engines.VLLM
	KindFastDeploy = engines.FastDeploy
	KindLlamaCpp   = engines.LlamaCpp
	KindCommand    = "command"
)

// DefaultReady is how long Start waits for readiness when Config.Ready is 0:
// loading a large model's weights takes minutes.
const DefaultReady = 10 * time.Minute

// failedStartGrace is how long a Start that fails gives the engine to exit
// after SIGTERM before its process group is killed.
const failedStartGrace = 10 * time.Second

// Config says which engine to launch and how.
//
// Command, Extra and the values of Env may name placeholders, replaced when
// the engine starts: {host}, {port}, {metrics_port} and {model}. Any other
// text in braces (e.g. a JSON argument) is left alone.
type Config struct {
	// Kind is an engine family with a launch command (package engines,
	// whose family files hold what follows; Kinds lists them) or command. It
	// decides the default command line, the metric dialect, where /metrics
	// is served and which path answers 200 once the engine is ready:
	//
	//	sglang      python3 -m sglang.launch_server --model-path {model} --host {host} --port {port} --enable-metrics
	//	            dialect sglang, /metrics on the API port, ready: GET /health
	//	vllm        vllm serve {model} --host {host} --port {port}
	//	            dialect vllm, /metrics on the API port, ready: GET /health
	//	fastdeploy  python3 -m fastdeploy.entrypoints.openai.api_server --model {model} --host {host} --port {port} --metrics-port {metrics_port}
	//	            dialect fastdeploy, /metrics on the metrics port, ready: GET /health
	//	llamacpp    llama-server -m {model} --host {host} --port {port} --metrics
	//	            dialect llamacpp, /metrics on the API port, ready: GET /health
	//	command     Command (required)
	//	            dialect "" (detect from /metrics), /metrics on the API port, ready: GET /v1/models
	Kind string
	// Command is the engine's argv. For the named kinds it replaces the
	// default command line (e.g. to run the engine through a container or a
	// specific interpreter) and the kind still decides dialect, metrics and
	// readiness; for kind command it is required.
	Command []string
	// Model is the model to load: a path or a hub name. Required by the
	// default command line of the named kinds. Requests carry the first
	// model id the engine lists at /v1/models, or Model when it lists none.
	Model string
	// Host is the address the engine listens on and llmbench connects to;
	// "" = 127.0.0.1. A wildcard (0.0.0.0, ::) is passed to the engine as is
	// and reached over loopback.
	Host string
	// Port is the engine's API port; 0 = pick a free port and pass it to the
	// engine. A port given here must be free when Start runs, or a readiness
	// probe could be answered by whatever else holds it.
	Port int
	// MetricsPort is the port of /metrics when the engine serves them apart
	// from the API. fastdeploy: 0 = pick a free one and pass it with
	// --metrics-port. command: 0 = the API port, unless Command, Extra or Env
	// names {metrics_port}, in which case a free port is picked. The other
	// kinds serve /metrics on the API port; a MetricsPort set for them is
	// where llmbench scrapes (pass the engine's flag in Extra).
	MetricsPort int
	// Env is added to llmbench's environment for the engine, KEY=value;
	// later entries win. PATH set here is also where the program is looked
	// up. PYTHONUNBUFFERED=1 is set unless Env says otherwise, so Python
	// engines write engine.log as they go.
	Env []string
	// Extra arguments are appended to the command line.
	Extra []string
	// Ready is how long Start waits for the engine to answer; 0 = DefaultReady.
	Ready time.Duration
	// LogPath is the file the engine's stdout and stderr go to (appended;
	// engine.log in the run directory). "" = none; the last lines are kept
	// in memory for error messages either way.
	LogPath string
	// LogHead and LogTail bound LogPath (bytes): it keeps the first LogHead
	// bytes of the engine's output and the last LogTail at most (at least
	// half of it), and notes what it dropped between them. 0 =
	// DefaultLogHead, DefaultLogTail.
	LogHead, LogTail int64
	// Dir is the engine's working directory; "" = llmbench's.
	Dir string
	// Dialect overrides the kind's metric dialect ("" = the kind's).
	Dialect string
	// ReadyPath overrides the path probed for readiness, e.g. /health for a
	// command that has one ("" = the kind's).
	ReadyPath string
	// NoMetrics says the engine serves no /metrics (e.g. Ollama): the
	// Endpoint's MetricsURL stays empty.
	NoMetrics bool
	// APIKey, if set, is sent as a bearer token with the readiness probe and
	// the /v1/models request (an engine started with --api-key refuses them
	// otherwise). It is not passed to the engine: put that flag in Extra.
	APIKey string
}

// Engine is a real engine that llmbench launches. Create it with New.
type Engine struct {
	cfg  Config
	spec kindSpec

	mu          sync.Mutex
	state       runState
	proc        *process
	startFailed bool
	daemonNoted bool // Start found the launch command daemonized, and said so
}

type runState int

const (
	stateNew runState = iota
	stateStarting
	stateRunning
	stateStopped
)

var _ engine.Engine = (*Engine)(nil)

// New checks cfg and fills its defaults. Nothing starts until Start.
func New(cfg Config) (*Engine, error) {
	spec, err := specFor(cfg.Kind)
	if err != nil {
		return nil, err
	}
	if err := validate(cfg); err != nil {
		return nil, fmt.Errorf("launch %s: %w", cfg.Kind, err)
	}
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.Ready == 0 {
		cfg.Ready = DefaultReady
	}
	if cfg.Dialect != "" {
		spec.dialect = cfg.Dialect
	}
	if cfg.ReadyPath != "" {
		spec.readyPath = cfg.ReadyPath
	}
	return &Engine{cfg: cfg, spec: spec}, nil
}

// validate returns every problem of cfg at once.
func validate(cfg Config) error {
	var errs []error
	if cfg.Kind == KindCommand && len(cfg.Command) == 0 {
		errs = append(errs, errors.New("command: required for kind command"))
	}
	if len(cfg.Command) > 0 && cfg.Command[0] == "" {
		errs = append(errs, errors.New("command: the program (first element) is empty"))
	}
	if cfg.Kind != KindCommand && len(cfg.Command) == 0 && cfg.Model == "" {
		errs = append(errs, fmt.Errorf("model: required by the default %s command line", cfg.Kind))
	}
	if strings.ContainsAny(cfg.Host, "/ \t") {
		errs = append(errs, fmt.Errorf("host %q: want an address or a name, not a URL", cfg.Host))
	} else if _, _, err := net.SplitHostPort(cfg.Host); err == nil {
		errs = append(errs, fmt.Errorf("host %q: carries a port; set the port apart", cfg.Host))
	}
	for _, p := range []struct {
		name string
		v    int
	}{{"port", cfg.Port}, {"metrics_port", cfg.MetricsPort}} {
		if p.v < 0 || p.v > 65535 {
			errs = append(errs, fmt.Errorf("%s %d: want 0 (pick a free one) to 65535", p.name, p.v))
		}
	}
	if cfg.NoMetrics && cfg.MetricsPort != 0 {
		errs = append(errs, errors.New("metrics_port: set, but no_metrics says there are none"))
	}
	if cfg.LogHead < 0 || cfg.LogTail < 0 {
		errs = append(errs, fmt.Errorf("log bounds %d, %d: want bytes >= 0 (0: the default)", cfg.LogHead, cfg.LogTail))
	}
	if cfg.Ready < 0 {
		errs = append(errs, fmt.Errorf("ready %v: must be >= 0", cfg.Ready))
	}
	if cfg.ReadyPath != "" && !strings.HasPrefix(cfg.ReadyPath, "/") {
		errs = append(errs, fmt.Errorf("ready_path %q: must start with /", cfg.ReadyPath))
	}
	for _, kv := range cfg.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			errs = append(errs, fmt.Errorf("env %q: want KEY=value", kv))
		}
	}
	return errors.Join(errs...)
}

// Start launches the engine and waits until its readiness probe answers 200.
// It fails fast, with the last lines of the engine's output, if the engine
// exits first; after Config.Ready it gives up. A Start that fails, or whose
// ctx ends, leaves no process behind.
func (e *Engine) Start(ctx context.Context) (engine.Endpoint, error) {
	e.mu.Lock()
	switch e.state {
	case stateStarting, stateRunning:
		e.mu.Unlock()
		return engine.Endpoint{}, fmt.Errorf("launch %s: already started", e.cfg.Kind)
	case stateStopped:
		e.mu.Unlock()
		return engine.Endpoint{}, fmt.Errorf("launch %s: stopped; create a new Engine", e.cfg.Kind)
	}
	e.state = stateStarting
	e.mu.Unlock()

	ep, p, err := e.start(ctx)

	e.mu.Lock()
	if e.state == stateStopped { // Stop ran meanwhile; its error is its own
		err = fmt.Errorf("launch %s: stopped before the engine was ready", e.cfg.Kind)
	}
	if err == nil {
		e.state = stateRunning
		e.mu.Unlock()
		return ep, nil
	}
	e.state, e.startFailed = stateStopped, true
	e.mu.Unlock()
	if p != nil {
		// The engine must not outlive a failed start: nobody calls Stop then.
		stopCtx, cancel := context.WithTimeout(context.Background(), failedStartGrace)
		defer cancel()
		_ = p.stop(stopCtx)
		// Only now is the output complete: the group is gone and its pipe drained.
		var te *tailError
		if errors.As(err, &te) {
			err = fmt.Errorf("%w; %s", te.err, p.tailMessage())
		}
	}
	return engine.Endpoint{}, err
}

// tailError is an error whose explanation is in the engine's last lines of
// output, which Start appends once they have all been read.
type tailError struct{ err error }

func (t *tailError) Error() string { return t.err.Error() }
func (t *tailError) Unwrap() error { return t.err }

// start spawns the process and waits for readiness. p is non-nil once a
// process exists, even when err is not.
func (e *Engine) start(ctx context.Context) (engine.Endpoint, *process, error) {
	kind := e.cfg.Kind
	ports, err := e.resolvePorts()
	if err != nil {
		return engine.Endpoint{}, nil, fmt.Errorf("launch %s: %w", kind, err)
	}
	argv := e.argv(ports)
	env := e.env(ports)
	path, err := lookPath(argv[0], env, e.cfg.Dir)
	if err != nil {
		return engine.Endpoint{}, nil, fmt.Errorf("launch %s: %w", kind, err)
	}
	p, err := spawn(path, argv, env, e.cfg.Dir, logSpec{e.cfg.LogPath, e.cfg.LogHead, e.cfg.LogTail}, e.cfg.APIKey)
	if err != nil {
		return engine.Endpoint{}, nil, fmt.Errorf("launch %s: %w", kind, err)
	}
	e.mu.Lock()
	e.proc = p
	stopped := e.state == stateStopped
	e.mu.Unlock()
	if stopped { // Stop ran before the process existed: it could not stop it
		return engine.Endpoint{}, p, fmt.Errorf("launch %s: stopped while starting", kind)
	}

	ep := e.endpoint(ports)
	probe := e.url(ports.api, e.spec.readyPath)
	watch, unwatch := context.WithCancel(ctx)
	defer unwatch()
	if err := waitReady(ctx, p.lifeline(watch), probe, e.cfg.APIKey, e.cfg.Ready); err != nil {
		var notReady *notReadyError
		switch {
		case errors.Is(err, errExited) && e.answersSoon(ctx, p, ports.api):
			// Nothing of the engine's runs, yet its port answers.
			if _, err := p.daemon(ports.api); err != nil {
				return ep, p, &tailError{fmt.Errorf("launch %s: %w", kind, err)}
			}
			// Provably the engine's after all, but only once the wait had ended.
			return ep, p, &tailError{fmt.Errorf("launch %s: engine exited %s, and its server answered on port %d only after llmbench had stopped waiting", kind, p.exitDescription(), ports.api)}
		case errors.Is(err, errExited) && p.exitedOK():
			return ep, p, &tailError{fmt.Errorf("launch %s: engine exited %s before it was ready, leaving no process that carries this launch's id (%s) and nothing on port %d (a server the command started in the background without that id in its environment cannot be told from another's: run it in the foreground)",
				kind, p.exitDescription(), launchIDEnv, ports.api)}
		case errors.Is(err, errExited):
			return ep, p, &tailError{fmt.Errorf("launch %s: engine exited %s before it was ready", kind, p.exitDescription())}
		case errors.As(err, &notReady):
			return ep, p, &tailError{fmt.Errorf("launch %s: engine not ready after %v (%s)", kind, e.cfg.Ready, notReady.lastProbe())}
		default:
			return ep, p, fmt.Errorf("launch %s: waiting for the engine to be ready: %w", kind, err)
		}
	}
	if p.leaderExited() { // the launch command daemonized
		note, err := p.daemon(ports.api)
		if err != nil {
			return ep, p, fmt.Errorf("launch %s: %w", kind, err)
		}
		p.log.note("llmbench: " + note + "\n")
		ep.Notes = append(ep.Notes, note)
		e.mu.Lock()
		e.daemonNoted = true
		e.mu.Unlock()
	}
	if id := firstModelID(ctx, e.url(ports.api, "/v1/models"), e.cfg.APIKey); id != "" {
		ep.Model = id
	}
	return ep, p, nil
}

// Stop ends the engine: SIGTERM to its process group, then SIGKILL when ctx
// ends before the group is gone. It returns an error when the group had to be
// killed, or when the engine had exited on its own during the run (a crash
// the run should know of). Stop before Start, after a failed Start, or twice
// is harmless.
func (e *Engine) Stop(ctx context.Context) error {
	e.mu.Lock()
	p, failed := e.proc, e.startFailed
	e.state = stateStopped
	e.mu.Unlock()
	if p == nil {
		return nil
	}
	err := p.stop(ctx)
	if failed {
		return nil // Start already said what went wrong
	}
	if err != nil {
		return fmt.Errorf("launch %s: %w", e.cfg.Kind, err)
	}
	return nil
}

// ports are the resolved ports of one start.
type ports struct {
	api, metrics int // metrics = 0: no /metrics
}

// resolvePorts picks free ports where the config leaves them to llmbench and
// checks that fixed ones are free.
func (e *Engine) resolvePorts() (ports, error) {
	host := e.cfg.Host
	p := ports{api: e.cfg.Port, metrics: e.cfg.MetricsPort}
	separate := e.spec.metricsPort || e.mentions("{metrics_port}")
	var want int
	if p.api == 0 {
		want++
	}
	if p.metrics == 0 && separate && !e.cfg.NoMetrics {
		want++
	}
	free, err := freePorts(host, want)
	if err != nil {
		return ports{}, err
	}
	for _, fixed := range []int{e.cfg.Port, e.cfg.MetricsPort} {
		if fixed != 0 {
			if err := portFree(host, fixed); err != nil {
				return ports{}, err
			}
		}
	}
	if p.api == 0 {
		p.api, free = free[0], free[1:]
	}
	if p.metrics == 0 && len(free) > 0 {
		p.metrics = free[0]
	}
	if p.metrics == 0 && !e.cfg.NoMetrics {
		p.metrics = p.api
	}
	if e.cfg.NoMetrics {
		p.metrics = 0
	}
	return p, nil
}

// mentions reports whether the command line or the environment names a placeholder.
func (e *Engine) mentions(placeholder string) bool {
	for _, list := range [][]string{e.cfg.Command, e.cfg.Extra, e.cfg.Env} {
		for _, s := range list {
			if strings.Contains(s, placeholder) {
				return true
			}
		}
	}
	return false
}

// expander replaces the placeholders of one start.
func (e *Engine) expander(p ports) *strings.Replacer {
	mp := ""
	if p.metrics != 0 {
		mp = strconv.Itoa(p.metrics)
	}
	return strings.NewReplacer(
		"{host}", e.cfg.Host,
		"{port}", strconv.Itoa(p.api),
		"{metrics_port}", mp,
		"{model}", e.cfg.Model,
	)
}

// argv is the command line of one start: Command or the kind's default, then
// Extra, with placeholders replaced.
func (e *Engine) argv(p ports) []string {
	tmpl := e.cfg.Command
	if len(tmpl) == 0 {
		tmpl = e.spec.argv
	}
	r := e.expander(p)
	out := make([]string, 0, len(tmpl)+len(e.cfg.Extra))
	for _, s := range tmpl {
		out = append(out, r.Replace(s))
	}
	for _, s := range e.cfg.Extra {
		out = append(out, r.Replace(s))
	}
	return out
}

// env is the engine's environment: llmbench's, unbuffered Python output,
// then Config.Env with placeholders replaced (later entries win).
func (e *Engine) env(p ports) []string {
	r := e.expander(p)
	env := append(environ(), "PYTHONUNBUFFERED=1")
	for _, kv := range e.cfg.Env {
		env = append(env, r.Replace(kv))
	}
	return env
}

// endpoint is where the engine answers once ready (Model before discovery).
func (e *Engine) endpoint(p ports) engine.Endpoint {
	ep := engine.Endpoint{
		BaseURL: e.url(p.api, "/v1"),
		Dialect: e.spec.dialect,
		Model:   e.cfg.Model,
	}
	if p.metrics != 0 {
		ep.MetricsURL = e.url(p.metrics, "/metrics")
	}
	return ep
}

// url is an http URL on the engine's host; a wildcard listen address is
// reached over loopback.
func (e *Engine) url(port int, path string) string {
	return "http://" + net.JoinHostPort(connectHost(e.cfg.Host), strconv.Itoa(port)) + path
}

// connectHost is the address to reach an engine listening on host.
func connectHost(host string) string {
	switch host {
	case "", "0.0.0.0":
		return "127.0.0.1"
	case "::", "[::]":
		return "::1"
	}
	return strings.Trim(host, "[]")
}
