package report

import (
	"cmp"
	"fmt"
	"slices"
)

// Sessions is the engine's prefix cache seen session by session, for a run
// whose requests belong to sessions (an agentic replay, decision 1600): a
// session's calls each resend its whole history, so the share of their
// prompt tokens the engine served from its cache is how well it kept the
// session (on one replica, in its cache between calls).
type Sessions struct {
	Count int `json:"count"` // sessions with a successful measured request
	// HitRate is the distribution over sessions of their cached over
	// prompt tokens (0 to 1), from the engine's usage; one sample a session.
	HitRate Dist `json:"hit_rate"`
	// MinHitRate is the lowest session's (Dist has no minimum).
	MinHitRate float64 `json:"min_hit_rate"`
	// Overall is every session's cached tokens over their prompt tokens.
	Overall float64 `json:"overall_hit_rate"`
	// List is each session's own figures, by session id; at most
	// maxListedSessions (Count says how many there were).
	List []SessionCache `json:"list"`
}

// SessionCache is one session's prefix-cache figures.
type SessionCache struct {
	Session      string  `json:"session"`
	Requests     int     `json:"requests"`
	PromptTokens int     `json:"prompt_tokens"`
	CachedTokens int     `json:"cached_tokens"`
	HitRate      float64 `json:"hit_rate"` // CachedTokens / PromptTokens
}

// maxListedSessions bounds the sessions a summary lists one by one.
const maxListedSessions = 10_000

// sessionsOf is the sessions of the measured records that succeeded; nil
// when none belongs to a session.
func sessionsOf(records []request) *Sessions {
	by := map[string]*SessionCache{}
	for _, r := range records {
		if r.Session == "" || !r.OK() {
			continue
		}
		sc := by[r.Session]
		if sc == nil {
			sc = &SessionCache{Session: r.Session}
			by[r.Session] = sc
		}
		sc.Requests++
		sc.PromptTokens += r.PromptTokens
		sc.CachedTokens += r.CachedTokens
	}
	if len(by) == 0 {
		return nil
	}
	list := make([]SessionCache, 0, len(by))
	rates := make([]float64, 0, len(by))
	prompt, cached := 0, 0
	for _, sc := range by {
		if sc.PromptTokens > 0 {
			sc.HitRate = float64(sc.CachedTokens) / float64(sc.PromptTokens)
			rates = append(rates, sc.HitRate)
		}
		prompt += sc.PromptTokens
		cached += sc.CachedTokens
		list = append(list, *sc)
	}
	slices.SortFunc(list, func(a, b SessionCache) int { return cmp.Compare(a.Session, b.Session) })
	s := &Sessions{Count: len(list), HitRate: distOf(rates), List: list[:min(len(list), maxListedSessions)]}
	if prompt > 0 {
		s.Overall = float64(cached) / float64(prompt)
	}
	if len(rates) > 0 {
		s.MinHitRate = slices.Min(rates)
	}
	return s
}

// String is the sessions in one line for the text summary ("" for none):
// "sessions: 3, prefix-cache hit rate per session p50 62% (min 40%, max
// 80%), 63% overall".
func (s *Sessions) String() string {
	if s == nil {
		return ""
	}
	return fmt.Sprintf("sessions: %d, prefix-cache hit rate per session p50 %.0f%% (min %.0f%%, max %.0f%%), %.0f%% overall",
		s.Count, 100*s.HitRate.P50, 100*s.MinHitRate, 100*s.HitRate.Max, 100*s.Overall)
}
