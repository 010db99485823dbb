package run

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/llmbench-org/llmbench/engine"
	"github.com/llmbench-org/llmbench/engine/launch"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/engines"
	"github.com/llmbench-org/llmbench/internal/httppolicy"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/scrape"
	"github.com/llmbench-org/llmbench/scrape/promapi"
)

// engineUp is the engine stage's result: the engine, started, where it
// answers and where its metrics are read.
type engineUp struct {
	eng    engine.Engine
	ep     engine.Endpoint
	source scrape.Source // its metrics; nil when it has none
	apiKey string
	spans  *spanSink // scrape.otlp's receiver (otlp.go); nil without it
	// export is scrape.sglang_export's (sglangexport.go).
	export exportSink
}

// bringUpEngine is the engine stage: it builds the engine the scenario names,
// starts it (a stop cancels the start), fills in the model and the dialect
// (detected from the metric names when the scenario names none) and prints
// the engine's notes. Only a started engine is returned, to be stopped.
func bringUpEngine(ctx context.Context, stop <-chan struct{}, sc scenarios.Scenario, runDir string, sys IO) (*engineUp, error) {
	up := &engineUp{}
	if sc.Engine.APIKeyEnv != "" {
		if up.apiKey = sys.Getenv(sc.Engine.APIKeyEnv); up.apiKey == "" {
			fmt.Fprintf(sys.Stderr, "llmbench: engine.api_key_env names %s, which is not set: sending no API key\n", sc.Engine.APIKeyEnv)
		}
	}
	var err error
	if up.spans, err = startSpans(sc, runDir, sys.Stderr); err != nil {
		return nil, err
	}
	up.export = sglangExport(sc, runDir)
	if up.eng, err = newEngine(sc, runDir, up.apiKey, sys, up.spans); err != nil {
		up.spans.abort()
		return nil, configError(err)
	}
	if up.ep, err = startEngine(ctx, up.eng, stop, sys.Stderr); err != nil {
		up.spans.abort()
		return nil, fmt.Errorf("start engine: %w", err)
	}
	if up.ep.Model == "" {
		up.ep.Model = sc.Model
	}
	if sc.Engine.Kind == scenarios.KindSim && sc.Engine.Process != scenarios.ProcessInline && len(sys.Self) == 0 {
		up.ep.Notes = append(up.ep.Notes, "the built-in engine ran in this process, not apart (no llmbench executable was given to start it): its CPU and collector share the client's")
	}
	if proxies := httppolicy.Ignored(sys.Getenv); len(proxies) > 0 {
		up.ep.Notes = append(up.ep.Notes, fmt.Sprintf("the environment sets %s: ignored; every request this run made (discovery, scrapes, calibration, the measured requests) went direct to the engine",
			strings.Join(proxies, ", ")))
	}
	for _, n := range up.ep.Notes {
		fmt.Fprintf(sys.Stderr, "llmbench: engine: %s\n", n)
	}
	up.source = metricsSource(sc.Scrape, up.ep, up.apiKey)
	if up.ep.Dialect == "" {
		// Engines join on the ids they are sent (SGLang's rid, vLLM's
		// request_id): a dialect found from /metrics is the engine's as much
		// as one the scenario names.
		var err error
		up.ep.Dialect, err = detectDialect(ctx, up.source)
		note := ""
		switch {
		case up.ep.Dialect != "":
			note = fmt.Sprintf("dialect %s, detected from the metric names (engine.dialect sets it)", up.ep.Dialect)
		case err != nil:
			note = fmt.Sprintf("dialect not detected before the load (%v): each scrape detects it from its own page, and nothing that needs it before (the ids the engine joins on) has it; engine.dialect sets it", err)
		}
		if note != "" {
			up.ep.Notes = append(up.ep.Notes, note)
			fmt.Fprintf(sys.Stderr, "llmbench: engine: %s\n", note)
		}
	}
	up.readContext(ctx, sys)
	return up, nil
}

