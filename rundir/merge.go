package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/rundir/atomicfile"
	"github.com/llmbench-org/llmbench/scrape"
)

// Merge combines the run directories of the shards of one sharded run
// (`llmbench run --shard i/n` on n machines) into the run directory out, as
// if one generator had sent every request. Each of dirs is a shard's run
// directory, or a directory holding them (up to two levels down, such as
// the volume every shard of a Kubernetes Job wrote into).
//
// Each shard's run clock is shifted onto the earliest shard's by their
// wall-clock start times; records and scrapes are merged in time order, a
// line at a time (memory does not grow with the run); each phase spans from
// its earliest start to its latest end. The engine's view is taken per
// engine (docs/decisions/0015): an engine every shard scraped counts once,
// its counters' increase taken from the latest shard's opening snapshot to
// the latest shard's closing one (see mergePhases); distinct engines (each shard's own
// built-in one, or loopback addresses on different machines) add up. It
// checks that the runs are the n shards of one scenario and seed. The
// shards' clocks are aligned only as well as their machines' wall clocks
// agree (NTP: milliseconds); each request's latencies are measured on one
// machine and are exact.
//
// The merged directory appears whole or not at all: it is written beside out
// and renamed into place, so a merge that fails leaves nothing behind and can
// be run again.
func Merge(out string, dirs []string) error {
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		return fmt.Errorf("merge: %s must be a new or empty directory", out)
	}
	runs, err := ShardRuns(dirs, out)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(out)), 0o755); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(out)), "."+filepath.Base(out)+".merging-")
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	if err := mergeInto(tmp, filepath.Base(out), runs); err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	_ = os.Remove(out) // an empty directory the user made for it
	if err := os.Rename(tmp, out); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("merge: %w", err)
	}
	return atomicfile.SyncDir(filepath.Dir(filepath.Clean(out)))
}

// ShardRuns finds the run directories that paths name: each path is a run
// directory itself, or a directory whose run directories lie at most two
// levels below it (shards writing into one volume, each under its own
// --runs directory). Found that way, merged runs, hidden directories and
// skip (the merge's own output) are left out.
func ShardRuns(paths []string, skip string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if isRunDir(p) {
			out = append(out, p)
			continue
		}
		found, err := runsBelow(p, skip, 2)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("merge: %s is not a run directory (no %s) and holds none", p, RunFile)
		}
		out = append(out, found...)
	}
	return out, nil
}

func isRunDir(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, RunFile))
	return err == nil && st.Mode().IsRegular()
}

// runsBelow lists the unmerged run directories under dir, depth levels down
// at most, in name order.
func runsBelow(dir, skip string, depth int) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		sub := filepath.Join(dir, e.Name())
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || (skip != "" && sameDir(sub, skip)) {
			continue
		}
		if isRunDir(sub) {
			if m, err := readRunMeta(sub); err == nil && len(m.MergedFrom) > 0 {
				continue
			}
			out = append(out, sub)
			continue
		}
		if depth > 1 {
			more, err := runsBelow(sub, skip, depth-1)
			if err != nil {
				return nil, err
			}
			out = append(out, more...)
		}
	}
	return out, nil
}

func sameDir(a, b string) bool {
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && x == y
}

func readRunMeta(dir string) (RunMeta, error) {
	var m RunMeta
	b, err := ReadFile(filepath.Join(dir, RunFile))
	if err != nil {
		return m, fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", filepath.Join(dir, RunFile), err)
	}
	return m, nil
}

// shardRun is one shard's run directory being merged.
type shardRun struct {
	dir   string
	meta  RunMeta
	shift time.Duration // from its run clock onto the merged one
}

