package tui

import (
	"fmt"

	"github.com/llmbench-org/llmbench/live"
)

// sessionsRow is the window's per-session prefix-cache hit rates of an
// agentic replay (live.SessionsLive, decision 1600), "" without sessions.
func sessionsRow(p live.Progress) string {
	s := p.Sessions
	if s.Sessions == 0 {
		return ""
	}
	return fmt.Sprintf("%d in window · prefix-cache hit p50 %.0f%% · min %.0f%% · %.0f%% overall",
		s.Sessions, 100*s.HitRateP50, 100*s.HitRateMin, 100*s.OverallRate)
}

// imagesRow is the window's images (live.ImagesLive, decision 1502) and
// what the engine charged each, "" without images.
func imagesRow(p live.Progress) string {
	im := p.Images
	if im.Images == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f/s · %.0f prompt tokens each beyond the text · %d in window", im.PerSec, im.TokensPerImage, im.Images)
}
