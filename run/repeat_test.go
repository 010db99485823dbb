package run

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/internal/quiet"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
)

// repeatYAML is a small scenario whose truth depends on the engine's state:
// groups of prompts sharing a prefix, sent one at a time, so that which
// prompts find their prefix cached is fixed by the plan alone, on an engine
// that starts empty. The warmup sends one request (one group's prefix).
const repeatYAML = `
name: repeat-e2e
seed: 7
engine: %s
workload:
  concurrency: 1
  requests: 12
  warmup: {requests: 1}
  dataset: {type: shared_prefix, groups: 4, prompts_per_group: 3, prefix_tokens: 256}
  prompt_tokens: 16
  output_tokens: 4
scrape: {interval: 200ms}
`

func repeatScenario(t *testing.T, engine string) string {
	return writeScenario(t, strings.Replace(repeatYAML, "%s", engine, 1))
}

// trialRecords are a trial's records of one phase ("" = the measured ones),
// by plan index.
func trialRecords(t *testing.T, dir, phase string) []client.Record {
	t.Helper()
	var out []client.Record
	for _, r := range readJSONL[client.Record](t, filepath.Join(dir, rundir.RequestsFile)) {
		if (phase == "" && r.Phase != "warmup") || r.Phase == phase {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b client.Record) int { return a.Index - b.Index })
	return out
}

