// Package noise keeps the noise floors learned on a machine: how far each
// metric's regression moves between two runs of the same scenario when
// nothing changed (A/A pairs, llmbench noise). A regression gate with a
// single run on a side cannot see run-to-run variance in its data; the
// floor of its metric, learned for the baseline's scenario on the host the
// runs ran on, stands in for it (docs/decisions/0034).
//
// A noise file (schema "llmbench.noise/v1") holds one entry per scenario
// and host:
//
//	{"schema": "llmbench.noise/v1",
//	 "entries": [ {"scenario": "ci-gate", "scenario_hash": "…", "host": "ci-7",
//	               "pairs": 10, "invalid_pairs": 1, "learned_at": "…",
//	               "metrics": {"client.ttft.p99": {"floor": 0.21, "regressions": [0.05, -0.21, …]}}} ]}
//
// The key is the sha256 of the run's resolved scenario.yaml (so a scenario
// edited or given other --set values is another key) and run.json's host.
package noise

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/llmbench-org/llmbench/report/gates"
	"github.com/llmbench-org/llmbench/rundir"
)

// Schema names the noise file's shape.
const Schema = "llmbench.noise/v1"

// File is a noise file.
type File struct {
	Schema  string  `json:"schema"`
	Entries []Entry `json:"entries"`
}

// Entry is what A/A pairs of one scenario on one host showed.
type Entry struct {
	Key
	Pairs int `json:"pairs"`
	// InvalidPairs had a run that was not valid (a delayed host, say):
	// their spread is kept, which only makes the floors wider.
	InvalidPairs int               `json:"invalid_pairs"`
	LearnedAt    time.Time         `json:"learned_at"`
	Metrics      map[string]Metric `json:"metrics"`
}

// Key says which runs an entry's floors apply to.
type Key struct {
	Scenario     string `json:"scenario"`
	ScenarioHash string `json:"scenario_hash"`
	Host         string `json:"host"`
}

// Metric is one metric's A/A regressions and the floor taken from them.
type Metric struct {
	// Floor is the largest |regression| of the pairs: with n exchangeable
	// pairs, the next pair's stays within it with probability n/(n+1).
	Floor       float64   `json:"floor"`
	Regressions []float64 `json:"regressions"`
}

// KeyOf is the key of the run directory dir (a trial set: its first trial).
func KeyOf(dir string) (Key, error) {
	trials, err := rundir.Trials(dir)
	if err != nil {
		return Key{}, err
	}
	b, err := rundir.ReadFile(filepath.Join(trials[0], rundir.ScenarioFile))
	if err != nil {
		return Key{}, fmt.Errorf("noise key: %w", err)
	}
	meta, err := rundir.ReadMeta(trials[0])
	if err != nil {
		return Key{}, fmt.Errorf("noise key: %w", err)
	}
	sum := sha256.Sum256(b)
	return Key{Scenario: meta.Scenario, ScenarioHash: hex.EncodeToString(sum[:8]), Host: meta.Host}, nil
}

// DefaultPath is where llmbench noise writes and gate and compare look when
// no --noise is given: $LLMBENCH_NOISE, else llmbench/noise.json under the
// user's configuration directory ("" when there is none).
func DefaultPath(getenv func(string) string) string {
	if p := getenv("LLMBENCH_NOISE"); p != "" {
		return p
	}
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "llmbench", "noise.json")
}