// mergeInto merges the shards' runs into the empty directory out, as the run
// named id.
func mergeInto(out, id string, dirs []string) error {
	var runs []shardRun
	for _, dir := range dirs {
		m, err := readRunMeta(dir)
		if err != nil {
			return err
		}
		runs = append(runs, shardRun{dir: dir, meta: m})
	}
	if len(runs) == 0 {
		return errors.New("merge: no runs")
	}
	first := runs[0].meta
	seen := map[int]string{}
	for _, r := range runs {
		m := r.meta
		switch {
		case m.Scenario != first.Scenario || m.Seed != first.Seed:
			return fmt.Errorf("merge: %s ran %s seed %d, %s ran %s seed %d: not shards of one run", runs[0].dir, first.Scenario, first.Seed, r.dir, m.Scenario, m.Seed)
		case m.Shards < 2 || m.Shards != first.Shards:
			return fmt.Errorf("merge: %s is shard %d of %d, %s of %d: want the shards of one --shard i/n run", r.dir, m.Shard, m.Shards, runs[0].dir, first.Shards)
		case seen[m.Shard] != "":
			return fmt.Errorf("merge: %s and %s are both shard %d", seen[m.Shard], r.dir, m.Shard)
		}
		seen[m.Shard] = r.dir
	}
	for i := range first.Shards {
		if seen[i] == "" {
			return fmt.Errorf("merge: shard %d of %d is missing", i, first.Shards)
		}
	}
	// Shard order, so that everything merged comes out the same whatever
	// order the directories were named in.
	slices.SortFunc(runs, func(a, b shardRun) int { return a.meta.Shard - b.meta.Shard })
	origin := first.StartedAt
	for _, r := range runs {
		if r.meta.StartedAt.Before(origin) {
			origin = r.meta.StartedAt
		}
	}
	for i := range runs {
		runs[i].shift = runs[i].meta.StartedAt.Sub(origin)
	}

	eng, err := identifyEngines(runs)
	if err != nil {
		return err
	}
	if err := mergeRecords(filepath.Join(out, RequestsFile), runs); err != nil {
		return err
	}
	if err := mergeScrapes(filepath.Join(out, ScrapesFile), runs, eng); err != nil {
		return err
	}
	gpu, err := mergeGPU(out, runs) // mergegpu.go
	if err != nil {
		return err
	}
	if err := mergeSpans(out, runs); err != nil {
		return err
	}

	merged := RunMeta{
		ID: id, Scenario: first.Scenario, Description: first.Description, Seed: first.Seed, StartedAt: origin,
		Version: first.Version, Engine: first.Engine, SLO: first.SLO, Shards: first.Shards, PromptCalibration: first.PromptCalibration,
		Percentiles: first.Percentiles, Host: first.Host, MaxFailureRate: first.MaxFailureRate, IgnoreEOS: first.IgnoreEOS,
	}
	merged.Engine.Notes = append(slices.Clone(first.Engine.Notes), eng.notes()...)
	merged.Engine.Notes = append(merged.Engine.Notes, gpu.notes()...)
	var stopped []string
	for _, r := range runs {
		m := r.meta
		merged.MergedFrom = append(merged.MergedFrom, m.ID)
		merged.DroppedArrivals += m.DroppedArrivals
		merged.LateArrivals += m.LateArrivals
		if m.Host != merged.Host {
			merged.Host = ""
		}
		if m.Stopped != "" {
			stopped = append(stopped, fmt.Sprintf("shard %d: %s", m.Shard, m.Stopped))
		}
		mergeClientHealth(&merged.Client, m.Client)
	}
	merged.Phases = mergePhases(runs, eng)
	mergeGPUAndCache(merged.Phases, runs, gpu) // mergegpu.go
	// The merged run ended when its last shard did; a shard that never
	// wrote its end leaves the merged run without one too.
	for i, r := range runs {
		if r.meta.Ended.IsZero() {
			merged.Ended = time.Time{}
			break
		}
		if i == 0 || r.meta.Ended.After(merged.Ended) {
			merged.Ended = r.meta.Ended
		}
	}
	merged.Stopped = strings.Join(stopped, "; ")

	b, err := json.MarshalIndent(merged, "", "  ")
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	if err := WriteFile(filepath.Join(out, RunFile), append(b, '\n')); err != nil {
		return err
	}
	if sc, err := ReadFile(filepath.Join(runs[0].dir, ScenarioFile)); err == nil {
		if err := WriteFile(filepath.Join(out, ScenarioFile), sc); err != nil {
			return err
		}
	}
	return nil
}

