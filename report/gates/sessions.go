package gates

import "github.com/llmbench-org/llmbench/report"

// sessionMetrics: the per-session prefix-cache hit rates of an agentic
// replay (report.Sessions, decision 1600), named after summary.json's
// sessions section: sessions.count, sessions.hit_rate.{n,mean,p50,…,max}
// (the distribution over sessions, one sample a session),
// sessions.min_hit_rate and sessions.overall_hit_rate. They belong to the
// whole run (the summary keeps no sessions per phase), so phase[…] does not
// offer them. Absent, and so an error, for a run whose requests belong to
// no session: a gate on a cache that was never measured must not pass.
func (v vocabularyBuilder) sessionMetrics() {
	read := func(get func(*report.Sessions) float64) func(*report.Summary) reading {
		return func(s *report.Summary) reading {
			if s.Sessions == nil {
				return absent("the run has no sessions (only an agentic trace replay has them: workload.trace format weka or copilot)")
			}
			if s.Sessions.HitRate.N == 0 {
				return absent("no session had prompt tokens in the engine's usage")
			}
			return value(get(s.Sessions))
		}
	}
	v.add(metric{name: "sessions.count", unit: count, better: neither, doc: "sessions with a successful measured request",
		read: func(s *report.Summary) reading {
			if s.Sessions == nil {
				return absent("the run has no sessions (only an agentic trace replay has them: workload.trace format weka or copilot)")
			}
			return value(float64(s.Sessions.Count))
		}})
	v.add(metric{name: "sessions.hit_rate.n", unit: count, better: neither, doc: "sessions whose prefix-cache hit rate was measured (prompt tokens in the engine's usage)",
		read: read(func(ss *report.Sessions) float64 { return float64(ss.HitRate.N) })})
	hitRate := func(s *report.Summary) report.Dist {
		if s.Sessions == nil {
			return report.Dist{}
		}
		return s.Sessions.HitRate
	}
	for _, st := range distStats {
		v.add(metric{name: "sessions.hit_rate." + st.name, unit: fraction, better: higher, dist: hitRate,
			doc:  st.name + " over sessions of each session's prefix-cache hit rate (its cached ÷ prompt tokens, the engine's usage)",
			read: read(func(ss *report.Sessions) float64 { return st.get(ss.HitRate) })})
	}
	v.add(metric{name: "sessions.min_hit_rate", unit: fraction, better: higher,
		doc:  "the lowest session's prefix-cache hit rate (its cached ÷ prompt tokens)",
		read: read(func(ss *report.Sessions) float64 { return ss.MinHitRate })})
	v.add(metric{name: "sessions.overall_hit_rate", unit: fraction, better: higher,
		doc:  "every session's cached prompt tokens ÷ their prompt tokens (the engine's usage)",
		read: read(func(ss *report.Sessions) float64 { return ss.Overall })})
}
