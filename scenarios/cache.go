package scenarios

import "slices"

// The prefix cache's state at the start of a measured phase (Workload.Cache,
// Phase.Cache).
const (
	// CacheCold empties the engine's prefix cache before the phase, through
	// the engine's own reset (vLLM's /reset_prefix_cache, SGLang's
	// /flush_cache, llama.cpp's slot erase), so that the phase measures
	// prompts computed from scratch.
	CacheCold = "cold"
	// CacheWarm leaves the cache as earlier phases left it: what a serving
	// engine meets. The default (docs/decisions/1702): a reset is an action
	// on the engine, which not every engine offers (vLLM only in its dev
	// mode, FastDeploy, TGI and Triton not at all), and which would empty a
	// shared engine's cache under other clients' feet.
	CacheWarm = "warm"
)

// CacheModes lists the values cache takes.
var CacheModes = []string{CacheCold, CacheWarm}

// CacheMode is the cache a phase of the plan starts with: cold or warm.
// An explicit phase's own setting wins over the workload's; phases that are
// not measured (warmup, cooldown) start warm: nothing they measure depends
// on it.
func (s Scenario) CacheMode(phase string, measured bool) string {
	if !measured {
		return CacheWarm
	}
	for _, ph := range s.Workload.Phases {
		if ph.Name == phase && ph.Cache != "" {
			return ph.Cache
		}
	}
	if s.Workload.Cache != "" {
		return s.Workload.Cache
	}
	return CacheWarm
}

// ColdAnywhere reports whether some measured phase starts cold.
func (s Scenario) ColdAnywhere() bool {
	if s.Workload.Cache == CacheCold {
		return true
	}
	return slices.ContainsFunc(s.Workload.Phases, func(p Phase) bool { return p.Cache == CacheCold })
}

// CacheNamed reports whether the scenario says anything of the cache.
func (s Scenario) CacheNamed() bool {
	return s.Workload.Cache != "" || slices.ContainsFunc(s.Workload.Phases, func(p Phase) bool { return p.Cache != "" })
}

func validateCacheMode(d *decoder, path, v string) {
	if v != "" && !slices.Contains(CacheModes, v) {
		d.failf(path, "unknown cache %q: cold or warm", v)
	}
}