// Load reads a noise file; a file that does not exist is an empty one.
func Load(path string) (File, error) {
	b, err := rundir.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return File{Schema: Schema}, nil
	}
	if err != nil {
		return File{}, err
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return File{}, fmt.Errorf("%s: %w", path, err)
	}
	if f.Schema != Schema {
		return File{}, fmt.Errorf("%s: schema %q, want %q", path, f.Schema, Schema)
	}
	if err := f.check(); err != nil {
		return File{}, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// check refuses counts and floors no A/A pairs can give: the file may have
// been edited, and a negative floor would turn a gate's tolerance around.
func (f File) check() error {
	for i, e := range f.Entries {
		if e.Pairs < 0 || e.InvalidPairs < 0 {
			return fmt.Errorf("entries[%d]: pairs %d and invalid_pairs %d must not be negative", i, e.Pairs, e.InvalidPairs)
		}
		for name, m := range e.Metrics {
			if !(m.Floor >= 0) {
				return fmt.Errorf("entries[%d].metrics[%q]: floor %g: want a fraction ≥ 0", i, name, m.Floor)
			}
		}
	}
	return nil
}

// Lookup is the entry for k.
func (f File) Lookup(k Key) (Entry, bool) {
	for _, e := range f.Entries {
		if e.ScenarioHash == k.ScenarioHash && e.Host == k.Host {
			return e, true
		}
	}
	return Entry{}, false
}

// Keys lists the file's entries, for a message naming what it has.
func (f File) Keys() []string {
	var out []string
	for _, e := range f.Entries {
		out = append(out, fmt.Sprintf("%s (%s) on %s", e.Scenario, e.ScenarioHash, e.Host))
	}
	return out
}

// Put replaces the entry of e's key, or adds it.
func (f *File) Put(e Entry) {
	f.Schema = Schema
	for i := range f.Entries {
		if f.Entries[i].ScenarioHash == e.ScenarioHash && f.Entries[i].Host == e.Host {
			f.Entries[i] = e
			return
		}
	}
	f.Entries = append(f.Entries, e)
}

// Save writes the file atomically, making its directory.
func (f File) Save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return rundir.WriteFile(path, append(b, '\n'))
}

// Floors are the entry's floors for the gates; from names the file.
func (e Entry) Floors(path string) gates.Floors {
	fl := gates.Floors{From: fmt.Sprintf("%s: %d A/A pairs of %s on %s", path, e.Pairs, e.Scenario, e.Host), ByMetric: map[string]float64{}}
	for name, m := range e.Metrics {
		fl.ByMetric[name] = m.Floor
	}
	return fl
}

// Metrics are the metrics an A/A pair measures by default: the client's
// latencies at their centre and tail, and its throughput.
var Metrics = func() []string {
	var out []string
	for _, l := range []string{"ttft", "itl", "tpot", "e2e"} {
		for _, st := range []string{"mean", "p50", "p90", "p99"} {
			out = append(out, "client."+l+"."+st)
		}
	}
	return append(out, "client.throughput.requests_per_s", "client.throughput.output_tokens_per_s")
}()

// Learn is the entry A/A pairs make: for each metric, the regression of
// each pair's second run against its first (their point estimates), and
// the floor, the largest in magnitude. Metrics a pair lacks are skipped.
func Learn(k Key, pairs [][2]gates.Run, metrics []string, now time.Time) (Entry, error) {
	e := Entry{Key: k, Pairs: len(pairs), LearnedAt: now.UTC(), Metrics: map[string]Metric{}}
	var exprs []string
	for _, m := range metrics {
		exprs = append(exprs, m+" regression < 0%")
	}
	gs, err := gates.ParseAll(exprs)
	if err != nil {
		return Entry{}, err
	}
	exact := gates.Options{Bootstrap: gates.Bootstrap{Resamples: 1}, Floors: gates.Floors{From: "learning", Rest: new(float64)}}
	for _, p := range pairs {
		if !p[0].Summary.Health.Valid || !p[1].Summary.Health.Valid {
			e.InvalidPairs++
		}
		// Both runs count as valid here: the floor is learned from what
		// the machine does, delays and all.
		a, b := p[0], p[1]
		a.Summary.Health.Valid, b.Summary.Health.Valid = true, true
		for i, r := range gs.EvaluateSides(gates.Side{b}, gates.Side{a}, exact) {
			if r.Status == gates.Error || math.Abs(r.Observed) == math.MaxFloat64 {
				continue
			}
			m := e.Metrics[metrics[i]]
			m.Regressions = append(m.Regressions, r.Observed)
			m.Floor = max(m.Floor, math.Abs(r.Observed))
			e.Metrics[metrics[i]] = m
		}
	}
	if len(e.Metrics) == 0 {
		return Entry{}, errors.New("no metric was measured in both runs of any pair")
	}
	return e, nil
}

// Names lists the entry's metrics, sorted.
func (e Entry) Names() []string {
	out := make([]string, 0, len(e.Metrics))
	for n := range e.Metrics {
		out = append(out, n)
	}
	sort.Strings(out)
	return slices.Clip(out)
}

// FileFor is the noise file a command reads: the one its --noise flag
// names (then required to hold floors for the baseline), else the default
// one (DefaultPath), if any.
func FileFor(getenv func(string) string, flag string) (path string, required bool) {
	if flag == "" && getenv != nil {
		return DefaultPath(getenv), false
	}
	return flag, flag != ""
}
