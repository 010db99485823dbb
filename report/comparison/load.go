package comparison

import "github.com/llmbench-org/llmbench/report/sentload"

// noteSentLoad says in a whether the runs sent the same load, by their
// summaries' fingerprints (decision 2221), and notes it; nothing when a
// summary has none.
func noteSentLoad(a *Against, base, cur *sentload.Fingerprint) {
	if base == nil || cur == nil {
		a.Notes = append(a.Notes, "a summary has no load fingerprint (written before llmbench kept one): whether the runs sent the same load is not known")
		return
	}
	v := sentload.Same(*base, *cur)
	a.Load = &v
	a.Notes = append(a.Notes, "load: "+v.Says())
}
