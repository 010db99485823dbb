package scenarios

import (
	"fmt"
	"time"
)

// GPUScrape is the GPUs' telemetry exporter scraped beside the engine: its
// rows go to gpu.jsonl, apart from the engine's, and each phase's energy,
// power and utilisation come from them (docs/decisions/1700).
type GPUScrape struct {
	// Exporter is the telemetry dialect: dcgm (NVIDIA's dcgm-exporter, the
	// default and today the only one).
	Exporter string `yaml:"exporter,omitempty"`
	// Targets are the exporters' /metrics URLs (dcgm-exporter listens on
	// :9400), one per node the engine spans. Required for an external or
	// launched engine; the built-in engine serves its own emulation, used
	// when none is given.
	Targets []string `yaml:"targets,omitempty"`
	// Interval between scrapes. Default scrape.interval. dcgm-exporter
	// refreshes every 30 s unless started with -c (collect interval, ms).
	Interval time.Duration `yaml:"interval,omitempty"`
}

// ExporterDCGM is GPUScrape.Exporter's only value.
const ExporterDCGM = "dcgm"

// validateGPUAndCache checks scrape.gpu and the cache settings.
func (s *Scenario) validateGPUAndCache(d *decoder) {
	validateCacheMode(d, "workload.cache", s.Workload.Cache)
	for i, ph := range s.Workload.Phases {
		validateCacheMode(d, fmt.Sprintf("workload.phases[%d].cache", i), ph.Cache)
	}
	for _, side := range []string{"warmup", "cooldown"} {
		if p := "workload." + side + ".cache"; d.has(p) {
			d.failf(p, "not in %s: it is never measured, so its cache does not matter", side)
		}
	}
	g := s.Scrape.GPU
	if g == nil {
		return
	}
	if g.Exporter == "" {
		g.Exporter = ExporterDCGM
	}
	if g.Exporter != ExporterDCGM {
		d.failf("scrape.gpu.exporter", "unknown exporter %q: dcgm", g.Exporter)
	}
	for i, u := range g.Targets {
		checkURL(d, fmt.Sprintf("scrape.gpu.targets[%d]", i), u)
	}
	if len(g.Targets) == 0 && s.Engine.Kind != KindSim {
		d.failf("scrape.gpu.targets", "missing required field: the exporters' /metrics URLs (dcgm-exporter serves :9400/metrics); only the built-in engine emulates its own")
	}
	if d.has("scrape.gpu.interval") && g.Interval <= 0 {
		d.failf("scrape.gpu.interval", "want a positive duration, got %s", g.Interval)
	}
	if g.Interval <= 0 {
		g.Interval = s.Scrape.Interval
	}
}
