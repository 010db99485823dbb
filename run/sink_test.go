package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/redact"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// tally is a test sink: it keeps what it is handed without a lock (the
// consumer is one goroutine: the race detector would see otherwise), and
// counts what it observes of requests (from the senders: atomics) and phases.
type tally struct {
	ids     []string // the records' ids, in the order handed
	rows    []scrape.Row
	closes  int
	begins  atomic.Int64
	ends    atomic.Int64
	phases  []string
	failAt  int // Record fails from this record on (0: never)
	failErr error
}

func (t *tally) Record(r client.Record) error {
	t.ids = append(t.ids, r.ID)
	if t.failAt > 0 && len(t.ids) >= t.failAt {
		return fmt.Errorf("record %d refused: %w", len(t.ids), t.failErr)
	}
	return nil
}

func (t *tally) Row(r scrape.Row) error { t.rows = append(t.rows, r); return nil }
func (t *tally) Close() error           { t.closes++; return nil }
func (t *tally) Begin()                 { t.begins.Add(1) }
func (t *tally) End()                   { t.ends.Add(1) }
func (t *tally) SetPhase(name string)   { t.phases = append(t.phases, name) }

// counter is a sink without observers and without a name of its own.
type counter struct{ records, rows int }

func (c *counter) Record(client.Record) error { c.records++; return nil }
func (c *counter) Row(scrape.Row) error       { c.rows++; return nil }
func (c *counter) Close() error               { return nil }

// A sink wired in with one line (Config.Sinks) gets every record and row the
// run directory gets, in the same order, and, being an observer too, every
// request's Begin and End and every phase's start; it is closed once.
func TestSinkGetsWhatTheRunDirectoryGets(t *testing.T) {
	t.Parallel()
	path := writeScenario(t, `
name: sink
engine: {kind: sim, preset: tiny, process: inline}
workload: {concurrency: 3, requests: 30, prompt_tokens: 8, output_tokens: 8, warmup: {requests: 6}}
scrape: {interval: 50ms}
`)
	sink := &tally{}
	res, err := Run(t.Context(), Config{Scenario: path, RunsDir: t.TempDir(), Sinks: []Sink{sink}}, IO{})
	if err != nil {
		t.Fatal(err)
	}
	records := readJSONL[client.Record](t, filepath.Join(res.Dir, rundir.RequestsFile))
	var ids []string
	for _, r := range records {
		ids = append(ids, r.ID)
	}
	if len(ids) != 36 || !slices.Equal(sink.ids, ids) {
		t.Errorf("the sink got %d records, requests.jsonl has %d (of 36 planned); same ids in the same order: %v", len(sink.ids), len(ids), slices.Equal(sink.ids, ids))
	}
	rows := readJSONL[scrape.Row](t, filepath.Join(res.Dir, rundir.ScrapesFile))
	if len(rows) == 0 || len(sink.rows) != len(rows) {
		t.Fatalf("the sink got %d rows, scrapes.jsonl has %d", len(sink.rows), len(rows))
	}
	for i := range rows {
		if got, want := sink.rows[i], rows[i]; got.Target != want.Target || got.At != want.At || got.OK != want.OK {
			t.Errorf("row %d: the sink got %s at %v, scrapes.jsonl has %s at %v", i, got.Target, got.At, want.Target, want.At)
		}
	}
	if b, e := sink.begins.Load(), sink.ends.Load(); b != int64(len(ids)) || e != b {
		t.Errorf("Begin %d times, End %d times, for %d requests", b, e, len(ids))
	}
	if want := []string{"warmup", "main"}; !slices.Equal(sink.phases, want) {
		t.Errorf("phases observed %q, want %q", sink.phases, want)
	}
	if sink.closes != 1 {
		t.Errorf("the sink was closed %d times, want once", sink.closes)
	}
}

