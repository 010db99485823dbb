package run

import (
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/llmbench-org/llmbench/report/comparison"
	"github.com/llmbench-org/llmbench/report/gates"
	reporthtml "github.com/llmbench-org/llmbench/report/html"
	"github.com/llmbench-org/llmbench/report/noise"
	"github.com/llmbench-org/llmbench/report/peers"
	"github.com/llmbench-org/llmbench/rundir"
)

// CompareConfig says what `llmbench compare` puts side by side.
type CompareConfig struct {
	// Runs are run directories, trial sets or directories of runs, each
	// compared with the first one, or with Baselines when there are any.
	Runs []string
	// Baselines are the baseline's runs (a history): one side, first.
	Baselines []string
	// Noise is a noise file (llmbench noise) whose entry for the baseline's
	// scenario and host widens single-run sides ("" = none); NoiseRequired
	// makes a file without that entry an error (it was named, not found by
	// default).
	Noise         string
	NoiseRequired bool
}

// Compare loads every side of cfg and compares them with the first, phase
// by phase, under the baseline's noise floors (docs/decisions/0034). A path
// that is not a run, or a baseline or noise file that cannot be used, is the
// user's to fix (*ConfigError).
func Compare(cfg CompareConfig) (comparison.Comparison, error) {
	var runs []comparison.Run
	if len(cfg.Baselines) > 0 {
		base, err := loadHistory(cfg.Baselines)
		if err != nil {
			return comparison.Comparison{}, err
		}
		runs = append(runs, base)
	}
	for _, dir := range cfg.Runs {
		if !comparison.IsRun(dir) {
			return comparison.Comparison{}, configError(fmt.Errorf("%s is not a run directory (no %s or %s), a trial set (no %s) or a directory of runs", dir, rundir.RunFile, rundir.SummaryFile, rundir.TrialsFile))
		}
		r, err := comparison.Load(dir)
		if err != nil {
			return comparison.Comparison{}, err
		}
		runs = append(runs, r)
	}
	floors, err := compareFloors(cfg.Noise, cfg.NoiseRequired, runs[0].Dir)
	if err != nil {
		return comparison.Comparison{}, err
	}
	return comparison.CompareWith(gates.Options{Bootstrap: gates.DefaultBootstrap, Floors: floors}, runs...), nil
}

// loadHistory is the baselines as one side: every run of every path.
func loadHistory(paths []string) (comparison.Run, error) {
	var out comparison.Run
	for i, p := range paths {
		r, err := comparison.Load(p)
		if err != nil {
			return comparison.Run{}, configError(fmt.Errorf("--baseline: %w", err))
		}
		if i == 0 {
			out = r
			out.Trials = nil
		}
		out.Trials = append(out.Trials, r.Trials...)
	}
	return out, nil
}

// compareFloors are the noise floors for the baseline's scenario and host
// from the noise file at path ("" = none): an entry it lacks is an error
// when the file was required, no floors otherwise.
func compareFloors(path string, required bool, baseline string) (gates.Floors, error) {
	if path == "" {
		return gates.Floors{}, nil
	}
	f, err := noise.Load(path)
	if err != nil {
		return gates.Floors{}, configError(fmt.Errorf("--noise: %w", err))
	}
	k, err := noise.KeyOf(baseline)
	if err != nil {
		return gates.Floors{}, nil
	}
	e, ok := f.Lookup(k)
	if !ok {
		if required {
			return gates.Floors{}, configError(fmt.Errorf("--noise %s has no floors for scenario %s (%s) on host %q; learn them with llmbench noise", path, k.Scenario, k.ScenarioHash, k.Host))
		}
		return gates.Floors{}, nil
	}
	return e.Floors(path), nil
}

// CompareRenderers are the formats `llmbench compare --format` writes:
// comparison's text, md and json, and html, the self-contained page with
// the runs' CDFs overlaid that report/html draws (decision 0802; run
// joins them because report/comparison cannot import report/html).
var CompareRenderers = func() map[string]comparison.Renderer {
	out := maps.Clone(comparison.Renderers)
	out["html"] = reporthtml.RenderComparison
	return out
}()

// CompareFormats names CompareRenderers for a usage message.
const CompareFormats = "text, md, json or html"

// ComparePeers shows the peers' result files among args (report/peers
// tells them from runs) beside the first run of baselines and args' runs,
// on w: json as llmbench.compare-peers/v1, any other format as text. It
// returns the runs among args, and whether any peer's file was shown.
func ComparePeers(w io.Writer, format string, args, baselines []string) (runs []string, shown bool, err error) {
	var results []string
	for _, a := range args {
		if peers.IsResult(a) {
			results = append(results, a)
		} else {
			runs = append(runs, a)
		}
	}
	if len(results) == 0 {
		return runs, false, nil
	}
	first := ""
	if all := append(slices.Clone(baselines), runs...); len(all) > 0 {
		first = all[0]
	}
	rep, err := peers.Compare(first, results)
	if err != nil {
		return runs, false, err
	}
	if format == "json" {
		return runs, true, peers.RenderJSON(w, rep)
	}
	return runs, true, peers.RenderText(w, rep)
}

// RenderComparison compares cfg's runs and renders the comparison on w.
func RenderComparison(w io.Writer, render comparison.Renderer, cfg CompareConfig) error {
	c, err := Compare(cfg)
	if err != nil {
		return err
	}
	return render(w, c)
}
