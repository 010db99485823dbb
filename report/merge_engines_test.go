package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/reconcile"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// engineSim is an engine's counters as a function of time on the merged run
// clock: requests_finished and generation_tokens grow by one request (of
// tokensEach tokens) at each finish time.
type engineSim struct {
	base     float64 // counted before the run (other traffic, earlier runs)
	finishes []time.Duration
}

const tokensEach = 7

func (e *engineSim) at(t time.Duration) *scrape.Snapshot {
	n := e.base
	for _, f := range e.finishes {
		if f <= t {
			n++
		}
	}
	return &scrape.Snapshot{Dialect: "vllm", Counters: map[scrape.Concept]float64{
		scrape.RequestsFinished: n, scrape.GenerationTokens: n * tokensEach,
	}}
}

// row is a scrape of the engine read at merged time read, stored at the
// shard's own run clock (merged time minus the shard's offset).
func (e *engineSim) row(target string, read, offset time.Duration) scrape.Row {
	return scrape.Row{Target: target, At: read - offset, Duration: time.Millisecond, OK: true, Snapshot: e.at(read)}
}

// shardSpec is one shard's run in a synthetic sharded run.
type shardSpec struct {
	kind, host, target string
	engine             *engineSim
	offset             time.Duration   // its StartedAt after the earliest shard's
	start, end         time.Duration   // its phase, on the merged clock
	ends               []time.Duration // its requests' ends, on the merged clock
	scrapeReads        []time.Duration // its periodic scrapes, on the merged clock
	scrapeReadsAt      []time.Duration // when each was read, when not when it began (a slow scrape)
	failedBefore       bool            // its opening snapshot failed
}

