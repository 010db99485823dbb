package run

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/engine"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// Inspect is `llmbench inspect`: one look at an engine's /metrics (a URL or
// an exposition file) through dialect ("" or scrape.Auto detects it). Given
// the engine's API root instead, it first finds the metrics as a run
// against an external engine would, and says what it found on notes. A bad
// dialect, or a run directory or trial set given for a file, is the user's
// to fix (*ConfigError).
func Inspect(ctx context.Context, target, dialect string, notes io.Writer) (scrape.Report, error) {
	if _, telemetry := scrape.TelemetryDialect(dialect); dialect != "" && dialect != scrape.Auto && !telemetry {
		if _, err := scrape.DialectFor(dialect); err != nil {
			return scrape.Report{}, configError(err)
		}
	}
	if err := notARun(target); err != nil {
		return scrape.Report{}, configError(err)
	}
	if base, ok := endpoints.APIBase(target); ok {
		ep, err := engine.External{Endpoint: engine.Endpoint{BaseURL: base}}.Start(ctx)
		for _, n := range ep.Notes {
			fmt.Fprintf(notes, "llmbench: engine: %s\n", n)
		}
		if err != nil {
			fmt.Fprintf(notes, "llmbench: engine: %v\n", err)
		}
		if ep.MetricsURL == "" {
			return scrape.Report{}, fmt.Errorf("inspect %s: found no /metrics beside the API; give the metrics URL itself", target)
		}
		target = ep.MetricsURL
	}
	return scrape.InspectDialect(ctx, target, dialect)
}

// notARun refuses a run directory or a trial set given for an exposition
// file: inspect reads an engine's /metrics, not what a run recorded.
func notARun(target string) error {
	if fileExists(filepath.Join(target, rundir.TrialsFile)) {
		trials, err := rundir.Trials(target)
		if err != nil {
			return fmt.Errorf("%s is a trial set (llmbench run --repeat): %w", target, err)
		}
		return fmt.Errorf("%s is a trial set of %d trials (%s): inspect reads an engine's /metrics (a URL or an exposition file), not a run; llmbench report %s shows what each trial recorded",
			target, len(trials), trialNames(trials), target)
	}
	if fileExists(filepath.Join(target, rundir.RunFile)) {
		return fmt.Errorf("%s is a run directory: inspect reads an engine's /metrics (a URL or an exposition file), not a run; llmbench report %s shows what it recorded", target, target)
	}
	return nil
}
