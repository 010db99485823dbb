package scenarios

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSearchDefaultsAndRoundTrip(t *testing.T) {
	t.Parallel()
	s, err := parseIn("f.yaml", []byte(`name: s
engine: {kind: sim}
workload:
  search: {over: rate, min: 1, max: 64}
  duration: 5s
  until: decided
slo: {ttft: 500ms}
`), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := Search{Over: SearchRate, Min: 1, Max: 64, Tolerance: 0.10, MaxProbes: 8}
	if diff := cmp.Diff(want, *s.Workload.Search); diff != "" {
		t.Errorf("search (-want +got):\n%s", diff)
	}
	if s.SLO.Target != 0.99 || s.Workload.Until != UntilDecided || s.Workload.Arrival != ArrivalPoisson {
		t.Errorf("slo %+v, until %q, arrival %q: want target 99%%, decided, poisson", s.SLO, s.Workload.Until, s.Workload.Arrival)
	}
	out, err := s.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "target: 99%") || !strings.Contains(string(out), "tolerance: 10%") {
		t.Errorf("resolved scenario does not show the defaults as percentages:\n%s", out)
	}
	back, err := parseIn("f.yaml", out, noEnv)
	if err != nil {
		t.Fatalf("resolved scenario does not parse: %v\n%s", err, out)
	}
	if diff := cmp.Diff(*s.Workload.Search, *back.Workload.Search); diff != "" || back.SLO.Target != s.SLO.Target {
		t.Errorf("round trip (-first +second):\n%s", diff)
	}
}

func TestFractions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want float64
	}{{"90%", 0.9}, {"0.9", 0.9}, {"99.9%", 0.999}, {"1", 1}} {
		s, err := parseIn("f.yaml", []byte("name: s\nengine: {kind: sim}\nworkload: {concurrency: 1, requests: 1}\nslo: {ttft: 1s, target: "+tc.text+"}\n"), noEnv)
		if err != nil {
			t.Errorf("target %s: %v", tc.text, err)
			continue
		}
		if got := float64(s.SLO.Target); got < tc.want-1e-12 || got > tc.want+1e-12 {
			t.Errorf("target %s = %g, want %g", tc.text, got, tc.want)
		}
	}
}

func TestSearchErrors(t *testing.T) {
	t.Parallel()
	const head = "name: x\nengine: {kind: sim}\n"
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"no slo", head + "workload: {search: {over: rate, min: 1, max: 8}, duration: 1s}\n",
			[]string{`f.yaml:3:20: workload.search: a search needs the scenario's slo: what a probe must meet to pass (e.g. slo: {ttft: 500ms, target: 99%})`}},
		{"bad over, max below min", head + "workload: {search: {over: users, min: 4, max: 2}, duration: 1s}\nslo: {ttft: 1s}\n",
			[]string{`f.yaml:3:27: workload.search.over: want rate or concurrency, got "users"`,
				`f.yaml:3:47: workload.search.max: want a load above min (4), got 2`}},
		{"missing bounds and limits", head + "workload: {search: {over: rate}}\nslo: {ttft: 1s}\n",
			[]string{`f.yaml:3:11: workload: missing required field: duration, requests, or both`,
				`f.yaml:3:20: workload.search.min: missing required field: the smallest load to probe`,
				`f.yaml:3:20: workload.search.max: missing required field: the largest load to probe`}},
		{"fractional users, bad tolerance and probes", head + "workload: {search: {over: concurrency, min: 1.5, max: 8, tolerance: 150%, max_probes: 0}, requests: 9}\nslo: {ttft: 1s}\n",
			[]string{`f.yaml:3:45: workload.search.min: want a whole number of users, got 1.5`,
				`f.yaml:3:69: workload.search.tolerance: want a fraction between 0 and 100% (exclusive), got 1.5`,
				`f.yaml:3:87: workload.search.max_probes: want at least 1, got 0`}},
		{"with a load", head + "workload: {search: {over: rate, min: 1, max: 8}, rate: 3, duration: 1s}\nslo: {ttft: 1s}\n",
			[]string{`f.yaml:3:56: workload.rate: not with search: the search chooses each probe's load`}},
		{"until without slo", head + "workload: {concurrency: 1, duration: 1s, until: decided}\n",
			[]string{`f.yaml:3:49: workload.until: until: decided needs the scenario's slo: what the phase is decided against`}},
		{"until what", head + "workload: {concurrency: 1, duration: 1s, until: done}\nslo: {ttft: 1s}\n",
			[]string{`f.yaml:3:49: workload.until: want decided, got "done"`}},
		{"until in warmup", head + "workload: {concurrency: 1, duration: 1s, warmup: {requests: 2, until: decided}}\nslo: {ttft: 1s}\n",
			[]string{`f.yaml:3:71: workload.warmup.until: not in warmup: it is not measured, so there is no verdict to wait for`}},
		{"bad target", head + "workload: {concurrency: 1, duration: 1s}\nslo: {ttft: 1s, target: 120%}\n",
			[]string{`f.yaml:4:25: slo.target: want a share of requests in (0, 100%], got 1.2`}},
		{"target not a fraction", head + "workload: {concurrency: 1, duration: 1s}\nslo: {ttft: 1s, target: most}\n",
			[]string{`f.yaml:4:25: slo.target: want a fraction such as "99%" or 0.99, got the string "most"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseIn("f.yaml", []byte(tc.yaml), noEnv)
			if err == nil {
				t.Fatal("no error")
			}
			if diff := cmp.Diff(tc.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
