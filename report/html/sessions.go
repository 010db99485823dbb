package html

import (
	"fmt"

	"github.com/llmbench-org/llmbench/report"
)

// sessionTiles are an agentic replay's per-session prefix-cache hit rates
// (report.Sessions, decision 1600) as a tile: the median session's, with
// the lowest and the overall under it. None for a run without sessions.
func sessionTiles(ss *report.Sessions) []tile {
	if ss == nil || ss.HitRate.N == 0 {
		return nil
	}
	return []tile{{Label: "prefix cache per session", Value: pct(ss.HitRate.P50), Unit: "p50",
		Sub: fmt.Sprintf("min %s · max %s · %s overall · %s sessions", pct(ss.MinHitRate), pct(ss.HitRate.Max), pct(ss.Overall), count(ss.Count))}}
}

// imageAndSessionFacts are the Tokens section's lines on what the images
// cost (report.ImageTokens, decision 1502) and on the sessions' prefix
// cache, beside the token counts they explain.
func imageAndSessionFacts(s report.Summary) []fact {
	var out []fact
	if im := s.Client.Tokens.Images; im != nil {
		out = append(out, fact{Label: "images", Value: fmt.Sprintf("%s in %s requests; the engine charged %s prompt tokens beyond their text's %s (%.1f per image)",
			count(im.Images), count(im.Requests), count(im.Tokens), count(im.TextTarget), im.PerImage)})
	}
	if ss := s.Sessions; ss != nil {
		out = append(out, fact{Label: "prefix cache per session", Value: fmt.Sprintf("%s sessions: hit rate p50 %s (min %s, max %s), %s of their prompt tokens overall",
			count(ss.Count), pct(ss.HitRate.P50), pct(ss.MinHitRate), pct(ss.HitRate.Max), pct(ss.Overall))})
	}
	return out
}
