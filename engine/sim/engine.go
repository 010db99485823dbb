// Package sim is the built-in simulated LLM engine: an OpenAI-compatible HTTP
// server whose answers come from a real-time continuous-batching model
// (package batch), exposing /metrics in the dialect of SGLang, vLLM or
// FastDeploy, and recording the ground truth of every request and every
// forward pass so that llmbench's own measurements can be checked.
//
// Timing: the loop goroutine runs forward passes back to back, sleeping for
// each pass's modeled duration; at the end of a pass it hands each request's
// new tokens to that request's handler goroutine, which writes and flushes one
// SSE chunk per pass. Truth times are offsets on the engine's monotonic clock.
//
// Behaviours of real engines a client meets, each off by default and each in
// the ground truth (RequestTruth):
//   - dialect "llamacpp": llama.cpp's /metrics (fifteen hand-written series,
//     six significant digits, cache-aware prompt counter, whole-microsecond
//     times; decision 2200), chatcmpl-<32 alphanumerics> ids, the timings object, a
//     Keep-Alive policy (timeout=5, max=100), /tokenize {"content"} and
//     /apply-template; vLLM and SGLang serve /tokenize {"prompt"|"messages"};
//   - Params.ChatTemplateTokens and ChatTemplateMessageTokens: the chat
//     template's prompt tokens, which /apply-template and /tokenize agree on;
//   - Params.ReasoningTokens and ToolCallRate: reasoning_content, then
//     content or a streamed tool call (finish_reason "tool_calls");
//   - Params.StreamInterval: several tokens per chunk; speculative decoding
//     puts a pass's accepted tokens in one chunk; RequestTruth.ChunkTokens
//     says how many; stream_options.continuous_usage_stats is honoured;
//   - Params.NoDone, SSEPing, KeepAliveTimeout, KeepAliveMax, and
//     Faults.StreamErrorRate (an error event mid-stream);
//   - /v1/completions, streamed or not, beside /v1/chat/completions.
package sim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/engine"
	"github.com/llmbench-org/llmbench/engine/sim/batch"
	"github.com/llmbench-org/llmbench/engines"
)

// Dialects: the engine families (package engines) the built-in engine
// speaks.
const (
	DialectSGLang     = engines.SGLang
	DialectVLLM       = engines.VLLM
	DialectFastDeploy = engines.FastDeploy
	DialectLlamaCpp   = engines.LlamaCpp
)

// Dialects lists the dialects New accepts: those of the engine families
// marked Sim (engines.Simulated), which a test keeps equal.
var Dialects = []string{DialectSGLang, DialectVLLM, DialectFastDeploy, DialectLlamaCpp}

// DefaultModel is the served model name when Config.Model is empty.
const DefaultModel = "llmbench-sim"

// Config configures an Engine.
type Config struct {
	Addr    string // listen address for Start; "" = "127.0.0.1:0"
	Dialect string // "sglang" (default) | "vllm" | "fastdeploy" | "llamacpp"
	Model   string // served model name; "" = DefaultModel
	Params  Params
	Faults  Faults
	// APIKey, if set, is required of requests as the engine's --api-key
	// requires it, on the paths it guards (apikey.go).
	APIKey string
	// OTLPTracesEndpoint, if set, is the OTLP/HTTP traces URL the engine
	// exports one vLLM llm_request span per finished request to (otlp.go),
	// as vLLM's --otlp-traces-endpoint.
	OTLPTracesEndpoint string
	// TruthPath, if set, receives one JSON line per finished request (RequestTruth).
	TruthPath string
	// StepTruthPath, if set, receives one JSON line per forward pass (StepTruth).
	StepTruthPath string
	// TraceLogPath is where the fastdeploy dialect writes trace_logger.log lines ("" = none).
	TraceLogPath string
	// SGLangExportDir is where the sglang dialect writes SGLang's
	// per-request metrics export, as --export-metrics-to-file-dir ("" =
	// none; sglangexport.go).
	SGLangExportDir string
	// MaxStepTruth caps the forward passes kept in memory for Steps (0 = 100,000).
	MaxStepTruth int
	// MaxRequestTruth caps the requests kept in memory for Truth (0 =
	// 1,000,000; negative = none, e.g. for a long-running serve that writes
	// TruthPath). Requests past the cap still go to TruthPath.
	MaxRequestTruth int
}

