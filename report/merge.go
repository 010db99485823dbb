package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape"
)

// Merge combines the run directories of the shards of one sharded run
// (`llmbench run --shard i/n` on n machines) into the run directory out, as
// if one generator had sent every request: each shard's run clock is shifted
// onto the earliest shard's by their wall-clock start times, records and
// scrapes are concatenated, and each phase spans from its earliest start to
// its latest end, with the first shard's opening snapshot and the last
// shard's closing one (so the engine's counter deltas cover every shard's
// requests). It checks that the runs are the n shards of one scenario and
// seed. The shards' clocks are aligned only as well as their machines'
// wall clocks agree (NTP: milliseconds); each request's latencies are
// measured on one machine and are exact.
//
// The merged directory appears whole or not at all: it is written beside out
// and renamed into place, so a merge that fails leaves nothing behind and can
// be run again.
func Merge(out string, dirs []string) error {
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		return fmt.Errorf("merge: %s must be a new or empty directory", out)
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(out)), 0o755); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(out)), "."+filepath.Base(out)+".merging-")
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	if err := mergeInto(tmp, filepath.Base(out), dirs); err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	_ = os.Remove(out) // an empty directory the user made for it
	if err := os.Rename(tmp, out); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("merge: %w", err)
	}
	return nil
}

// mergeInto merges the shards' runs into the empty directory out, as the run
// named id.
func mergeInto(out, id string, dirs []string) error {
	type shardRun struct {
		dir   string
		meta  RunMeta
		shift time.Duration
	}
	var runs []shardRun
	for _, dir := range dirs {
		var m RunMeta
		b, err := os.ReadFile(filepath.Join(dir, RunFile))
		if err != nil {
			return fmt.Errorf("%s is not a run directory: %w", dir, err)
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, RunFile), err)
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
	origin := first.StartedAt
	for _, r := range runs {
		if r.meta.StartedAt.Before(origin) {
			origin = r.meta.StartedAt
		}
	}
	for i := range runs {
		runs[i].shift = runs[i].meta.StartedAt.Sub(origin)
	}

	rec, err := os.Create(filepath.Join(out, RequestsFile))
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	defer rec.Close()
	scr, err := os.Create(filepath.Join(out, ScrapesFile))
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	defer scr.Close()
	recEnc, scrEnc := json.NewEncoder(rec), json.NewEncoder(scr)

	merged := RunMeta{
		ID: id, Scenario: first.Scenario, Description: first.Description, Seed: first.Seed, StartedAt: origin,
		Version: first.Version, Engine: first.Engine, SLO: first.SLO, Shards: first.Shards, PromptCalibration: first.PromptCalibration,
	}
	phases := map[string]*PhaseMeta{}
	var order []string
	var stopped []string
	for _, r := range runs {
		merged.MergedFrom = append(merged.MergedFrom, r.meta.ID)
		if _, err := ReadJSONL(filepath.Join(r.dir, RequestsFile), func(c *client.Record) error {
			shiftRecord(c, r.shift)
			return recEnc.Encode(c)
		}); err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		if _, err := ReadJSONL(filepath.Join(r.dir, ScrapesFile), func(row *scrape.Row) error {
			row.At += r.shift
			return scrEnc.Encode(row)
		}); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("merge: %w", err)
		}
		m := r.meta
		merged.DroppedArrivals += m.DroppedArrivals
		merged.LateArrivals += m.LateArrivals
		if m.Stopped != "" {
			stopped = append(stopped, fmt.Sprintf("shard %d: %s", m.Shard, m.Stopped))
		}
		mergeClientHealth(&merged.Client, m.Client)
		for _, ph := range m.Phases {
			ph = shiftPhase(ph, r.shift)
			cur, ok := phases[ph.Name]
			if !ok {
				cp := ph
				phases[ph.Name] = &cp
				order = append(order, ph.Name)
				continue
			}
			cur.Load += ph.Load // each shard offered its share
			if ph.Start < cur.Start {
				cur.Start, cur.Before, cur.BeforeRows = ph.Start, ph.Before, ph.BeforeRows
			}
			if ph.End > cur.End {
				cur.End, cur.After, cur.AfterRows, cur.Settle = ph.End, ph.After, ph.AfterRows, ph.Settle
			}
		}
	}
	for _, name := range order {
		merged.Phases = append(merged.Phases, *phases[name])
	}
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
	if err := errors.Join(rec.Sync(), scr.Sync()); err != nil {
		return fmt.Errorf("merge: %w", err)
	}

	b, err := json.MarshalIndent(merged, "", "  ")
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(out, RunFile), append(b, '\n')); err != nil {
		return err
	}
	if sc, err := os.ReadFile(filepath.Join(runs[0].dir, ScenarioFile)); err == nil {
		if err := writeFileAtomic(filepath.Join(out, ScenarioFile), sc); err != nil {
			return err
		}
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
}