// readContext asks the engine for the context one request may fill, where
// its family states it (engines.Family.Context), so that the report can say
// where requests were truncated (run.json's engine.context_tokens, and the
// truncation note, name it). Not knowing it is a note, never an error.
func (up *engineUp) readContext(ctx context.Context, sys IO) {
	f, err := engines.Lookup(up.ep.Dialect)
	if err != nil || f.Context.Path == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	n, err := engine.ReadContext(ctx, httppolicy.Client(5*time.Second), up.ep.BaseURL, up.apiKey, f.Context)
	if err != nil {
		note := fmt.Sprintf("context (%s) not read: %v", f.Context.What, err)
		up.ep.Notes = append(up.ep.Notes, note)
		fmt.Fprintf(sys.Stderr, "llmbench: engine: %s\n", note)
		return
	}
	up.ep.ContextTokens = n
}

// lateNotes adds to run.json what a launched engine has to say once the
// load is over (engine.log's losses, a launch command that daemonized during
// the run), and prints it.
func (up *engineUp) lateNotes(meta *runMeta, log io.Writer) {
	notes := up.spans.finish() // otlp.go: the engine's last spans are in
	notes = append(notes, up.export.collect(log)...)
	if n, ok := up.eng.(interface{ Notes() []string }); ok {
		notes = append(notes, n.Notes()...)
	}
	if len(notes) == 0 {
		return
	}
	for _, note := range notes {
		fmt.Fprintf(log, "llmbench: engine: %s\n", note)
	}
	meta.update(func(m *rundir.RunMeta) { m.Engine.Notes = append(m.Engine.Notes, notes...) })
}

// stop stops the engine. A real engine may take a while to shut down (vLLM,
// SGLang); after 30 seconds it is killed.
func (up *engineUp) stop(log io.Writer) {
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := up.eng.Stop(stopCtx); err != nil {
		fmt.Fprintf(log, "llmbench: stop engine: %v\n", err)
	}
	up.spans.abort()
}

// newEngine builds the engine the scenario names.
func newEngine(sc scenarios.Scenario, runDir, apiKey string, sys IO, spans *spanSink) (engine.Engine, error) {
	switch sc.Engine.Kind {
	case scenarios.KindSim:
		if sc.Engine.Process != scenarios.ProcessInline && len(sys.Self) > 0 {
			return simProcess(sc, runDir, sys, spans)
		}
		params, faults := simSettings(sc)
		cfg := sim.Config{
			Dialect:   sc.Engine.Dialect,
			Model:     sc.Model,
			Params:    params, // the preset with the scenario's overrides
			Faults:    faults,
			TruthPath: filepath.Join(runDir, rundir.TruthFile),
			// otlp.go
			OTLPTracesEndpoint: spans.httpEndpoint(),
		}
		if cfg.Dialect == sim.DialectFastDeploy {
			cfg.TraceLogPath = filepath.Join(runDir, rundir.TraceLogFile)
		}
		cfg.SGLangExportDir = sglangExport(sc, runDir).engineDir
		return sim.New(cfg)
	case scenarios.KindLaunch:
		l := sc.Engine.Launch
		l = spans.launchSpec(l) // otlp.go
		l = sglangExport(sc, runDir).launchSpec(l)
		return launch.New(launch.Config{
			Kind: l.Kind, Command: l.Command, Model: l.Model, Host: l.Host, Port: l.Port, MetricsPort: l.MetricsPort,
			Env: l.Env, Extra: l.Extra, Ready: l.ReadyTimeout, ReadyPath: l.ReadyPath, Dir: l.Dir, NoMetrics: l.NoMetrics,
			Dialect: sc.Engine.Dialect, APIKey: apiKey, LogPath: filepath.Join(runDir, rundir.EngineLogFile),
			LogHead: int64(l.LogHeadMiB) << 20, LogTail: int64(l.LogTailMiB) << 20,
		})
	case scenarios.KindExternal:
		return engine.External{Endpoint: engine.Endpoint{
			BaseURL: sc.Engine.BaseURL, MetricsURL: sc.Engine.MetricsURL, Dialect: sc.Engine.Dialect, Model: sc.Model,
		}, APIKey: apiKey}, nil
	default:
		return nil, fmt.Errorf("engine kind %q is not supported (sim, external)", sc.Engine.Kind)
	}
}

