package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/llmbench-org/llmbench/engine"
	"github.com/llmbench-org/llmbench/engine/cachereset"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/scrape"
)

// betweenPhases is what a run does at each phase's boundaries besides the
// engine's snapshots: it empties the engine's prefix cache before a phase
// that starts cold (docs/decisions/1702), and scrapes the GPUs' telemetry
// (scenario scrape.gpu) all along and at each boundary into gpu.jsonl
// (decision 1700). Its zero value does neither.
type betweenPhases struct {
	sc     scenarios.Scenario
	root   string // the engine's API root, without /v1
	family string // the engine family (dialect), which says how to reset

	gpu      scrape.Targets // nil: no GPU telemetry
	interval time.Duration
	start    time.Time
	file     *rundir.GPUWriter
	rows     chan scrape.Row
	stopLoop context.CancelFunc
	loops    sync.WaitGroup
	writing  sync.WaitGroup
	writeErr error
	// key is the run's API key, which a reset carries as the run's requests
	// do (never written anywhere).
	key string
	// view is the live view, shown each GPU row as it is written; nil: none.
	view interface{ GPURow(scrape.Row) }
}

// newBetweenPhases reads what the scenario asks between phases. The GPU
// targets default, for the built-in engine, to its emulated exporter.
func newBetweenPhases(sc scenarios.Scenario, ep engine.Endpoint) *betweenPhases {
	b := &betweenPhases{sc: sc, root: strings.TrimSuffix(strings.TrimSuffix(ep.BaseURL, "/"), "/v1"), family: ep.Dialect}
	if g := sc.Scrape.GPU; g != nil {
		urls := g.Targets
		if len(urls) == 0 && sc.Engine.Kind == scenarios.KindSim {
			urls = []string{b.root + sim.DCGMPath}
		}
		for _, u := range urls {
			b.gpu = append(b.gpu, scrape.Target{URL: u, Dialect: g.Exporter, Timeout: g.Interval})
		}
		b.interval = g.Interval
	}
	return b
}

// withKey gives the cache resets the run's API key.
func (b *betweenPhases) withKey(key string) *betweenPhases {
	b.key = key
	return b
}

// showing makes the live view show the GPU telemetry as it comes.
func (b *betweenPhases) showing(view interface{ GPURow(scrape.Row) }) *betweenPhases {
	b.view = view
	return b
}

// startGPU opens gpu.jsonl in dir and starts the periodic GPU scrapes.
func (b *betweenPhases) startGPU(dir string, start time.Time) error {
	if b == nil || len(b.gpu) == 0 {
		return nil
	}
	f, err := rundir.CreateGPU(dir)
	if err != nil {
		return fmt.Errorf("GPU telemetry: %w", err)
	}
	b.file, b.start, b.rows = f, start, make(chan scrape.Row, rowsBuffer)
	b.writing.Go(func() {
		for r := range b.rows {
			if err := b.file.Row(r); err != nil && b.writeErr == nil {
				b.writeErr = err
			}
			if b.view != nil {
				b.view.GPURow(r)
			}
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	b.stopLoop = cancel
	loop := scrape.Loop{Targets: b.gpu, Interval: b.interval, Start: start}
	b.loops.Go(func() { loop.Run(ctx, b.rows) })
	return nil
}

// stop ends the GPU scrapes and closes gpu.jsonl; its error is the first
// write that failed.
func (b *betweenPhases) stop() error {
	if b == nil || b.file == nil {
		return nil
	}
	b.stopLoop()
	b.loops.Wait()
	close(b.rows)
	b.writing.Wait()
	return errors.Join(b.writeErr, b.file.Close())
}

// gpuRound scrapes every GPU target once now, stores the rows and returns
// them: a phase boundary.
func (b *betweenPhases) gpuRound(ctx context.Context) []scrape.Row {
	if b == nil || b.file == nil {
		return nil
	}
	rows := scrape.Targets(b.gpu).ScrapeRows(ctx, b.start)
	for _, r := range rows {
		b.rows <- r
	}
	return rows
}

// prepareCache empties the prefix cache when the phase starts cold, and
// says what the phase starts with.
func (b *betweenPhases) prepareCache(ctx context.Context, phase string, measured bool) *rundir.PhaseCache {
	if b == nil {
		return nil
	}
	mode := b.sc.CacheMode(phase, measured)
	if !measured && !b.sc.ColdAnywhere() {
		return nil // nothing asked of the cache: run.json stays as it was
	}
	pc := &rundir.PhaseCache{Mode: mode, Default: !b.sc.CacheNamed()}
	if mode != scenarios.CacheCold {
		return pc
	}
	res := cachereset.Reset(ctx, nil, b.root, b.family, b.key)
	pc.API, pc.Calls = string(res.API), res.Calls
	pc.Reset = "ok"
	if !res.OK {
		pc.Reset = res.Error
	}
	return pc
}
