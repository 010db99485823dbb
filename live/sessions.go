package live

import (
	"fmt"
	"slices"
	"time"

	"github.com/llmbench-org/llmbench/client"
)

// SessionsLive is the prefix cache seen session by session over the
// window, for an agentic replay (decision 1600): of the window's successful
// requests that belong to a session, each session's cached ÷ prompt tokens
// (the engine's usage), their median and lowest, and all of them together.
// The summary's figures are over each whole session; the window's say
// whether the cache keeps the sessions now.
type SessionsLive struct {
	Sessions    int // sessions with prompt tokens in the window
	HitRateP50  float64
	HitRateMin  float64
	OverallRate float64
}

// ImagesLive is the window's images (decision 1502): how many the
// successful requests carried, per second, and the prompt tokens the engine
// charged each beyond the text's planned tokens.
type ImagesLive struct {
	Images         int
	PerSec         float64
	TokensPerImage float64
}

// agenticEvent is what a finished request adds to the window's session
// and image figures.
type agenticEvent struct {
	session        string // "" for none
	prompt, cached int32
	images         int32
	imageTokens    int32 // the engine's prompt tokens less the plan's text
}

// agenticOf is r's session and image counts (zero for a failed request).
func agenticOf(r *client.Record) agenticEvent {
	if !r.OK() || r.PromptTokens <= 0 {
		return agenticEvent{}
	}
	ev := agenticEvent{session: r.Session, prompt: int32(min(r.PromptTokens, 1<<30)), cached: int32(min(max(r.CachedTokens, 0), 1<<30))}
	if r.Images > 0 {
		ev.images = int32(min(r.Images, 1<<30))
		ev.imageTokens = int32(max(min(r.PromptTokens-r.TargetPromptTokens, 1<<30), -1<<30))
	}
	return ev
}

// agenticRates are the window's session and image figures over span.
func agenticRates(events []liveEvent, span time.Duration) (SessionsLive, ImagesLive) {
	type tally struct{ prompt, cached int }
	var by map[string]*tally
	var sl SessionsLive
	var il ImagesLive
	prompt, cached, imageTokens := 0, 0, 0
	for _, ev := range events {
		a := ev.agentic
		il.Images += int(a.images)
		imageTokens += int(a.imageTokens)
		if a.session == "" || a.prompt == 0 {
			continue
		}
		if by == nil {
			by = map[string]*tally{}
		}
		t := by[a.session]
		if t == nil {
			t = &tally{}
			by[a.session] = t
		}
		t.prompt += int(a.prompt)
		t.cached += int(a.cached)
		prompt += int(a.prompt)
		cached += int(a.cached)
	}
	if il.Images > 0 {
		il.TokensPerImage = float64(imageTokens) / float64(il.Images)
		if span > 0 {
			il.PerSec = float64(il.Images) / span.Seconds()
		}
	}
	if len(by) == 0 {
		return sl, il
	}
	rates := make([]float64, 0, len(by))
	for _, t := range by {
		rates = append(rates, float64(t.cached)/float64(t.prompt))
	}
	slices.Sort(rates)
	sl.Sessions = len(rates)
	sl.HitRateMin = rates[0]
	sl.HitRateP50 = rates[(len(rates)-1)/2] // the lower median: a rate that happened
	sl.OverallRate = float64(cached) / float64(prompt)
	return sl, il
}

// agenticSegments are the plain view's session and image figures: the
// window's per-session prefix-cache hit rates and its images.
func agenticSegments(p Progress) []string {
	var out []string
	if s := p.Sessions; s.Sessions > 0 {
		out = append(out, fmt.Sprintf("%d %s: cache hit p50 %.0f%% min %.0f%%, %.0f%% overall",
			s.Sessions, plural(s.Sessions, "session", "sessions"), 100*s.HitRateP50, 100*s.HitRateMin, 100*s.OverallRate))
	}
	if im := p.Images; im.Images > 0 {
		out = append(out, fmt.Sprintf("%.1f images/s, %.0f tok each", im.PerSec, im.TokensPerImage))
	}
	return out
}
