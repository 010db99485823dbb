package report

import (
	"strings"
	"testing"
)

// TestCacheFindings: a cold phase whose reset failed warns of it, and its
// cache hits then warn too (carried over or not, they cannot be told
// apart); an emptied phase warns only when its first request hit, and
// hits of later requests are the phase's own shared prefixes (info).
func TestCacheFindings(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	for _, tt := range []struct {
		name  string
		cache CacheResult
		want  []string // "id severity", in order
		words string   // in the last finding's verdict
	}{
		{"emptied, no hits", CacheResult{Mode: "cold", Reset: "ok"}, nil, ""},
		{"warm hits", CacheResult{Mode: "warm", CachedTokens: 500}, nil, ""},
		{"emptied, own prefixes", CacheResult{Mode: "cold", Reset: "ok", CachedTokens: 96, ServerCachedTokens: f(96)},
			[]string{"cold_cache_hits info"}, "shared prefixes"},
		{"emptied, first request hit", CacheResult{Mode: "cold", Reset: "ok", CachedTokens: 96, FirstRequestCached: 96},
			[]string{"cold_cache_hits warn"}, "its first request had 96 cached prompt tokens"},
		{"refused, no hits", CacheResult{Mode: "cold", Reset: "POST /flush_cache: HTTP 401 Unauthorized"},
			[]string{"cache_reset_failed warn"}, "POST /flush_cache: HTTP 401 Unauthorized"},
		{"refused, later hits", CacheResult{Mode: "cold", Reset: "POST /reset_prefix_cache: HTTP 404 Not Found", CachedTokens: 1536},
			[]string{"cache_reset_failed warn", "cold_cache_hits warn"}, "1536 cached tokens by usage, 0 by the engine's counter, 0 on its first request) and its cache was not emptied"},
		{"refused, counter only", CacheResult{Mode: "cold", Reset: "x", ServerCachedTokens: f(10)},
			[]string{"cache_reset_failed warn", "cold_cache_hits warn"}, "10 by the engine's counter"},
	} {
		got := cacheFindings([]PhaseResult{{Name: "p", Measured: true, Cache: &tt.cache}})
		var ids []string
		for _, g := range got {
			ids = append(ids, g.ID+" "+string(g.Severity))
		}
		if strings.Join(ids, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%s: %v, want %v", tt.name, ids, tt.want)
			continue
		}
		if len(got) > 0 && !strings.Contains(got[len(got)-1].Verdict, tt.words) {
			t.Errorf("%s: verdict %q lacks %q", tt.name, got[len(got)-1].Verdict, tt.words)
		}
	}
}