// TestRepeatWritesATrialSet: --repeat 3 against the built-in engine writes
// three complete run directories of the same plan, trials.json in the
// order they ran, each trial with its own warmup and its own engine: the
// engine's prefix-cache hits (its truth, as cached_tokens) are the same in
// every trial, which they would not be if the cache outlived a trial (the
// external engine below shows the difference).
func TestRepeatWritesATrialSet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built-in engine three times")
	}
	t.Parallel()
	quiet.Busy(t)
	cio, out, stderr := testIO(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Repeat(ctx, Config{Scenario: repeatScenario(t, "{kind: sim, preset: tiny}"), RunsDir: t.TempDir()}, 3, cio.io)
	if err != nil {
		t.Fatalf("repeat: %v\nstderr:\n%s", err, stderr.String())
	}
	dirs, err := rundir.Trials(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(res.Dir, "trial-1"), filepath.Join(res.Dir, "trial-2"), filepath.Join(res.Dir, "trial-3")}
	if !slices.Equal(dirs, want) || len(res.Trials) != 3 {
		t.Fatalf("trials.json lists %v (%d results), want %v", dirs, len(res.Trials), want)
	}
	var cached []int
	var first []client.Record
	var started []time.Time
	for i, dir := range dirs {
		s, err := report.Build(dir)
		if err != nil {
			t.Fatal(err)
		}
		if r := s.Client.Requests; r.Sent != 12 || r.OK != 12 {
			t.Errorf("trial %d: %d sent, %d ok; want 12 of 12", i+1, r.Sent, r.OK)
		}
		if w := trialRecords(t, dir, "warmup"); len(w) != 1 {
			t.Errorf("trial %d: %d warmup requests, want 1 (each trial warms up)", i+1, len(w))
		}
		recs := trialRecords(t, dir, "")
		if i == 0 {
			first = recs
		} else if !samePlan(first, recs) {
			t.Errorf("trial %d sent another plan than trial 1", i+1)
		}
		cached = append(cached, s.Client.Tokens.Cached)
		meta, err := rundir.ReadMeta(dir)
		if err != nil {
			t.Fatal(err)
		}
		started = append(started, meta.StartedAt)
	}
	if cached[0] == 0 || cached[1] != cached[0] || cached[2] != cached[0] {
		t.Errorf("cached tokens per trial %v: want the same, above 0, in each (a fresh engine per trial)", cached)
	}
	if !slices.IsSortedFunc(started, time.Time.Compare) {
		t.Errorf("trials started at %v: not in the order trials.json lists them", started)
	}
	text := out.String()
	for _, w := range []string{"trial set: 3 trials of repeat-e2e in " + res.Dir, "each trial starts the built-in engine afresh",
		"trial 1 of 3 (trial-1): TTFT p50", "trial 3 of 3 (trial-3): TTFT p50", "spread over 3 trials:", "TTFT p99", " of 3 trials\n"} {
		if !strings.Contains(text, w) {
			t.Errorf("output lacks %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, "run directory:") || strings.Contains(text, "gates") {
		t.Errorf("a trial printed its own summary or gates:\n%s", text)
	}
}

// TestRepeatAgainstASharedEngineSaysSo: against an external engine the
// trials share its state, and the output says so; the prefix cache trial 1
// filled serves trial 2 (which is why the built-in engine starts afresh for
// each trial).
func TestRepeatAgainstASharedEngineSaysSo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs against an engine twice")
	}
	t.Parallel()
	_, ep := startSim(t, sim.Config{Dialect: sim.DialectVLLM})
	cio, out, stderr := testIO(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Repeat(ctx, Config{Scenario: repeatScenario(t, `{kind: external, base_url: "`+ep.BaseURL+`"}`), RunsDir: t.TempDir()}, 2, cio.io)
	if err != nil {
		t.Fatalf("repeat: %v\nstderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(out.String(), "the trials share the external engine at "+ep.BaseURL) {
		t.Errorf("output does not say the trials share the engine:\n%s", out.String())
	}
	c1, c2 := res.Trials[0].Summary.Client.Tokens.Cached, res.Trials[1].Summary.Client.Tokens.Cached
	if c2 <= c1 {
		t.Errorf("cached tokens %d then %d: the shared engine's cache should have served trial 2 more", c1, c2)
	}
}

// samePlan reports whether two trials' measured requests are the same plan:
// the same requests in the same order, with the same lengths asked for.
func samePlan(a, b []client.Record) bool {
	return slices.EqualFunc(a, b, func(x, y client.Record) bool {
		return x.Index == y.Index && x.TargetPromptTokens == y.TargetPromptTokens && x.MaxTokens == y.MaxTokens && x.PromptTokens == y.PromptTokens
	})
}

// TestRepeatInterruptedKeepsWhatRan: the context cancelled during trial 2
// of 3 keeps trial 1 whole and what trial 2 measured, starts no trial 3,
// and trials.json lists the two that exist; the error is the interrupt.
func TestRepeatInterruptedKeepsWhatRan(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built-in engine twice")
	}
	t.Parallel()
	const yaml = `
name: repeat-stop
engine: {kind: sim, preset: tiny}
workload: {concurrency: 2, requests: 60, prompt_tokens: 16, output_tokens: 32}
`
	cio, _, stderr := testIO(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	runCtx, interrupt := context.WithCancel(ctx)
	defer interrupt()
	// The view of trial 2 cancels the run once that trial has measured a
	// request: an interrupt in the middle of it.
	stopInTrial2 := func(vctx context.Context, l Live) {
		if l.Trial != "trial 2 of 3" {
			return
		}
		for vctx.Err() == nil {
			if l.Progress().Finished > 0 {
				interrupt()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	res, err := Repeat(runCtx, Config{Scenario: writeScenario(t, yaml), RunsDir: t.TempDir(), Views: []View{stopInTrial2}}, 3, cio.io)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("repeat = %v, want an interrupt\nstderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(err.Error(), "trial 2 of 3") {
		t.Errorf("error %q does not say which trial was interrupted", err)
	}
	dirs, err := rundir.Trials(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(res.Dir, "trial-1"), filepath.Join(res.Dir, "trial-2")}; !slices.Equal(dirs, want) {
		t.Fatalf("trials.json lists %v, want %v", dirs, want)
	}
	if _, err := os.Stat(filepath.Join(res.Dir, "trial-3")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("trial 3 started after the interrupt (stat: %v)", err)
	}
	s1, err := report.Build(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if r := s1.Client.Requests; r.Sent != 60 || r.OK != 60 || s1.Run.Stopped != "" {
		t.Errorf("trial 1: %d sent, %d ok, stopped %q; want it whole", r.Sent, r.OK, s1.Run.Stopped)
	}
	s2, err := report.Build(dirs[1])
	if err != nil {
		t.Fatal(err)
	}
	// How far trial 2 got depends on when the interrupt landed (on a busy
	// machine, possibly after its last arrival); that it was stopped, and
	// kept what it measured, does not.
	if r := s2.Client.Requests; r.Sent == 0 || s2.Run.Stopped == "" {
		t.Errorf("trial 2: %d sent, stopped %q: want what it measured before the interrupt, marked as stopped", r.Sent, s2.Run.Stopped)
	}
}

// TestRepeatGatesTheSet: a scenario with gates is gated once, after the
// last trial, over the whole set: what Repeat prints of its gates, and the
// error it returns, are what Gate says of the set directory.
func TestRepeatGatesTheSet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built-in engine twice")
	}
	t.Parallel()
	const yaml = `
name: repeat-gates
engine: {kind: sim, preset: tiny}
workload: {concurrency: 2, requests: 6, prompt_tokens: 16, output_tokens: 4}
gates: {thresholds: ["client.requests.failed == 0"]}
`
	cio, out, stderr := testIO(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Repeat(ctx, Config{Scenario: writeScenario(t, yaml), RunsDir: t.TempDir(), Thresholds: []string{"client.requests.ok == 6"}}, 2, cio.io)
	if res.Dir == "" || len(res.Trials) != 2 {
		t.Fatalf("repeat left %q with %d trials: %v\nstderr:\n%s", res.Dir, len(res.Trials), err, stderr.String())
	}
	for _, tr := range res.Trials {
		meta, merr := rundir.ReadMeta(tr.Dir)
		if merr != nil || !slices.Equal(meta.Thresholds, []string{"client.requests.ok == 6"}) {
			t.Errorf("%s records thresholds %v (%v): want the --threshold the set was run with", tr.Dir, meta.Thresholds, merr)
		}
	}
	var direct bytes.Buffer
	_, derr := Gate(res.Dir, GateConfig{JUnit: filepath.Join(t.TempDir(), "junit.xml")}, &direct)
	text := out.String()
	if !strings.Contains(text, "trial 2 of 2 (trial-2)") || !strings.HasSuffix(text, "trial set: "+res.Dir+"\n"+direct.String()) {
		t.Errorf("the set's gates are not printed once after the last trial as Gate prints them:\n%s\nGate:\n%s", text, direct.String())
	}
	if (err == nil) != (derr == nil) || (err != nil && derr != nil && err.Error() != derr.Error()) {
		t.Errorf("repeat's gate outcome %v, Gate's %v", err, derr)
	}
}

// TestRepeatConfig: what a set cannot be is refused before anything runs;
// one trial is a plain run.
func TestRepeatConfig(t *testing.T) {
	t.Parallel()
	sc := writeScenario(t, "name: r\nengine: {kind: sim}\nworkload: {concurrency: 1, requests: 1}\n")
	for _, tc := range []struct {
		name string
		cfg  Config
		n    int
		want string
	}{
		{"no trials", Config{Scenario: sc}, 0, "want 1 or more"},
		{"shard", Config{Scenario: sc, Shard: "0/2"}, 2, "--repeat with --shard"},
		{"start barrier", Config{Scenario: sc, StartAt: time.Now().Add(time.Hour)}, 2, "--repeat with --start-at"},
		{"bad scenario", Config{Scenario: filepath.Join(t.TempDir(), "missing.yaml")}, 2, "missing.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs := t.TempDir()
			tc.cfg.RunsDir = runs
			_, err := Repeat(context.Background(), tc.cfg, tc.n, IO{})
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Repeat = %v, want a *ConfigError saying %q", err, tc.want)
			}
			if entries, _ := os.ReadDir(runs); len(entries) != 0 {
				t.Errorf("a refused set left %d entries in the runs directory", len(entries))
			}
		})
	}
}

// TestRepeatServesItsOwnMetricsThroughout: --metrics-addr serves one
// exporter for the whole set: as trial 2 begins it counts trial 1's
// requests, and it was started once (a server per trial would rebind the port
// between trials and start its counters again).
func TestRepeatServesItsOwnMetricsThroughout(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built-in engine twice")
	}
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	const yaml = `
name: repeat-own
engine: {kind: sim, preset: tiny}
workload: {concurrency: 2, requests: 40, prompt_tokens: 16, output_tokens: 16}
`
	// As trial 2's load starts, the exporter has trial 1's requests.
	var seen atomic.Int64
	during2 := func(_ context.Context, lv Live) {
		if lv.Trial == "trial 2 of 2" {
			seen.Store(int64(ownRequests(t, addr)))
		}
	}
	cio, _, stderr := testIO(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := Repeat(ctx, Config{Scenario: writeScenario(t, yaml), RunsDir: t.TempDir(), MetricsAddr: addr, Views: []View{during2}}, 2, cio.io); err != nil {
		t.Fatalf("repeat: %v\nstderr:\n%s", err, stderr.String())
	}
	if n := strings.Count(stderr.String(), "its own metrics at"); n != 1 {
		t.Errorf("the exporter was started %d times, want once:\n%s", n, stderr.String())
	}
	if n := seen.Load(); n < 40 {
		t.Errorf("as trial 2 began the exporter counted %d requests, want trial 1's 40", n)
	}
}

// ownRequests is llmbench_requests_total summed over its outcomes, read
// from llmbench's own /metrics at addr (-1 when it cannot be read).
func ownRequests(t *testing.T, addr string) int {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Logf("own metrics: %v", err)
		return -1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	total := 0
	for _, line := range strings.Split(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, "llmbench_requests_total{"); ok {
			f := strings.Fields(rest)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			total += int(v)
		}
	}
	return total
}

// TestRepeatRefusesAChangedScenario: a scenario file edited while a set
// runs would make its trials different experiments: the next trial refuses
// it, and the set keeps what ran.
func TestRepeatRefusesAChangedScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built-in engine")
	}
	t.Parallel()
	const yaml = "name: repeat-edit\nengine: {kind: sim, preset: tiny}\nworkload: {concurrency: 2, requests: 4, prompt_tokens: 16, output_tokens: %d}\n"
	sc := writeScenario(t, strings.Replace(yaml, "%d", "4", 1))
	edit := func(_ context.Context, l Live) {
		if l.Trial == "trial 1 of 3" {
			if err := os.WriteFile(sc, []byte(strings.Replace(yaml, "%d", "8", 1)), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	cio, _, _ := testIO(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Repeat(ctx, Config{Scenario: sc, RunsDir: t.TempDir(), Views: []View{edit}}, 3, cio.io)
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "trial 2 of 3") || !strings.Contains(err.Error(), "changed since the trial set began") {
		t.Fatalf("Repeat = %v, want trial 2 to refuse the edited scenario", err)
	}
	if dirs, err := rundir.Trials(res.Dir); err != nil || len(dirs) != 1 {
		t.Errorf("trials.json lists %v (%v), want trial 1 alone", dirs, err)
	}
}
