package scenarios

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Defaults of a capacity search and of an SLO's target.
const (
	DefaultSearchTolerance = 0.10
	DefaultSearchProbes    = 8
	DefaultSLOTarget       = 0.99
)

// What a search varies.
const (
	SearchRate        = "rate"        // open-loop arrivals per second
	SearchConcurrency = "concurrency" // closed-loop users
)

// UntilDecided is the one value of a phase's until: it ends as soon as its
// SLO verdict is pass or fail (its duration and requests still bound it).
const UntilDecided = "decided"

// Search finds the capacity: the largest load in [Min, Max] whose SLO
// verdict passes. Each probe is a measured phase of the workload's length
// (duration, requests, until), its load chosen by bracketing and bisecting
// (docs/decisions/0040).
type Search struct {
	// Over is what the probes vary: rate (open loop, the workload's
	// arrival process) or concurrency (closed loop). Required.
	Over string `yaml:"over"`
	// Min and Max bound the loads probed (requests/s, or users). Required.
	Min float64 `yaml:"min"`
	Max float64 `yaml:"max"`
	// Tolerance is how tight the answer is: the search stops once the
	// smallest failing load is within this fraction above the largest
	// passing one. Default 10%.
	Tolerance Fraction `yaml:"tolerance"`
	// MaxProbes bounds the probes, re-probes of inconclusive points
	// included. Default 8.
	MaxProbes int `yaml:"max_probes"`
}

// Fraction is a share written as a percentage ("99%") or a number in
// [0, 1] (0.99).
type Fraction float64

func (f *Fraction) decodeYAML(d *decoder, n *yaml.Node, path string) {
	n = d.scalarNode(n, path, `a fraction such as "99%" or 0.99`)
	if n == nil {
		return
	}
	text := strings.TrimSpace(n.Value)
	scale := 1.0
	if t, ok := strings.CutSuffix(text, "%"); ok {
		text, scale = strings.TrimSpace(t), 0.01
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		d.errorf(n, path, `want a fraction such as "99%%" or 0.99, got %s`, describe(n))
		return
	}
	*f = Fraction(v * scale)
}

// encodeYAML writes the fraction as a percentage.
func (f Fraction) encodeYAML(*encoder, string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatFloat(float64(f)*100, 'g', -1, 64) + "%"}
}

func (s *Search) fill(d *decoder, path string) {
	if !d.has(joinPath(path, "tolerance")) {
		s.Tolerance = DefaultSearchTolerance
	}
	if !d.has(joinPath(path, "max_probes")) {
		s.MaxProbes = DefaultSearchProbes
	}
}

func (s *Search) validate(d *decoder, path, workload string, load *LoadSpec) {
	at := func(f string) string { return joinPath(path, f) }
	switch s.Over {
	case SearchRate:
		load.validateModifiers(d, workload, true)
		if s.Max > MaxRate {
			checkBound(d, at("max"), s.Max, MaxRate, "requests per second (shard the run beyond it)")
		}
	case SearchConcurrency:
		load.validateModifiers(d, workload, false)
		for _, f := range []string{"min", "max"} {
			v := map[string]float64{"min": s.Min, "max": s.Max}[f]
			if v != math.Trunc(v) {
				d.failf(at(f), "want a whole number of users, got %g", v)
			}
		}
		if s.Max > MaxConcurrency {
			checkBound(d, at("max"), s.Max, MaxConcurrency, "concurrent streams in one process (shard the run beyond it)")
		}
	case "":
		d.failf(at("over"), "missing required field: rate or concurrency")
	default:
		d.failf(at("over"), "want rate or concurrency, got %q", s.Over)
	}
	switch {
	case !d.has(at("min")):
		d.failf(at("min"), "missing required field: the smallest load to probe")
	case s.Min <= 0:
		d.failf(at("min"), "want a load > 0, got %g", s.Min)
	}
	switch {
	case !d.has(at("max")):
		d.failf(at("max"), "missing required field: the largest load to probe")
	case s.Max <= s.Min && s.Min > 0:
		d.failf(at("max"), "want a load above min (%g), got %g", s.Min, s.Max)
	}
	if s.Tolerance <= 0 || s.Tolerance >= 1 {
		d.failf(at("tolerance"), "want a fraction between 0 and 100%% (exclusive), got %g", float64(s.Tolerance))
	}
	if s.MaxProbes < 1 {
		d.failf(at("max_probes"), "want at least 1, got %d", s.MaxProbes)
	}
}

// validateDecisions checks what needs the SLO as a decision: a search, and
// every until (the workload's, each phase's; warmup and cooldown are never
// measured, so never decided).
func (s *Scenario) validateDecisions(d *decoder) {
	w := &s.Workload
	if w.Search != nil && s.SLO == nil {
		d.failf("workload.search", "a search needs the scenario's slo: what a probe must meet to pass (e.g. slo: {ttft: 500ms, target: 99%%})")
	}
	check := func(path, until string) {
		if !d.has(path) {
			return
		}
		switch {
		case until != UntilDecided:
			d.failf(path, "want decided, got %q", until)
		case s.SLO == nil:
			d.failf(path, "until: decided needs the scenario's slo: what the phase is decided against")
		}
	}
	check("workload.until", w.Until)
	for i, ph := range w.Phases {
		check(fmt.Sprintf("workload.phases[%d].until", i), ph.Until)
	}
	for _, side := range []string{"warmup", "cooldown"} {
		notAllowed(d, "workload."+side, []string{"until"}, "not in "+side+": it is not measured, so there is no verdict to wait for")
	}
	if w.Trace != nil {
		notAllowed(d, "workload", []string{"until"}, "not with trace: the trace's timestamps are the load")
	}
}