// Engine is the simulated engine. Create it with New; Start serves it on a
// socket, Handler serves it from any http.Server; Stop ends it.
type Engine struct {
	cfg     Config
	epoch   time.Time
	sched   *batch.Scheduler
	metrics dialectMetrics
	truth   *truthLog
	handler http.Handler

	inMu  sync.Mutex
	inbox []inboxOp
	kick  chan struct{}

	loopOnce sync.Once
	stopLoop chan struct{}
	loopDone chan struct{}
	stopOnce sync.Once
	stopErr  error
	stepIdx  int
	lastEnd  time.Duration // scheduled end of the previous pass; -1 after idling
	active   map[*stream]struct{}
	decodeN  int // decode passes so far (SGLang's forward_ct_decode)

	srvMu     sync.Mutex
	srv       *http.Server
	serveDone chan struct{}
	ids       idSource
	settle    settler

	newMetrics  func() dialectMetrics
	metricsHTTP atomic.Pointer[http.Handler] // the current registry's handler (replaced by a restart)
	scrapes     atomic.Uint64
	downUntil   atomic.Int64 // engine-clock ns until which a restart keeps the engine down
	// dialectSwitchedAt is when /metrics changed family (engine-clock ns; 0 = not yet).
	dialectSwitchedAt atomic.Int64
	restarts          atomic.Int64
	restartNow        chan struct{}
	// gate is the listener when Faults.RestartRefuse is set (nil else);
	// downtimes every restart's downtime so far (ground truth, downtimesMu).
	gate        *gateListener
	downtimesMu sync.Mutex
	downtimes   []Downtime
	// Faults.RestartAtFinished: finishedN counts the current process's
	// finished requests (loop-owned); holding says the loop holds new
	// requests back until a scrape asks for the restart on scrapeRestart
	// (restartHeld mirrors it for the /metrics handler); heldDone says
	// the one restart happened.
	finishedN     int
	holding       bool
	heldDone      bool
	restartHeld   atomic.Bool
	scrapeRestart chan chan http.Handler
	trace         *traceLog
	spans         *spanExporter
	reqExport     *requestExport
	inflight      atomic.Int64 // chat handlers running
	activeConns   atomic.Int64 // connections serving a request (countActive)
	connsMu       sync.Mutex
	conns         map[net.Conn]bool          // each open connection: serving a request now
	closing       map[net.Conn]bool          // connections to close once idle (Params.CloseAfterStream)
	idleSince     map[net.Conn]time.Duration // when each connection last turned idle (engine clock)
	idleCloses    atomic.Int64               // Params.IdleCloseOnReuse closes (ground truth)

	gpu             *gpuMeter       // the emulated DCGM exporter's power model (gpu.go)
	cacheResetC     chan cacheReset // prefix-cache resets for the loop (cachereset.go)
	cacheResetsDone cacheResetCounter
}

var _ engine.Engine = (*Engine)(nil)