var mergeOrigin = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func writeSyntheticShard(t *testing.T, root string, i, n int, s shardSpec) string {
	t.Helper()
	dir := filepath.Join(root, fmt.Sprintf("shard-%d", i), "run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	before := s.engine.row(s.target, s.start, s.offset)
	after := s.engine.row(s.target, s.end+50*time.Millisecond, s.offset)
	if s.failedBefore {
		before.OK, before.Snapshot, before.Error = false, nil, "connection refused"
	}
	meta := rundir.RunMeta{ID: fmt.Sprintf("run-shard%dof%d", i, n), Scenario: "s", Seed: 1, Shard: i, Shards: n, Host: s.host,
		StartedAt: mergeOrigin.Add(s.offset), Ended: mergeOrigin.Add(s.offset + s.end + time.Second),
		Engine: rundir.EngineMeta{Kind: s.kind, Dialect: "vllm"},
		Phases: []rundir.PhaseMeta{{Name: "main", Measured: true, Start: s.start - s.offset, End: s.end - s.offset, Load: 1, LoadUnit: "requests/s",
			Planned: len(s.ends), Before: &before, After: &after,
			Settle: &scrape.Settled{Want: float64(len(s.ends)), Finished: float64(len(s.ends)), OK: true, Polls: 1}}}}
	b, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.RunFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var recs, rows []string
	for k, e := range s.ends {
		r := client.Record{ID: fmt.Sprintf("r-%d-%d", i, k), Index: k*n + i, Phase: "main",
			Intended: e - 300*time.Millisecond - s.offset, Sent: e - 300*time.Millisecond - s.offset,
			FirstToken: e - 200*time.Millisecond - s.offset, End: e - s.offset,
			PromptTokens: 10, OutputTokens: tokensEach, Status: 200}
		b, _ := json.Marshal(r)
		recs = append(recs, string(b))
	}
	enc := func(r scrape.Row) string { b, _ := json.Marshal(r); return string(b) }
	rows = append(rows, enc(before))
	for k, at := range s.scrapeReads {
		read := at
		if k < len(s.scrapeReadsAt) {
			read = s.scrapeReadsAt[k]
		}
		r := s.engine.row(s.target, read, s.offset)
		r.At = at - s.offset
		rows = append(rows, enc(r))
	}
	rows = append(rows, enc(after))
	write := func(name string, lines []string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(rundir.RequestsFile, recs)
	write(rundir.ScrapesFile, rows)
	return dir
}

func mergeMS(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func mergedSummary(t *testing.T, root string, specs []shardSpec) (string, rundir.RunMeta, Summary) {
	t.Helper()
	for i, s := range specs {
		writeSyntheticShard(t, root, i, len(specs), s)
	}
	out := filepath.Join(root, "merged")
	// The shards' common parent: merge finds their run directories below it.
	if err := rundir.Merge(out, []string{root}); err != nil {
		t.Fatal(err)
	}
	var meta rundir.RunMeta
	b, err := os.ReadFile(filepath.Join(out, rundir.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	sum, err := Build(out)
	if err != nil {
		t.Fatal(err)
	}
	return out, meta, sum
}

func findingOf(s Summary, id string) *reconcile.Finding {
	for i := range s.Findings {
		if s.Findings[i].ID == id {
			return &s.Findings[i]
		}
	}
	return nil
}

// One engine every shard scrapes counts once: its requests_finished grows by
// every shard's requests between the latest opening snapshot (every shard
// measuring; issue 20: the earliest let a later shard's calibration probes in
// as foreign traffic) and the latest closing one. The shards' scrapes of it are not interleaved: here shard 1's
// scrape begun at 3.000 s read the engine at 3.002 s, after shard 0's begun
// at 3.001 s did (a slow scrape), and a request finished in between, so interleaved the counter
// would step back, which increase() takes for a restart.
func TestMergeCountsASharedEngineOnce(t *testing.T) {
	t.Parallel()
	const target = "http://10.0.0.7:8000/metrics"
	eng := &engineSim{base: 1000}
	ends0 := []time.Duration{mergeMS(2000), mergeMS(2500), mergeMS(3000), mergeMS(3500), mergeMS(4000)}
	ends1 := []time.Duration{mergeMS(2200), mergeMS(2700), mergeMS(3001) + 500*time.Microsecond, mergeMS(3700), mergeMS(4300)}
	eng.finishes = append(append(eng.finishes, ends0...), ends1...)
	specs := []shardSpec{
		{kind: "external", host: "pod-0", target: target, engine: eng, offset: 0, start: mergeMS(1000), end: mergeMS(4100), ends: ends0,
			scrapeReads: []time.Duration{mergeMS(2000) + time.Millisecond, mergeMS(3000) + time.Millisecond, mergeMS(4000) + time.Millisecond}},
		{kind: "external", host: "pod-1", target: target, engine: eng, offset: mergeMS(230), start: mergeMS(1002), end: mergeMS(4400), ends: ends1,
			scrapeReads:   []time.Duration{mergeMS(2000), mergeMS(3000), mergeMS(4000)},
			scrapeReadsAt: []time.Duration{mergeMS(2000), mergeMS(3002), mergeMS(4000)}},
	}
	out, meta, sum := mergedSummary(t, t.TempDir(), specs)

	ph := meta.Phases[0]
	if ph.Before == nil || ph.After == nil || ph.Before.Target != target || ph.After.Target != target || len(ph.BeforeRows) != 0 {
		t.Fatalf("phase boundaries: before %+v after %+v rows %d: want one engine at %s", ph.Before, ph.After, len(ph.BeforeRows), target)
	}
	if ph.Before.At != mergeMS(1002) || ph.After.At != mergeMS(4450) {
		t.Errorf("the window is %v to %v: want the latest opening snapshot (1.002s) to the latest closing one (4.45s)", ph.Before.At, ph.After.At)
	}
	if ph.Start != mergeMS(1000) || ph.End != mergeMS(4400) {
		t.Errorf("phase %v to %v, want 1s to 4.4s", ph.Start, ph.End)
	}
	if sum.Client.Requests.OK != 10 {
		t.Fatalf("client ok %d, want 10", sum.Client.Requests.OK)
	}
	if ph.Planned != 10 || sum.Phases[0].Planned != 10 {
		t.Errorf("planned %d (summary %d), want the shards' 5 + 5", ph.Planned, sum.Phases[0].Planned)
	}
	if sum.Server == nil {
		t.Fatal("no server view")
	}
	if got := sum.Server.Counters[string(scrape.RequestsFinished)]; got != 10 {
		t.Errorf("requests_finished Δ%g, want 10: one engine, counted once", got)
	}
	if got := sum.Server.Counters[string(scrape.GenerationTokens)]; got != 10*tokensEach {
		t.Errorf("generation_tokens Δ%g, want %d", got, 10*tokensEach)
	}
	if f := findingOf(sum, reconcile.IDServerView); f != nil {
		t.Errorf("finding %s: %s, with the engine's side present", f.ID, f.Verdict)
	}
	// The engine's scrapes come from one shard only (the first of those
	// with the most successful scrapes), in time order.
	var ats []time.Duration
	if _, err := rundir.ReadJSONL(filepath.Join(out, rundir.ScrapesFile), func(r *scrape.Row) error { ats = append(ats, r.At); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{mergeMS(1000), mergeMS(2001), mergeMS(3001), mergeMS(4001), mergeMS(4150)}; !slices.Equal(ats, want) {
		t.Errorf("scrapes at %v, want shard 0's alone: %v", ats, want)
	}
	if !slices.ContainsFunc(meta.Engine.Notes, func(n string) bool { return strings.Contains(n, "one engine, scraped by shards 0, 1: counted once") }) {
		t.Errorf("notes %q: want one saying the shared engine was counted once", meta.Engine.Notes)
	}
	// Records are merged in the order they ended, on the merged clock.
	var ends []time.Duration
	if _, err := rundir.ReadJSONL(filepath.Join(out, rundir.RequestsFile), func(r *client.Record) error { ends = append(ends, r.End); return nil }); err != nil {
		t.Fatal(err)
	}
	want := slices.Concat(ends0, ends1)
	slices.Sort(want)
	if !slices.Equal(ends, want) {
		t.Errorf("records end at %v, want %v", ends, want)
	}
}

// Distinct engines add up: two shards each with its own built-in engine (at
// different ports), and two pods each reaching a sidecar engine at the same
// loopback address.
func TestMergeAddsDistinctEngines(t *testing.T) {
	t.Parallel()
	cases := map[string][2]shardSpec{
		"own built-in engines": {
			{kind: "sim", host: "box", target: "http://127.0.0.1:40001/metrics"},
			{kind: "sim", host: "box", target: "http://127.0.0.1:40002/metrics"},
		},
		"loopback sidecars on two pods": {
			{kind: "external", host: "pod-0", target: "http://localhost:8000/metrics"},
			{kind: "external", host: "pod-1", target: "http://localhost:8000/metrics"},
		},
	}
	for name, pair := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var specs []shardSpec
			for i, s := range pair {
				s.engine = &engineSim{base: float64(100 * i)}
				s.offset, s.start, s.end = mergeMS(40*i), mergeMS(1000+i), mergeMS(4000+300*i)
				for k := range 4 + i {
					s.ends = append(s.ends, mergeMS(1500+600*k+i))
				}
				s.engine.finishes = s.ends
				s.scrapeReads = []time.Duration{mergeMS(2000), mergeMS(3000)}
				specs = append(specs, s)
			}
			out, meta, sum := mergedSummary(t, t.TempDir(), specs)
			ph := meta.Phases[0]
			if len(ph.BeforeRows) != 2 || len(ph.AfterRows) != 2 || ph.Before.Target != "all targets" {
				t.Fatalf("phase boundaries: %d before rows, %d after, before %q: want both engines apart and their sum", len(ph.BeforeRows), len(ph.AfterRows), ph.Before.Target)
			}
			if ph.BeforeRows[0].Target == ph.BeforeRows[1].Target {
				t.Errorf("the two engines are both called %q", ph.BeforeRows[0].Target)
			}
			if sum.Client.Requests.OK != 9 {
				t.Fatalf("client ok %d, want 9", sum.Client.Requests.OK)
			}
			if sum.Server == nil {
				t.Fatal("no server view")
			}
			if got := sum.Server.Counters[string(scrape.RequestsFinished)]; got != 9 {
				t.Errorf("requests_finished Δ%g, want 9: 4 on one engine and 5 on the other", got)
			}
			if len(sum.Server.Replicas) != 2 {
				t.Errorf("replicas %v: want each engine's share", sum.Server.Replicas)
			}
			if f := findingOf(sum, reconcile.IDServerView); f != nil {
				t.Errorf("finding %s: %s, with the engine's side present", f.ID, f.Verdict)
			}
			// Each engine's scrapes are all kept, under its own name.
			var targets = map[string]int{}
			if _, err := rundir.ReadJSONL(filepath.Join(out, rundir.ScrapesFile), func(r *scrape.Row) error { targets[r.Target]++; return nil }); err != nil {
				t.Fatal(err)
			}
			if len(targets) != 2 {
				t.Errorf("scrapes under %v: want two engines' rows", targets)
			}
		})
	}
}

// A shard whose opening snapshot failed leaves the engine's view to the
// other shards' successful one.
func TestMergePrefersSuccessfulBoundaryScrapes(t *testing.T) {
	t.Parallel()
	const target = "http://10.0.0.8:8000/metrics"
	eng := &engineSim{base: 50}
	ends0 := []time.Duration{mergeMS(2000), mergeMS(3000)}
	ends1 := []time.Duration{mergeMS(2500), mergeMS(3500)}
	eng.finishes = slices.Concat(ends0, ends1)
	specs := []shardSpec{
		{kind: "external", target: target, engine: eng, start: mergeMS(1000), end: mergeMS(3100), ends: ends0, failedBefore: true},
		{kind: "external", target: target, engine: eng, offset: mergeMS(10), start: mergeMS(1003), end: mergeMS(3600), ends: ends1},
	}
	_, meta, sum := mergedSummary(t, t.TempDir(), specs)
	if b := meta.Phases[0].Before; b == nil || !b.OK || b.At != mergeMS(1003) {
		t.Fatalf("opening snapshot %+v: want shard 1's, the successful one", b)
	}
	if sum.Server == nil || sum.Server.Counters[string(scrape.RequestsFinished)] != 4 {
		t.Errorf("server view %+v: want requests_finished Δ4", sum.Server)
	}
}
