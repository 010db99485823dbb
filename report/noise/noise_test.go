package noise

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/gates"
	"github.com/llmbench-org/llmbench/rundir"
)

func runWith(ttftP50, rps float64, valid bool) gates.Run {
	var s report.Summary
	s.Health.Valid = valid
	s.Client.Latency.TTFT = report.Dist{N: 100, Mean: ttftP50, P50: ttftP50, P90: ttftP50, P95: ttftP50, P99: ttftP50, Max: ttftP50}
	s.Client.Throughput.RequestsPerSec = rps
	return gates.Run{Summary: s}
}

// Learn records each pair's regression and takes the largest as the floor;
// metrics a pair lacks are left out, a pair with a run not valid is counted.
func TestLearn(t *testing.T) {
	pairs := [][2]gates.Run{
		{runWith(0.100, 10, true), runWith(0.110, 10, true)}, // TTFT +10 %
		{runWith(0.100, 10, true), runWith(0.095, 8, false)}, // −5 %; throughput −20 %
	}
	e, err := Learn(Key{Scenario: "s", ScenarioHash: "h", Host: "m"}, pairs, []string{"client.ttft.p50", "client.itl.p50", "client.throughput.requests_per_s"}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if e.Pairs != 2 || e.InvalidPairs != 1 {
		t.Errorf("pairs %d, invalid %d", e.Pairs, e.InvalidPairs)
	}
	ttft := e.Metrics["client.ttft.p50"]
	if len(ttft.Regressions) != 2 || math.Abs(ttft.Regressions[0]-0.10) > 1e-9 || math.Abs(ttft.Regressions[1]+0.05) > 1e-9 || math.Abs(ttft.Floor-0.10) > 1e-9 {
		t.Errorf("ttft %+v", ttft)
	}
	if rps := e.Metrics["client.throughput.requests_per_s"]; math.Abs(rps.Floor-0.20) > 1e-9 {
		t.Errorf("throughput floor %v, want 0.20 (a 20 %% drop is a 20 %% regression)", rps.Floor)
	}
	if _, ok := e.Metrics["client.itl.p50"]; ok {
		t.Error("a metric no run measured has a floor")
	}
	if _, err := Learn(Key{}, pairs, []string{"client.itl.p50"}, time.Now()); err == nil {
		t.Error("nothing measured must be an error")
	}
}

// A noise file round trip: Put replaces an entry of the same key, Lookup
// finds it by scenario hash and host, and the floors name where they came
// from.
func TestFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "noise.json")
	f, err := Load(path)
	if err != nil || len(f.Entries) != 0 {
		t.Fatalf("a missing file: %+v, %v", f, err)
	}
	k := Key{Scenario: "ci-gate", ScenarioHash: "abc", Host: "m1"}
	f.Put(Entry{Key: k, Pairs: 3, Metrics: map[string]Metric{"client.ttft.p99": {Floor: 0.3}}})
	f.Put(Entry{Key: Key{Scenario: "ci-gate", ScenarioHash: "abc", Host: "m2"}, Pairs: 4})
	f.Put(Entry{Key: k, Pairs: 5, Metrics: map[string]Metric{"client.ttft.p99": {Floor: 0.2}}})
	if err := f.Save(path); err != nil {
		t.Fatal(err)
	}
	g, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := g.Lookup(k)
	if !ok || e.Pairs != 5 || len(g.Entries) != 2 {
		t.Fatalf("lookup %+v %v of %d entries", e, ok, len(g.Entries))
	}
	fl := e.Floors(path)
	if fl.ByMetric["client.ttft.p99"] != 0.2 || !strings.Contains(fl.From, "5 A/A pairs of ci-gate on m1") {
		t.Errorf("floors %+v", fl)
	}
	if _, ok := g.Lookup(Key{ScenarioHash: "abc", Host: "m3"}); ok {
		t.Error("another host's floors were found")
	}
	if err := os.WriteFile(path, []byte(`{"schema":"other"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil {
		t.Error("a file of another schema loaded")
	}
}

// The key of a run directory is its scenario's hash and its host; a trial
// set's is its first trial's.
func TestKeyOf(t *testing.T) {
	dir := t.TempDir()
	write := func(name, scenario, host string) string {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(rundir.RunMeta{ID: name, Scenario: "s", Host: host})
		if err := os.WriteFile(filepath.Join(d, rundir.RunFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, rundir.ScenarioFile), []byte(scenario), 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	a := write("a", "name: s\n", "m1")
	b := write("b", "name: s\n", "m1")
	c := write("c", "name: s\nseed: 2\n", "m1")
	ka, err := KeyOf(a)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := KeyOf(b)
	kc, _ := KeyOf(c)
	if ka != kb || ka.ScenarioHash == kc.ScenarioHash || ka.Host != "m1" || ka.Scenario != "s" {
		t.Errorf("keys %+v %+v %+v", ka, kb, kc)
	}
	if err := rundir.WriteTrials(dir, []string{"c", "a"}); err != nil {
		t.Fatal(err)
	}
	if k, err := KeyOf(dir); err != nil || k != kc {
		t.Errorf("a trial set's key %+v (%v), want its first trial's %+v", k, err, kc)
	}
}

func TestDefaultPath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"LLMBENCH_NOISE": "/x/n.json", "HOME": "/h"}, "/x/n.json"},
		{map[string]string{"XDG_CONFIG_HOME": "/c", "HOME": "/h"}, "/c/llmbench/noise.json"},
		{map[string]string{"HOME": "/h"}, "/h/.config/llmbench/noise.json"},
		{map[string]string{}, ""},
	} {
		if got := DefaultPath(env(tt.env)); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.env, got, tt.want)
		}
	}
}