// simSettings are the built-in engine's parameters and faults, as Load
// resolved them onto sim.Model.
func simSettings(sc scenarios.Scenario) (sim.Params, sim.Faults) {
	var p sim.Params
	var f sim.Faults
	if v, ok := sc.Engine.Sim.(*sim.Params); ok {
		p = *v
	}
	if v, ok := sc.Engine.Faults.(*sim.Faults); ok {
		f = *v
	}
	return p, f
}

// reapLeftovers kills the engines that earlier runs under runsDir launched
// and never stopped (llmbench was killed with -9: a multi-process engine
// would keep its port and GPU), and says so. Only run directories that
// still hold launch.GroupFile are looked at: runs, the trials of trial sets
// and those of A/B pairs (decision 0037).
func reapLeftovers(runsDir string, log io.Writer) {
	var files []string
	for _, where := range [][]string{{"*"}, {"*", "trial-*"}, {"*", "*", "trial-*"}} {
		found, _ := filepath.Glob(filepath.Join(append(append([]string{runsDir}, where...), launch.GroupFile)...))
		files = append(files, found...)
	}
	for _, f := range files {
		dir := filepath.Dir(f)
		pgid, err := launch.KillLeftover(dir)
		switch {
		case err != nil:
			fmt.Fprintf(log, "llmbench: an engine an earlier run started may still run: %v\n", err)
		case pgid > 0:
			fmt.Fprintf(log, "llmbench: killed the engine (process group %d) that the run in %s started and never stopped\n", pgid, dir)
		}
	}
}

// startEngine starts the engine; a stop while it starts (a real engine can
// take minutes to load its model) cancels the start.
func startEngine(ctx context.Context, eng engine.Engine, stop <-chan struct{}, log io.Writer) (engine.Endpoint, error) {
	startCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	started := make(chan struct{})
	var watching sync.WaitGroup
	watching.Go(func() {
		select {
		case <-started:
		case <-stop:
			fmt.Fprintln(log, "llmbench: interrupted while the engine was starting")
			cancel()
		}
	})
	ep, err := eng.Start(startCtx)
	close(started)
	watching.Wait()
	if err != nil && startCtx.Err() != nil {
		err = fmt.Errorf("%w: %w", ErrInterrupted, err)
	}
	return ep, err
}

// metricsSource is where the run reads the engine's metrics: a Prometheus
// server, several replicas' /metrics, one URL, or the engine's own metrics
// URL; nil when there is none. The engine's API key goes with a URL on the
// engine's own origin (scheme, host and port of its base URL), as the
// client's requests carry it: llama.cpp's --api-key guards its /metrics
// too. Another origin (a replica, an exporter) is not sent it.
func metricsSource(cfg scenarios.Scrape, ep engine.Endpoint, apiKey string) scrape.Source {
	if p := cfg.Prometheus; p != nil {
		return promapi.Source{URL: p.URL, Selector: p.Selector, By: p.By, Dialect: ep.Dialect, Timeout: cfg.Timeout}
	}
	urls := cfg.Targets
	switch {
	case len(urls) > 0:
	case cfg.URL != "":
		urls = []string{cfg.URL}
	case ep.MetricsURL != "":
		urls = []string{ep.MetricsURL}
	default:
		return nil
	}
	ts := make(scrape.Targets, len(urls))
	for i, u := range urls {
		ts[i] = scrape.Target{URL: u, Dialect: ep.Dialect, Timeout: cfg.Timeout}
		if apiKey != "" && sameOrigin(u, ep.BaseURL) {
			ts[i].Bearer = apiKey
		}
	}
	return ts
}

// sameOrigin reports whether two URLs share scheme, host and port (RFC 6454),
// a port left out being the scheme's default.
func sameOrigin(a, b string) bool {
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	if errA != nil || errB != nil || ua.Host == "" {
		return false
	}
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Hostname(), ub.Hostname()) && port(ua) == port(ub)
}

