package rundir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/scrape"
	"github.com/llmbench-org/llmbench/scrape/otlp"
)

// gpuExporters says which GPU telemetry targets of which shards are one
// exporter, as engines does for the engine's targets; nil when no shard
// scraped GPUs.
type gpuExporters struct{ *engines }

// gpuBoundaries are a phase's boundary scrapes of the GPU telemetry.
func gpuBoundaries(ph *PhaseMeta) []*scrape.Row {
	var out []*scrape.Row
	for _, rows := range [][]scrape.Row{ph.GPUBefore, ph.GPUAfter} {
		for j := range rows {
			out = append(out, &rows[j])
		}
	}
	return out
}

// mergeGPU writes the GPU telemetry's scrapes the merged run keeps to its
// gpu.jsonl, shifted and in time order: of an exporter several shards
// scraped (one machine's GPUs, scraped by every shard's run), the rows of
// the shard that scraped it most successfully, as for an engine (two
// shards' scrapes interleaved would let the energy counter seem to step
// back, which reads as a reset); of each shard's own exporter (its
// built-in engine's, a loopback address on its machine), its own. Nothing
// is written when no shard has GPU telemetry.
func mergeGPU(out string, runs []shardRun) (gpuExporters, error) {
	have := slices.ContainsFunc(runs, func(r shardRun) bool {
		_, err := os.Stat(filepath.Join(r.dir, GPUFile))
		return err == nil
	})
	if !have {
		return gpuExporters{}, nil
	}
	eng, err := identifyTargets(runs, GPUFile, gpuBoundaries)
	if err != nil {
		return gpuExporters{}, err
	}
	feeds := make([]*feed[scrape.Row], len(runs))
	quit := make(chan struct{})
	for i, r := range runs {
		feeds[i] = startFeed(filepath.Join(r.dir, GPUFile), quit, true, func(row *scrape.Row) bool {
			label, keep := eng.keep(r.meta.Shard, row.Target)
			row.Target = label
			row.At += r.shift
			return keep
		})
	}
	err = writeMerged(filepath.Join(out, GPUFile), feeds, quit, func(row *scrape.Row) time.Duration { return row.At }, nil)
	return gpuExporters{eng}, err
}

// mergeGPUAndCache gives each merged phase its GPU boundary scrapes and
// the prefix cache it started with. Each exporter's boundaries are those
// of the shard whose rows gpu.jsonl keeps, so that a phase's energy is
// the counter's increase over one shard's own window of it (the shards'
// phases run together: their windows differ by their start times); each
// shard's own exporter adds its own.
func mergeGPUAndCache(phases []PhaseMeta, runs []shardRun, gpu gpuExporters) {
	byName := map[string]*PhaseMeta{}
	for i := range phases {
		byName[phases[i].Name] = &phases[i]
	}
	var failed = map[string][]string{} // a phase's cache resets that did not happen, by shard
	for _, r := range runs {
		for _, ph := range r.meta.Phases {
			m, ok := byName[ph.Name]
			if !ok {
				continue
			}
			if gpu.engines != nil {
				m.GPUBefore = append(m.GPUBefore, gpu.kept(r, ph.GPUBefore)...)
				m.GPUAfter = append(m.GPUAfter, gpu.kept(r, ph.GPUAfter)...)
			}
			if c := ph.Cache; c != nil {
				if m.Cache == nil {
					cc := *c
					m.Cache = &cc
				}
				if c.Mode == "cold" && c.Reset != "ok" {
					failed[ph.Name] = append(failed[ph.Name], fmt.Sprintf("shard %d: %s", r.meta.Shard, c.Reset))
				}
			}
		}
	}
	for name, why := range failed {
		byName[name].Cache.Reset = strings.Join(why, "; ")
	}
}

// kept are a shard's boundary rows of the exporters whose rows the merged
// run keeps from it, relabelled and shifted onto the merged clock.
func (g gpuExporters) kept(r shardRun, rows []scrape.Row) []scrape.Row {
	var out []scrape.Row
	for _, row := range rows {
		label, keep := g.keep(r.meta.Shard, row.Target)
		if !keep {
			continue
		}
		row.Target = label
		row.At += r.shift
		out = append(out, row)
	}
	return out
}

// notes say, for a reader of the merged run, how its GPU exporters were
// counted.
func (g gpuExporters) notes() []string {
	if g.engines == nil {
		return nil
	}
	ids := make([]string, 0, len(g.by))
	for id := range g.by {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var out []string
	for _, id := range ids {
		if shards := g.by[id]; len(shards) > 1 {
			out = append(out, fmt.Sprintf("merge: GPU exporter %s, scraped by shards %s: its GPUs counted once, over shard %d's phases (its scrapes kept)",
				g.label[id], joinInts(shards), g.from[id]))
		}
	}
	if len(ids) > 1 {
		labels := make([]string, len(ids))
		for i, id := range ids {
			labels[i] = g.label[id]
		}
		out = append(out, fmt.Sprintf("merge: %d distinct GPU exporters, added up: %s", len(ids), strings.Join(labels, ", ")))
	}
	return out
}

// mergeSpans writes every shard's spans.jsonl into the merged run's, in
// the order they started, each span once: a span two shards' receivers
// both got (an engine exporting to both) is one span. Span times are the
// exporter's wall clock, which no shard's run clock shifts. Nothing is
// written when no shard received spans.
func mergeSpans(out string, runs []shardRun) error {
	have := slices.ContainsFunc(runs, func(r shardRun) bool {
		_, err := os.Stat(filepath.Join(r.dir, SpansFile))
		return err == nil
	})
	if !have {
		return nil
	}
	feeds := make([]*feed[otlp.Span], len(runs))
	quit := make(chan struct{})
	for i, r := range runs {
		feeds[i] = startFeed(filepath.Join(r.dir, SpansFile), quit, true, func(*otlp.Span) bool { return true })
	}
	seen := map[[2]string]bool{}
	first := func(s *otlp.Span) bool {
		k := [2]string{s.TraceID, s.SpanID}
		if seen[k] {
			return false
		}
		seen[k] = true
		return true
	}
	err := writeMerged(filepath.Join(out, SpansFile), feeds, quit, func(s *otlp.Span) time.Duration { return time.Duration(s.Start) }, first)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