// New checks the config and builds an engine. Call Stop to release it.
func New(cfg Config) (*Engine, error) {
	if cfg.Dialect == "" {
		cfg.Dialect = DialectSGLang
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.MaxStepTruth == 0 {
		cfg.MaxStepTruth = 100_000
	}
	if cfg.MaxRequestTruth == 0 {
		cfg.MaxRequestTruth = 1_000_000
	}
	sched, err := batch.New(cfg.Params)
	if err != nil {
		return nil, fmt.Errorf("sim engine: %w", err)
	}
	if err := cfg.Faults.Validate(); err != nil {
		return nil, fmt.Errorf("sim engine: %w", err)
	}
	e := &Engine{
		cfg:           cfg,
		epoch:         time.Now(),
		sched:         sched,
		kick:          make(chan struct{}, 1),
		stopLoop:      make(chan struct{}),
		loopDone:      make(chan struct{}),
		lastEnd:       -1,
		active:        make(map[*stream]struct{}),
		restartNow:    make(chan struct{}, 1),
		scrapeRestart: make(chan chan http.Handler),
		cacheResetC:   make(chan cacheReset, 64),
	}
	e.gpu = newGPUMeter(cfg.Params, e.epoch)
	e.ids = newIDSource(cfg.Params.Seed)
	if e.newMetrics, err = metricsFor(cfg.Dialect, cfg, e.arrivalsPending); err != nil {
		return nil, fmt.Errorf("sim engine: %w", err)
	}
	e.setMetrics(e.newMetrics())
	if cfg.Dialect == DialectFastDeploy {
		if e.trace, err = openTraceLog(cfg.TraceLogPath, e.epoch); err != nil {
			return nil, fmt.Errorf("sim engine: %w", err)
		}
	}
	if cfg.SGLangExportDir != "" && cfg.Dialect != DialectSGLang {
		return nil, fmt.Errorf("sim engine: the SGLang request export needs dialect %s, not %s", DialectSGLang, cfg.Dialect)
	}
	if e.reqExport, err = openRequestExport(cfg.SGLangExportDir, e.epoch); err != nil { // sglangexport.go
		_ = e.trace.close()
		return nil, fmt.Errorf("sim engine: %w", err)
	}
	e.truth, err = openTruthLog(cfg.TruthPath, cfg.StepTruthPath, cfg.MaxStepTruth, cfg.MaxRequestTruth)
	if err != nil {
		_ = e.trace.close()
		return nil, fmt.Errorf("sim engine: %w", err)
	}
	for _, ep := range endpoints.All() {
		switch ep.Kind { // the kinds handleGenerate answers
		case endpoints.KindChat, endpoints.KindCompletion, endpoints.KindResponses, endpoints.KindMessages:
		case endpoints.KindEmbeddings, endpoints.KindRerank: // pooling.go
		default:
			_ = e.trace.close()
			return nil, fmt.Errorf("sim engine: endpoint %q: no handler for kind %q", ep.Name, ep.Kind)
		}
	}
	e.handler = e.routes()
	e.spans = newSpanExporter(cfg.OTLPTracesEndpoint, e.cfg.Model, cfg.Dialect, e.epoch)
	return e, nil
}

// metricsFor returns the constructor of dialect's metric set.
func metricsFor(dialect string, cfg Config, arrivalsPending func() int) (func() dialectMetrics, error) {
	switch dialect {
	case DialectSGLang:
		return func() dialectMetrics { return newSGLangMetrics(cfg.Model, cfg.Params) }, nil
	case DialectVLLM:
		return func() dialectMetrics { return newVLLMMetrics(cfg.Model, cfg.Params, time.Now()) }, nil
	case DialectFastDeploy:
		return func() dialectMetrics { return newFastDeployMetrics(cfg.Params) }, nil
	case DialectLlamaCpp:
		return func() dialectMetrics {
			return newLlamaCppMetrics(time.Now(), cfg.Params.MaxRunningRequests, arrivalsPending)
		}, nil
	}
	return nil, fmt.Errorf("unknown dialect %q (want %s, %s, %s or %s)",
		dialect, DialectSGLang, DialectVLLM, DialectFastDeploy, DialectLlamaCpp)
}

// switchDialect installs Faults.DialectSwitchTo's metric set, which had
// counted DialectSwitchPrior finished requests before (each an empty
// request, received and finished at once), from now on. Called by the loop.
func (e *Engine) switchDialect() {
	f := e.cfg.Faults
	newFn, err := metricsFor(f.DialectSwitchTo, e.cfg, e.arrivalsPending)
	if err != nil {
		panic(err) // validated by New
	}
	m := newFn()
	now := e.now()
	for range f.DialectSwitchPrior {
		s := newStream()
		s.arrival, s.queueEnter, s.queueLeave = now, now, now
		m.received(s)
		m.finished(s, now)
	}
	e.newMetrics = newFn // a later restart restarts the new server
	e.setMetrics(m)
	e.dialectSwitchedAt.Store(int64(now))
}

// DialectSwitchedAt is when /metrics changed family (Faults.DialectSwitchAfter)
// on the engine clock; ok is false before it did.
func (e *Engine) DialectSwitchedAt() (at time.Duration, ok bool) {
	v := e.dialectSwitchedAt.Load()
	return time.Duration(v), v != 0
}

// setMetrics installs a fresh metric set (at start and at a restart).
func (e *Engine) setMetrics(m dialectMetrics) {
	e.metrics = m
	h := m.handler()
	e.metricsHTTP.Store(&h)
}

// Restart simulates an engine restart now (see Faults.RestartEvery): every
// in-flight request loses its connection, the scheduler and every metric
// start from zero, and the engine is down for Faults.RestartDowntime.
func (e *Engine) Restart() {
	select {
	case e.restartNow <- struct{}{}:
	default:
	}
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// Restarts is the number of restarts so far.
func (e *Engine) Restarts() int { return int(e.restarts.Load()) }

// now is the engine clock: an offset from its start, monotonic.
func (e *Engine) now() time.Duration { return time.Since(e.epoch) }

// Handler serves /v1/chat/completions, /v1/completions, /v1/models,
// /health, /metrics, and the dialect's tokenizer endpoints.
// The batching loop starts with the first call.
func (e *Engine) Handler() http.Handler {
	e.startLoop()
	return e.handler
}

func (e *Engine) startLoop() {
	e.loopOnce.Do(func() { go e.run() })
}

// Start listens on Config.Addr and serves until Stop.
func (e *Engine) Start(ctx context.Context) (engine.Endpoint, error) {
	e.srvMu.Lock()
	defer e.srvMu.Unlock()
	if e.srv != nil {
		return engine.Endpoint{}, errors.New("sim engine: already started")
	}
	select {
	case <-e.stopLoop:
		return engine.Endpoint{}, errors.New("sim engine: already stopped")
	default:
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", e.cfg.Addr)
	if err != nil {
		return engine.Endpoint{}, fmt.Errorf("sim engine: listen on %s: %w", e.cfg.Addr, err)
	}
	if e.cfg.Faults.RestartRefuse {
		e.gate = newGateListener(ln, e.cfg.Faults.RestartDowntime)
		ln = e.gate
	}
	e.srv = &http.Server{
		Handler:           e.Handler(),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       5 * time.Minute,
		ConnContext:       connContext,
		ConnState:         e.countActive,
	}
	if idle, _ := e.keepAlive(); idle > 0 && !e.cfg.Params.IdleCloseOnReuse {
		e.srv.IdleTimeout = idle
	}
	// HTTP/1.1 as every engine speaks it, plus HTTP/2 with prior knowledge
	// (h2c) so that one process can hold more concurrent streams than it
	// may open file descriptors.
	e.srv.Protocols = new(http.Protocols)
	e.srv.Protocols.SetHTTP1(true)
	e.srv.Protocols.SetUnencryptedHTTP2(true)
	e.serveDone = make(chan struct{})
	go func() {
		defer close(e.serveDone)
		_ = e.srv.Serve(ln) // returns ErrServerClosed on Shutdown/Close
	}()
	base := "http://" + ln.Addr().String()
	return engine.Endpoint{
		BaseURL:    base + "/v1",
		MetricsURL: base + "/metrics",
		Dialect:    e.cfg.Dialect,
		Model:      e.cfg.Model,
	}, nil
}

// Stop shuts down gracefully: no new connections, in-flight requests run to
// their end unless ctx ends first, when they are cut. Then the batching loop
// stops and the ground-truth files are closed. Stop is idempotent.
func (e *Engine) Stop(ctx context.Context) error {
	e.stopOnce.Do(func() { e.stopErr = e.stop(ctx) })
	return e.stopErr
}

// countActive counts the connections that are serving a request (net/http's
// StateActive), for untilIdle. A connection may leave StateActive for
// StateIdle, StateHijacked or, when it closes after its response, straight
// for StateClosed, so each connection's last state is kept.
func (e *Engine) countActive(c net.Conn, state http.ConnState) {
	e.connsMu.Lock()
	defer e.connsMu.Unlock()
	if e.conns == nil {
		e.conns = map[net.Conn]bool{}
	}
	was := e.conns[c]
	now := state == http.StateActive
	switch {
	case now && !was:
		e.activeConns.Add(1)
	case !now && was:
		e.activeConns.Add(-1)
	}
	if state == http.StateIdle {
		if e.idleSince == nil {
			e.idleSince = map[net.Conn]time.Duration{}
		}
		e.idleSince[c] = e.now()
	}
	if state == http.StateIdle && e.closing[c] {
		// The response is written and flushed (net/http sets StateIdle
		// after finishing it): close the socket under the server, which
		// then fails its read of the next request and lets the connection go.
		delete(e.closing, c)
		_ = c.Close()
	}
	if state == http.StateClosed || state == http.StateHijacked {
		delete(e.conns, c)
		delete(e.closing, c)
		delete(e.idleSince, c)
	} else {
		e.conns[c] = now
	}
}

// untilIdle is ctx, also cancelled once no connection is serving a request.
// net/http's Shutdown counts a connection accepted but never sent a request
// as busy until it is 5 s old (StateNew), so a client's spare pooled
// connection kept the run's end waiting ~5 s in a few runs of a hundred:
// once nothing is being served, the rest may be closed at once.
func (e *Engine) untilIdle(ctx context.Context) context.Context {
	idle, cancel := context.WithCancel(ctx)
	go func() {
		defer cancel()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-idle.Done():
				return
			case <-t.C:
				if e.activeConns.Load() <= 0 && e.inflight.Load() == 0 {
					return
				}
			}
		}
	}()
	return idle
}

func (e *Engine) stop(ctx context.Context) error {
	var errs []error
	e.srvMu.Lock()
	srv, done := e.srv, e.serveDone
	e.srvMu.Unlock()
	if srv != nil {
		if err := srv.Shutdown(e.untilIdle(ctx)); err != nil {
			// Graceful time is over: cut the remaining streams.
			_ = srv.Close()
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				errs = append(errs, fmt.Errorf("sim engine: shutdown: %w", err))
			}
		}
		<-done
	}
	e.startLoop() // so that loopDone is closed even if the loop never ran
	close(e.stopLoop)
	<-e.loopDone
	// Every request got its final outcome from the loop; let the handlers
	// record their truth before the files close. A handler stuck writing to
	// a client that does not read is not waited for long.
	for deadline := time.Now().Add(5 * time.Second); e.inflight.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if err := e.truth.close(); err != nil {
		errs = append(errs, fmt.Errorf("sim engine: %w", err))
	}
	if err := e.trace.close(); err != nil {
		errs = append(errs, fmt.Errorf("sim engine: %w", err))
	}
	if err := e.spans.close(); err != nil {
		errs = append(errs, fmt.Errorf("sim engine: %w", err))
	}
	if err := e.reqExport.close(); err != nil {
		errs = append(errs, fmt.Errorf("sim engine: %w", err))
	}
	return errors.Join(errs...)
}

// Truth returns a copy of the ground truth of the requests finished so far,
// including every request whose response end was already written when Truth
// was called.
func (e *Engine) Truth() []RequestTruth {
	e.settle.wait(2 * time.Second)
	return e.truth.snapshot()
}

// TruthDropped is the number of finished requests not kept in memory
// because of Config.MaxRequestTruth.
func (e *Engine) TruthDropped() int { return e.truth.droppedCount() }

// Steps returns a copy of the ground truth of the forward passes so far
// (at most Config.MaxStepTruth of them).
func (e *Engine) Steps() []StepTruth { return e.truth.stepSnapshot() }

// Config returns the engine's configuration with defaults filled.
func (e *Engine) Config() Config { return e.cfg }