// detectTimeout bounds detectDialect's one look. It is not the scrape's
// timeout, which is at most the scrape interval (200 ms in some scenarios)
// because a poll comes again: this look comes once, before the load, and
// the page it reads is the same. Under -race beside two CPU hogs a 200-ms
// bound missed it (.ci/busy-test), and the run went without its dialect.
const detectTimeout = 10 * time.Second

// detectDialect reads the engine's dialect from its metric names: one look
// at the first target's /metrics ("" when there is none, or it tells
// nothing; an error when the page could not be read). A Prometheus source
// is left to detect it on every row.
func detectDialect(ctx context.Context, source scrape.Source) (string, error) {
	ts, ok := source.(scrape.Targets)
	if !ok || len(ts) == 0 {
		return "", nil
	}
	t := ts[0]
	t.Timeout = detectTimeout
	rep, err := scrape.InspectTarget(ctx, t, "")
	if err != nil || !rep.Detected {
		return "", err
	}
	return rep.Dialect, nil
}

// simProcess runs the built-in engine as `llmbench serve` in a child process
// (docs/decisions/0005): the engine's CPU, goroutines and garbage collector
// then stay out of the client's process, whose timestamps and self-measured
// CPU are what a run reports. Its output goes to engine.log.
func simProcess(sc scenarios.Scenario, runDir string, sys IO, spans *spanSink) (engine.Engine, error) {
	args := append(append([]string(nil), sys.Self...), "serve", "--addr", "{host}:{port}", "--dialect", sc.Engine.Dialect,
		"--truth", filepath.Join(runDir, rundir.TruthFile))
	if sc.Model != "" {
		args = append(args, "--model", sc.Model)
	}
	if sc.Engine.Dialect == sim.DialectFastDeploy {
		args = append(args, "--trace-log", filepath.Join(runDir, rundir.TraceLogFile))
	}
	args = append(args, sglangExport(sc, runDir).simArgs()...)
	preset, err := sim.Preset(sc.Engine.Preset)
	if err != nil {
		return nil, err
	}
	args = append(args, "--preset", sc.Engine.Preset)
	simParams, simFaults := simSettings(sc)
	params, err := overrideFlags("--param", simParams, preset)
	if err != nil {
		return nil, err
	}
	faults, err := overrideFlags("--fault", simFaults, sim.Faults{})
	if err != nil {
		return nil, err
	}
	args = append(append(args, params...), faults...)
	args = append(args, spans.simArgs()...) // otlp.go
	// The engine's truth stamps are taken right after each flush: `serve`
	// keeps its collector out of them as the client does (selfmon.QuietGC,
	// 0004), unless the environment sets GOGC or GOMEMLIMIT.
	env := append([]string(nil), sys.SelfEnv...)
	return launch.New(launch.Config{
		Kind: launch.KindCommand, Command: args, Dialect: sc.Engine.Dialect, Env: env,
		LogPath: filepath.Join(runDir, rundir.EngineLogFile),
	})
}

// overrideFlags spells every field of v (yaml-tagged) that differs from base
// as `flag key=value`, so the child engine gets exactly the scenario's
// resolved values; values are JSON, which YAML reads back as they were
// (durations as "2ms", lists).
func overrideFlags(flag string, v, base any) ([]string, error) {
	fields, err := yamlFields(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s values: %w", flag, err)
	}
	baseFields, err := yamlFields(base)
	if err != nil {
		return nil, fmt.Errorf("encode %s values: %w", flag, err)
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		j, err := json.Marshal(fields[k])
		if err != nil {
			return nil, fmt.Errorf("encode %s %s: %w", flag, k, err)
		}
		if b, _ := json.Marshal(baseFields[k]); string(b) == string(j) {
			continue
		}
		out = append(out, flag, k+"="+string(j))
	}
	return out, nil
}

// yamlFields is v's fields by their YAML names.
func yamlFields(v any) (map[string]any, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return nil, err
	}
	fields := map[string]any{}
	err = yaml.Unmarshal(b, &fields)
	return fields, err
}