// A sink whose Record fails stops the run, as a full disk does: the run's
// error names the sink and says why; what was measured is all in the run
// directory (every record another sink got, the ones that finished after the
// failure included), which is finalized and says the run stopped early.
func TestFailingSinkStopsTheRun(t *testing.T) {
	t.Parallel()
	path := writeScenario(t, `
name: failing
engine: {kind: sim, preset: tiny, process: inline}
workload: {concurrency: 4, requests: 100000, prompt_tokens: 8, output_tokens: 8}
scrape: {interval: 100ms}
`)
	refused := errors.New("the collector went away")
	failing, all := &tally{failAt: 5, failErr: refused}, &counter{}
	errb := &syncBuffer{}
	// A safety net only: the sink's failure, not this, must end the run.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	res, err := Run(ctx, Config{Scenario: path, RunsDir: t.TempDir(), Sinks: []Sink{failing, all}}, IO{Stderr: errb})
	if ctx.Err() != nil {
		t.Fatal("the failing sink did not stop the run")
	}
	var se *SinkError
	if !errors.As(err, &se) || se.Sink != "sink *run.tally" || !errors.Is(err, refused) || errors.Is(err, ErrInterrupted) {
		t.Fatalf("run error %v, want a *SinkError naming sink *run.tally", err)
	}
	if want := "recording the run: sink *run.tally: record 5 refused: the collector went away"; err.Error() != want {
		t.Errorf("run error %q, want %q", err, want)
	}
	if want := "llmbench: sink *run.tally: record 5 refused: the collector went away: stopping the run\n"; !strings.Contains(errb.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, errb.String())
	}
	records := readJSONL[client.Record](t, filepath.Join(res.Dir, rundir.RequestsFile))
	if len(records) < 5 || len(records) != all.records || len(failing.ids) != all.records || len(records) >= 100000 {
		t.Errorf("requests.jsonl has %d records, the other sink got %d, the failing one %d: want all the same, at least 5, and the run stopped early",
			len(records), all.records, len(failing.ids))
	}
	if res.Summary.Client.Requests.Sent != len(records) {
		t.Errorf("the summary counts %d requests sent, requests.jsonl has %d", res.Summary.Client.Requests.Sent, len(records))
	}
	raw, rerr := os.ReadFile(filepath.Join(res.Dir, rundir.RunFile))
	var meta rundir.RunMeta
	if rerr != nil || json.Unmarshal(raw, &meta) != nil || meta.Ended.IsZero() || meta.Stopped == "" {
		t.Errorf("run.json (%v) should say when the run ended (%v) and why it stopped early (%q)", rerr, meta.Ended, meta.Stopped)
	}
	if failing.closes != 1 {
		t.Errorf("the failing sink was closed %d times, want once", failing.closes)
	}
}

// The fan-out on its own: every sink gets every record and row in order,
// each redacted once before any sink sees it; the first Record error is
// kept and signalled; Close errors follow it, each naming its sink; closing
// twice closes the sinks once.
func TestOutputsFanOut(t *testing.T) {
	t.Parallel()
	a, b := &tally{failAt: 2, failErr: errors.New("full")}, &closeFails{}
	o := newOutputs(a, b)
	o.start()
	o.records <- client.Record{ID: "r1", Error: "401: api_key=sk-abcdefghijkl"}
	o.rows <- scrape.Row{Target: "http://u:secret@engine:8000/metrics"}
	o.records <- client.Record{ID: "r2"}
	o.records <- client.Record{ID: "r3"}
	<-o.failure()
	if err := o.firstErr(); err == nil || err.Error() != "sink *run.tally: record 2 refused: full" {
		t.Errorf("first error %v", err)
	}
	err := o.close()
	want := "sink *run.tally: record 2 refused: full; the sink that fails on close: flush: broken pipe"
	if err == nil || err.Error() != want {
		t.Errorf("close: %v, want %s", err, want)
	}
	if again := o.close(); again != err || a.closes != 1 || b.closes != 1 {
		t.Errorf("closed again: %v; sinks closed %d and %d times", again, a.closes, b.closes)
	}
	for _, got := range [][]string{a.ids, b.ids} {
		if !slices.Equal(got, []string{"r1", "r2", "r3"}) {
			t.Errorf("a sink got %q", got)
		}
	}
	if len(b.errs) != 3 || strings.Contains(b.errs[0], "sk-abc") || !strings.Contains(b.errs[0], redact.Marker) {
		t.Errorf("the sink got errors %q: want the key redacted", b.errs)
	}
	if len(b.targets) != 1 || strings.Contains(b.targets[0], "secret") {
		t.Errorf("the sink got targets %q: want the password redacted", b.targets)
	}
}

// closeFails is a named sink whose Close fails; it keeps what it is handed.
type closeFails struct {
	ids, errs, targets []string
	closes             int
}

func (c *closeFails) Record(r client.Record) error {
	c.ids, c.errs = append(c.ids, r.ID), append(c.errs, r.Error)
	return nil
}
func (c *closeFails) Row(r scrape.Row) error { c.targets = append(c.targets, r.Target); return nil }
func (c *closeFails) Close() error           { c.closes++; return errors.New("flush: broken pipe") }
func (c *closeFails) String() string         { return "the sink that fails on close" }