// engines says which scrape targets of which shards are one engine.
type engines struct {
	// ident is the engine a shard's target is: the target itself when
	// every shard reaching it reached one engine, else qualified.
	ident map[shardTarget]string
	// label is what an engine is called in the merged run: its target,
	// qualified only when two engines share it.
	label map[string]string
	// from is the one shard whose scrapes of an engine the merged run keeps.
	from map[string]int
	// by lists, per engine, the shards that scraped it.
	by map[string][]int
}

type shardTarget struct {
	shard  int
	target string
}

// identifyEngines decides which targets are one engine, from the run
// metadata and a first pass over each shard's scrapes (no engine exposes
// an instance id llmbench could read):
//   - a built-in or launched engine (engine kind sim or launch) belongs to the
//     shard that started it;
//   - a loopback address names a different engine on each machine (each pod
//     of a Job), so it is one engine only for the shards on one host;
//   - any other address is one engine, whichever shard scraped it.
//
// Several shards' scrapes of one engine read the same counters at about the
// same times; the merged run keeps those of the shard that scraped it most
// successfully, because interleaving them would let a counter seem to step
// back (two scrapes overtaking each other, clocks a millisecond apart),
// which increase() takes for a restart.
func identifyEngines(runs []shardRun) (*engines, error) {
	return identifyTargets(runs, ScrapesFile, engineBoundaries)
}

// engineBoundaries are a phase's boundary scrapes of the engine.
func engineBoundaries(ph *PhaseMeta) []*scrape.Row {
	var out []*scrape.Row
	for _, rows := range [][]scrape.Row{ph.BeforeRows, ph.AfterRows} {
		for j := range rows {
			out = append(out, &rows[j])
		}
	}
	if len(ph.BeforeRows) == 0 {
		out = append(out, ph.Before)
	}
	if len(ph.AfterRows) == 0 {
		out = append(out, ph.After)
	}
	return out
}

