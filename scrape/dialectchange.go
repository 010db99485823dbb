package scrape

import "time"

// DialectChange is one target's /metrics changing from one engine family's
// names to another's between two successful scrapes: another server took
// the port, or a gateway switched backends. The counters before and after
// belong to different engines, so no delta is taken across a change (Delta
// and Increase never difference one family's counter with another's): it
// is a change of engine, not traffic.
type DialectChange struct {
	Target string        `json:"target"`
	From   string        `json:"from"`    // the dialect of the last scrape before
	To     string        `json:"to"`      // and of the first scrape after
	Last   time.Duration `json:"last_ns"` // run clock of the last scrape in From's names
	At     time.Duration `json:"at_ns"`   // run clock of the first scrape in To's names
	Wall   time.Time     `json:"wall,omitempty"`
}

// dialectsDiffer reports whether two snapshots are different engine
// families' metrics. A snapshot with no dialect (nothing recognised) is no
// evidence of a change.
func dialectsDiffer(a, b *Snapshot) bool {
	return a != nil && b != nil && a.Dialect != "" && b.Dialect != "" && a.Dialect != b.Dialect
}

// DialectChanges returns every change of dialect in rows, per target, in
// the rows' order (failed scrapes and scrapes that recognised nothing are
// skipped).
func DialectChanges(rows []Row) []DialectChange {
	var out []DialectChange
	last := map[string]*Row{}
	for i := range rows {
		r := &rows[i]
		if !r.OK || r.Snapshot == nil || r.Snapshot.Dialect == "" {
			continue
		}
		if p := last[r.Target]; p != nil && dialectsDiffer(p.Snapshot, r.Snapshot) {
			out = append(out, DialectChange{Target: r.Target, From: p.Snapshot.Dialect, To: r.Snapshot.Dialect, Last: p.At, At: r.At, Wall: r.Wall})
		}
		last[r.Target] = r
	}
	return out
}
