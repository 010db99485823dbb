package gates

import (
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/report"
)

// TestSessionAndImageMetrics: sessions.* read the summary's per-session
// prefix-cache figures and client.tokens.images.* its image charge, decide
// pass and fail on them, and are errors (never passes) on a run without
// sessions or images; sessions.* are the run's, not a phase's.
func TestSessionAndImageMetrics(t *testing.T) {
	t.Parallel()
	s := report.Summary{Percentiles: []float64{50, 99}}
	s.Sessions = &report.Sessions{Count: 3, MinHitRate: 0.4, Overall: 0.63,
		HitRate: report.Dist{N: 3, Mean: 0.6, P50: 0.62, P90: 0.78, P95: 0.79, P99: 0.8, Max: 0.8}}
	s.Client.Tokens.Images = &report.ImageTokens{Requests: 4, Images: 8, Prompt: 3000, TextTarget: 392, Tokens: 2608, PerImage: 326}
	s.Phases = []report.PhaseResult{{Name: "main", Measured: true, Client: s.Client}}
	noSessions := report.Summary{}
	for _, tt := range []struct {
		expr   string
		s      report.Summary
		status Status
		reason string
	}{
		{"sessions.overall_hit_rate >= 60%", s, Pass, ""},
		{"sessions.overall_hit_rate >= 0.64", s, Fail, ""},
		{"sessions.min_hit_rate > 0.5", s, Fail, ""},
		{"sessions.min_hit_rate >= 40%", s, Pass, ""},
		{"sessions.hit_rate.p50 > 0.6", s, Pass, ""},
		{"sessions.hit_rate.max <= 0.79", s, Fail, ""},
		{"sessions.count == 3", s, Pass, ""},
		{"sessions.hit_rate.n == 3", s, Pass, ""},
		{"sessions.overall_hit_rate > 0", noSessions, Error, "the run has no sessions"},
		{"sessions.count >= 0", noSessions, Error, "the run has no sessions"},
		{"sessions.min_hit_rate > 0", report.Summary{Sessions: &report.Sessions{Count: 1}}, Error, "no session had prompt tokens"},
		{"client.tokens.images.per_image == 326", s, Pass, ""},
		{"client.tokens.images.tokens < 2000", s, Fail, ""},
		{"client.tokens.images.images == 8", s, Pass, ""},
		{"phase[main].client.tokens.images.images == 8", s, Pass, ""},
		{"client.tokens.images.images == 0", noSessions, Error, "no successful request carried an image"},
	} {
		g, err := Parse(tt.expr)
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		r := Gates{g}.Evaluate(tt.s, nil)[0]
		if r.Status != tt.status || !strings.Contains(r.Reason, tt.reason) {
			t.Errorf("%s: %s (%s); want %s with %q", tt.expr, r.Status, r.Reason, tt.status, tt.reason)
		}
	}
	for _, bad := range []string{"phase[main].sessions.count > 1", "sessions.hit_rate.p50 < 500ms", "sessions.hit_rate_p50 > 0.5"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
	if _, err := Parse("sessions.overall_hit_rate regression < 5%"); err != nil {
		t.Errorf("a hit rate has a better direction (higher): %v", err)
	}
}