// identifyTargets decides, as identifyEngines describes, which targets of
// the shards' file (scrapes.jsonl, gpu.jsonl) and of their phases' boundary
// scrapes are one source.
func identifyTargets(runs []shardRun, file string, boundaries func(*PhaseMeta) []*scrape.Row) (*engines, error) {
	e := &engines{ident: map[shardTarget]string{}, label: map[string]string{}, from: map[string]int{}, by: map[string][]int{}}
	okRows := map[shardTarget]int{}
	for _, r := range runs {
		shard := r.meta.Shard
		note := func(row *scrape.Row) {
			if row == nil || row.Target == "" {
				return
			}
			k := shardTarget{shard, row.Target}
			if _, ok := e.ident[k]; !ok {
				e.ident[k] = engineOf(r.meta, row.Target)
			}
		}
		for i := range r.meta.Phases {
			for _, row := range boundaries(&r.meta.Phases[i]) {
				note(row)
			}
		}
		_, err := ReadJSONL(filepath.Join(r.dir, file), func(row *scrape.Row) error {
			note(row)
			if row.OK {
				okRows[shardTarget{shard, row.Target}]++
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("merge: %w", err)
		}
	}
	keys := make([]shardTarget, 0, len(e.ident))
	for k := range e.ident {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b shardTarget) int {
		if a.shard != b.shard {
			return a.shard - b.shard
		}
		return strings.Compare(a.target, b.target)
	})
	identsOf := map[string][]string{} // target → the engines reached at it
	for _, k := range keys {
		id := e.ident[k]
		if !slices.Contains(e.by[id], k.shard) {
			e.by[id] = append(e.by[id], k.shard)
		}
		if !slices.Contains(identsOf[k.target], id) {
			identsOf[k.target] = append(identsOf[k.target], id)
		}
		best, ok := e.from[id]
		if !ok || okRows[k] > okRows[shardTarget{best, k.target}] {
			e.from[id] = k.shard
		}
	}
	for _, k := range keys {
		id := e.ident[k]
		if len(identsOf[k.target]) == 1 {
			e.label[id] = k.target
		} else {
			e.label[id] = id
		}
	}
	return e, nil
}

// engineOf names the engine a shard reached at target (see identifyEngines).
func engineOf(m RunMeta, target string) string {
	switch {
	case m.Engine.Kind == "sim" || m.Engine.Kind == "launch":
		return fmt.Sprintf("%s (shard %d's own engine)", target, m.Shard)
	case loopback(target) && m.Host != "":
		return fmt.Sprintf("%s (on %s)", target, m.Host)
	}
	return target
}

// loopback reports whether target's host is this machine's own.
func loopback(target string) bool {
	u, err := url.Parse(target)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// keep reports whether the merged run keeps a shard's scrape of target, and
// under which name.
func (e *engines) keep(shard int, target string) (string, bool) {
	id, ok := e.ident[shardTarget{shard, target}]
	if !ok {
		return target, true
	}
	return e.label[id], e.from[id] == shard
}

// notes say, for a reader of the merged run, how its engines were counted.
func (e *engines) notes() []string {
	ids := make([]string, 0, len(e.by))
	for id := range e.by {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var out []string
	for _, id := range ids {
		shards := e.by[id]
		if len(shards) > 1 {
			out = append(out, fmt.Sprintf("merge: %s is one engine, scraped by shards %s: counted once, from the latest opening to the latest closing snapshot (scrapes kept from shard %d)",
				e.label[id], joinInts(shards), e.from[id]))
		}
	}
	if len(ids) > 1 {
		labels := make([]string, len(ids))
		for i, id := range ids {
			labels[i] = e.label[id]
		}
		out = append(out, fmt.Sprintf("merge: %d distinct engines, added up: %s", len(ids), strings.Join(labels, ", ")))
	}
	return out
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// mergePhases joins each phase of the shards: it spans from its earliest
// start to its latest end and offered the sum of their loads; per engine, its
// opening snapshot is the latest any shard took of that engine and its
// closing one the latest. The engine's increase so covers the stretch in
// which every shard was measuring, and the reconciliation compares it with
// the records that ended in it. The latest opening, not the earliest: what a
// shard sends before its own opening snapshot is in no record (its prompt
// calibration's probe requests, which an engine without a tokenizer endpoint
// counts as finished requests), and a shard that started later sent it after
// another shard's opening: the engine counted 4 requests nobody recorded,
// read as foreign traffic (issue 20). Shards started together (--start-at)
// take their openings while they wait, before any load: the latest of them
// still precedes every request.
func mergePhases(runs []shardRun, eng *engines) []PhaseMeta {
	type bounds struct{ before, after *scrape.Row }
	type phaseAcc struct {
		ph        PhaseMeta
		unplanned bool // a shard knew no planned count: the sum would be short
		engines   map[string]*bounds
		order     []string
		settles   []shardSettle
	}
	phases := map[string]*phaseAcc{}
	var order []string
	for _, r := range runs {
		for _, ph := range r.meta.Phases {
			ph = shiftPhase(ph, r.shift)
			acc, ok := phases[ph.Name]
			if !ok {
				acc = &phaseAcc{ph: PhaseMeta{Name: ph.Name, Measured: ph.Measured, Start: ph.Start, End: ph.End, LoadUnit: ph.LoadUnit},
					engines: map[string]*bounds{}}
				phases[ph.Name] = acc
				order = append(order, ph.Name)
			}
			acc.ph.Load += ph.Load // each shard offered its share
			acc.ph.Planned += ph.Planned
			acc.unplanned = acc.unplanned || ph.Planned == 0
			acc.ph.Start = min(acc.ph.Start, ph.Start)
			acc.ph.End = max(acc.ph.End, ph.End)
			if ph.Settle != nil {
				acc.settles = append(acc.settles, shardSettle{r.meta.Shard, ph.Settle})
			}
			befores, afters := ph.BeforeRows, ph.AfterRows
			if len(befores) == 0 && ph.Before != nil {
				befores = []scrape.Row{*ph.Before}
			}
			if len(afters) == 0 && ph.After != nil {
				afters = []scrape.Row{*ph.After}
			}
			at := func(row scrape.Row) *bounds {
				id := eng.ident[shardTarget{r.meta.Shard, row.Target}]
				b, ok := acc.engines[id]
				if !ok {
					b = &bounds{}
					acc.engines[id] = b
					acc.order = append(acc.order, id)
				}
				return b
			}
			for _, row := range befores {
				b := at(row)
				row.Target, _ = eng.keep(r.meta.Shard, row.Target)
				if better(&row, b.before, func(a, b *scrape.Row) bool { return a.At > b.At }) {
					b.before = &row
				}
			}
			for _, row := range afters {
				b := at(row)
				row.Target, _ = eng.keep(r.meta.Shard, row.Target)
				if better(&row, b.after, func(a, b *scrape.Row) bool { return a.At > b.At }) {
					b.after = &row
				}
			}
		}
	}
	var out []PhaseMeta
	for _, name := range order {
		acc := phases[name]
		ph := acc.ph
		if acc.unplanned {
			ph.Planned = 0
		}
		slices.Sort(acc.order)
		var befores, afters []scrape.Row
		for _, id := range acc.order {
			b := acc.engines[id]
			if b.before != nil && b.after != nil {
				befores, afters = append(befores, *b.before), append(afters, *b.after)
			}
		}
		switch len(befores) {
		case 0:
		case 1:
			ph.Before, ph.After = &befores[0], &afters[0]
		default:
			ph.Before, ph.After = combineRows(befores), combineRows(afters)
			ph.BeforeRows, ph.AfterRows = befores, afters
		}
		ph.Settle = mergeSettle(acc.settles, ph.Before, ph.After)
		out = append(out, ph)
	}
	return out
}

// better reports whether row is a better boundary snapshot than cur: a
// successful one over a failed one (a shard whose boundary scrape failed
// leaves the engine's view to the others'), else the earlier (or later) one.
func better(row, cur *scrape.Row, first func(a, b *scrape.Row) bool) bool {
	switch {
	case cur == nil:
		return true
	case usableRow(row) != usableRow(cur):
		return usableRow(row)
	}
	return first(row, cur)
}

// combineRows is one boundary scrape of several engines as one row, their sum,
// as a run with several scrape targets stores it; failed when any failed.
func combineRows(rows []scrape.Row) *scrape.Row {
	out := rows[0]
	out.Target = "all targets"
	out.OK, out.Snapshot, out.Error = true, nil, ""
	for _, r := range rows {
		out.At = min(out.At, r.At)
		if !r.OK {
			out.OK, out.Error = false, r.Target+": "+r.Error
		}
	}
	if out.OK {
		if snap, ok := scrape.SumRows(rows); ok {
			out.Snapshot = &snap
		}
	}
	return &out
}

type shardSettle struct {
	shard  int
	settle *scrape.Settled
}

// mergeSettle says how the merged phase's closing snapshot settled: each
// shard waited for the engine to count its own requests; the merged window
// settled when the engine's finished-request counter grew by all of them
// between the merged boundary snapshots. Nil when no shard settled.
func mergeSettle(settles []shardSettle, before, after *scrape.Row) *scrape.Settled {
	if len(settles) == 0 {
		return nil
	}
	out := &scrape.Settled{OK: true}
	var reasons []string
	for _, s := range settles {
		out.Want += s.settle.Want
		out.Finished += s.settle.Finished
		out.Polls += s.settle.Polls
		out.Waited = max(out.Waited, s.settle.Waited)
		out.OK = out.OK && s.settle.OK
		if s.settle.Reason != "" {
			reasons = append(reasons, fmt.Sprintf("shard %d: %s", s.shard, s.settle.Reason))
		}
	}
	if usableRow(before) && usableRow(after) {
		d := scrape.Delta(*before.Snapshot, *after.Snapshot)
		if n, ok := d.Counters[scrape.RequestsFinished]; ok {
			out.Finished = n
			out.OK = n >= out.Want
			if out.OK {
				reasons = nil
			}
		}
	}
	out.Over = out.Finished > out.Want
	out.Reason = strings.Join(reasons, "; ")
	return out
}

func usableRow(r *scrape.Row) bool { return r != nil && r.OK && r.Snapshot != nil }

// mergeRecords writes every shard's records to path, shifted onto the merged
// clock, in the order they ended (as one generator would have written them),
// reading one record per shard at a time.
func mergeRecords(path string, runs []shardRun) error {
	feeds := make([]*feed[client.Record], len(runs))
	quit := make(chan struct{})
	for i, r := range runs {
		feeds[i] = startFeed(filepath.Join(r.dir, RequestsFile), quit, false, func(c *client.Record) bool {
			shiftRecord(c, r.shift)
			return true
		})
	}
	return writeMerged(path, feeds, quit, func(c *client.Record) time.Duration { return c.End }, nil)
}

// mergeScrapes writes the scrapes the merged run keeps (see
// identifyEngines) to path, shifted and in time order.
func mergeScrapes(path string, runs []shardRun, eng *engines) error {
	feeds := make([]*feed[scrape.Row], len(runs))
	quit := make(chan struct{})
	for i, r := range runs {
		feeds[i] = startFeed(filepath.Join(r.dir, ScrapesFile), quit, true, func(row *scrape.Row) bool {
			label, keep := eng.keep(r.meta.Shard, row.Target)
			row.Target = label
			row.At += r.shift
			return keep
		})
	}
	return writeMerged(path, feeds, quit, func(row *scrape.Row) time.Duration { return row.At }, nil)
}

// feed reads a JSONL file a line at a time in its own goroutine, for a merge
// that takes the earliest line of several files next. Values travel in small
// batches: one channel operation per value would cost more than decoding it.
type feed[T any] struct {
	batches chan []*T
	errc    chan error
	batch   []*T // what is left of the batch being taken
}

const feedBatch = 32

var errQuit = errors.New("merge stopped")

// startFeed reads path, passing each value through keep (which may change
// it, and drops it by returning false), until quit is closed. A missing file
// is an empty one when optional.
func startFeed[T any](path string, quit <-chan struct{}, optional bool, keep func(*T) bool) *feed[T] {
	f := &feed[T]{batches: make(chan []*T, 2), errc: make(chan error, 1)}
	go func() {
		defer close(f.batches)
		batch := make([]*T, 0, feedBatch)
		send := func() error {
			select {
			case f.batches <- batch:
				batch = make([]*T, 0, feedBatch)
				return nil
			case <-quit:
				return errQuit
			}
		}
		_, err := ReadJSONL(path, func(v *T) error {
			if !keep(v) {
				return nil
			}
			if batch = append(batch, v); len(batch) == feedBatch {
				return send()
			}
			return nil
		})
		if err == nil && len(batch) > 0 {
			err = send()
		}
		if optional && errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		f.errc <- err
	}()
	return f
}

// head is the feed's next value (nil at its end).
func (f *feed[T]) head() *T {
	for len(f.batch) == 0 {
		b, ok := <-f.batches
		if !ok {
			return nil
		}
		f.batch = b
	}
	return f.batch[0]
}

// writeMerged writes the feeds' values to path, earliest (by at) first; each
// feed is taken to be in about that order already, as a run writes it.
// first, when not nil, drops a value it returns false for (a duplicate):
// unlike a feed's keep, it sees the values in the merged order, on one
// goroutine.
func writeMerged[T any](path string, feeds []*feed[T], quit chan struct{}, at func(*T) time.Duration, first func(*T) bool) error {
	stop := func(err error) error {
		close(quit)
		for _, f := range feeds {
			for range f.batches { // let the reader see quit
			}
			<-f.errc
		}
		return fmt.Errorf("merge: %w", err)
	}
	file, err := Create(path)
	if err != nil {
		return stop(err)
	}
	defer file.Abort()
	enc := json.NewEncoder(file) // File buffers
	heads := make([]*T, len(feeds))
	for i, f := range feeds {
		heads[i] = f.head()
	}
	for {
		next := -1
		for i, h := range heads {
			if h != nil && (next < 0 || at(h) < at(heads[next])) {
				next = i
			}
		}
		if next < 0 {
			break
		}
		if first == nil || first(heads[next]) {
			if err := enc.Encode(heads[next]); err != nil {
				return stop(err)
			}
		}
		f := feeds[next]
		f.batch[0] = nil // let the collector have it
		f.batch = f.batch[1:]
		heads[next] = f.head()
	}
	var errs []error
	for _, f := range feeds {
		errs = append(errs, <-f.errc)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	if err := file.Commit(); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	return nil
}

// shiftRecord moves every time of a record that happened by d.
func shiftRecord(r *client.Record, d time.Duration) {
	for _, t := range []*time.Duration{&r.Intended, &r.Sent, &r.Wrote, &r.Connected, &r.FirstByte, &r.FirstToken, &r.FirstContent, &r.End} {
		if *t != 0 {
			*t += d
		}
	}
	for i := range r.Chunks {
		r.Chunks[i].At += d
	}
}

// shiftPhase moves a phase and its boundary scrapes by d.
func shiftPhase(ph PhaseMeta, d time.Duration) PhaseMeta {
	ph.Start += d
	ph.End += d
	shiftRow := func(r *scrape.Row) *scrape.Row {
		if r == nil {
			return nil
		}
		c := *r
		c.At += d
		return &c
	}
	ph.Before, ph.After = shiftRow(ph.Before), shiftRow(ph.After)
	shiftRows := func(rows []scrape.Row) []scrape.Row {
		out := slices.Clone(rows)
		for i := range out {
			out[i].At += d
		}
		return out
	}
	ph.BeforeRows, ph.AfterRows = shiftRows(ph.BeforeRows), shiftRows(ph.AfterRows)
	return ph
}

// mergeClientHealth keeps the worst of the shards' self-measurements: the
// merged run is only as trustworthy as its busiest generator.
func mergeClientHealth(dst *ClientHealth, h ClientHealth) {
	dst.CPUCores = max(dst.CPUCores, h.CPUCores)
	dst.CPUUtilization = max(dst.CPUUtilization, h.CPUUtilization)
	dst.SchedLatencyP99_s = max(dst.SchedLatencyP99_s, h.SchedLatencyP99_s)
	dst.Saturated = dst.Saturated || h.Saturated
	dst.GCCycles += h.GCCycles
	if dst.GCPolicy == "" {
		dst.GCPolicy = h.GCPolicy
	}
	// The worst shard speaks for the run: CPU-bound before host-delayed
	// before fine (a shard's delay is in the merged latencies).
	if delayRank(h.Delay) > delayRank(dst.Delay) {
		dst.Delay = h.Delay
	}
	if h.HostOtherCPU != nil && (dst.HostOtherCPU == nil || *h.HostOtherCPU > *dst.HostOtherCPU) {
		v := *h.HostOtherCPU
		dst.HostOtherCPU = &v
	}
	if h.Throttled_s > dst.Throttled_s {
		dst.Throttled_s, dst.ThrottledPeriods, dst.CPUQuota = h.Throttled_s, h.ThrottledPeriods, h.CPUQuota
	}
	if dst.CPUQuota == nil && h.CPUQuota != nil {
		v := *h.CPUQuota
		dst.CPUQuota = &v
	}
}

// delayRank orders ClientHealth.Delay verdicts from fine to worst.
func delayRank(delay string) int {
	switch delay {
	case "":
		return 0
	case "cpu_bound":
		return 2
	case "cpu_throttled":
		return 3
	}
	return 1
}
