package report

import (
	"fmt"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/reconcile"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// CacheResult is the prefix cache a phase started with, and the cache hits
// it then saw (docs/decisions/1702).
type CacheResult struct {
	Mode string `json:"mode"` // cold | warm
	// Default says the scenario named no cache (warm by default).
	Default bool `json:"default,omitempty"`
	// Reset is, for cold, "ok" or why the cache could not be emptied.
	Reset string `json:"reset,omitempty"`
	// CachedTokens is the prompt tokens the engine reported as prefix-cache
	// hits in its answers' usage (prompt_tokens_details.cached_tokens);
	// ServerCachedTokens its counter's increase over the phase (cached
	// tokens, else prefix-cache hits), absent where it has none.
	CachedTokens       int      `json:"cached_tokens"`
	ServerCachedTokens *float64 `json:"server_cached_tokens,omitempty"`
	// FirstRequestCached is the cached tokens of the phase's first request:
	// after a reset nothing can be cached for it, while later requests may
	// hit prefixes the phase's own earlier requests computed.
	FirstRequestCached int `json:"first_request_cached_tokens"`
}

// Finding ids of the prefix cache.
const (
	// IDColdCacheHits: a phase meant to start cold reported cache hits.
	IDColdCacheHits = "cold_cache_hits"
	// IDCacheResetFailed: a cold phase's reset did not happen.
	IDCacheResetFailed = "cache_reset_failed"
)

// cacheOf is a phase's cache state; nil when the run recorded none.
func cacheOf(ph rundir.PhaseMeta, pr PhaseResult, records []client.Record) *CacheResult {
	if ph.Cache == nil {
		return nil
	}
	c := &CacheResult{Mode: ph.Cache.Mode, Default: ph.Cache.Default, Reset: ph.Cache.Reset, CachedTokens: pr.Client.Tokens.Cached}
	if sv := pr.Server; sv != nil {
		for _, name := range []scrape.Concept{scrape.CachedTokens, scrape.PrefixHits} {
			if v, ok := sv.Counters[string(name)]; ok {
				c.ServerCachedTokens = &v
				break
			}
		}
	}
	first := -1
	for i := range records {
		r := &records[i]
		if r.Phase == ph.Name && r.OK() && (first < 0 || r.Sent < records[first].Sent) {
			first = i
		}
	}
	if first >= 0 {
		c.FirstRequestCached = records[first].CachedTokens
	}
	return c
}

// cacheFindings: a cold phase whose reset failed, and a cold phase that
// still reports hits (on its first request: the reset did not empty the
// cache; on later ones only: the phase's own requests share prefixes).
func cacheFindings(phases []PhaseResult) []Finding {
	var out []Finding
	for _, ph := range phases {
		c := ph.Cache
		if c == nil || c.Mode != "cold" {
			continue
		}
		if c.Reset != "ok" {
			out = append(out, Finding{ID: IDCacheResetFailed, Severity: reconcile.Warn,
				Verdict: fmt.Sprintf("phase %s was meant to start with a cold prefix cache, but it could not be emptied: %s", ph.Name, c.Reset)})
		}
		server := 0.0
		if c.ServerCachedTokens != nil {
			server = *c.ServerCachedTokens
		}
		switch {
		case c.Reset != "ok" && (c.CachedTokens > 0 || server > 0):
			// Not emptied: its hits may be the earlier phases' prompts, and
			// which are cannot be told apart.
			out = append(out, Finding{ID: IDColdCacheHits, Severity: reconcile.Warn,
				Verdict: fmt.Sprintf("phase %s was meant to start cold, yet it reported cache hits (%d cached tokens by usage, %.0f by the engine's counter, %d on its first request) and its cache was not emptied: its figures are warm ones",
					ph.Name, c.CachedTokens, server, c.FirstRequestCached),
				Evidence: map[string]float64{"first_request_cached_tokens": float64(c.FirstRequestCached), "cached_tokens": float64(c.CachedTokens), "server_cached_tokens": server}})
		case c.FirstRequestCached > 0:
			out = append(out, Finding{ID: IDColdCacheHits, Severity: reconcile.Warn,
				Verdict:  fmt.Sprintf("phase %s was meant to start cold, yet its first request had %d cached prompt tokens: the cache was not empty (another client's traffic, or a reset the engine ignored)", ph.Name, c.FirstRequestCached),
				Evidence: map[string]float64{"first_request_cached_tokens": float64(c.FirstRequestCached), "cached_tokens": float64(c.CachedTokens), "server_cached_tokens": server}})
		case c.CachedTokens > 0 || server > 0:
			out = append(out, Finding{ID: IDColdCacheHits, Severity: reconcile.Info,
				Verdict:  fmt.Sprintf("phase %s started cold, and its requests then hit prompts its own earlier requests had computed (%d cached tokens by usage, %.0f by the engine's counter): shared prefixes, not carried over", ph.Name, c.CachedTokens, server),
				Evidence: map[string]float64{"cached_tokens": float64(c.CachedTokens), "server_cached_tokens": server}})
		}
	}
	return out
}
