package rundir

import (
	"slices"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/chunkdigest"
	"github.com/llmbench-org/llmbench/scrape"
)

// firstSeen finds the records that repeat an earlier record's request ID
// and plan index, as a set of (ID, index) pairs would, for far less: a
// run's plan indexes are mostly 0 to n−1, each held by one request, so the
// first record of each index is found by position in an array of int32
// (nothing for the collector to scan) and its ID compared; only an index
// held by two IDs, or one far beyond the records read, goes to a map.
type firstSeen struct {
	// byIndex[i] is 1 + the position in the records of the first record
	// with plan index i; 0: none yet.
	byIndex []int32
	others  map[idKey]struct{}
}

type idKey struct {
	id    string
	index int
}

// repeated reports whether r (with an ID) repeats a record seen before,
// and remembers it when it does not. kept are the records kept so far: r
// will be kept at position len(kept).
func (f *firstSeen) repeated(kept []client.Record, r *client.Record) bool {
	i := r.Index
	if i >= len(f.byIndex) && i >= 0 && i < 2*len(kept)+1<<16 && len(kept) < 1<<31-1 {
		f.byIndex = append(f.byIndex, make([]int32, max(i+1-len(f.byIndex), len(f.byIndex)/4))...)
	}
	if i >= 0 && i < len(f.byIndex) {
		switch at := f.byIndex[i]; {
		case at == 0:
			// The map may hold it from before byIndex reached i.
			if _, ok := f.others[idKey{r.ID, i}]; ok {
				return true
			}
			f.byIndex[i] = int32(len(kept)) + 1
			return false
		case kept[at-1].ID == r.ID:
			return true
		}
	}
	k := idKey{r.ID, i}
	if _, ok := f.others[k]; ok {
		return true
	}
	if f.others == nil {
		f.others = map[idKey]struct{}{}
	}
	f.others[k] = struct{}{}
	return false
}

// interner makes the records' repeated strings (phase, finish reason, the
// sources and error class) one string each: each batch decodes its own.
type interner struct {
	values map[string]string
	// last is the last value of each field: most records repeat it, and a
	// string compared with itself costs no hashing.
	last [5]string
}

func (n *interner) fields(r *client.Record) {
	n.intern(0, &r.Phase)
	n.intern(1, &r.FinishReason)
	n.intern(2, (*string)(&r.TokenSource))
	n.intern(3, (*string)(&r.TokensPerChunkSource))
	n.intern(4, (*string)(&r.ErrorClass))
}

func (n *interner) intern(field int, s *string) {
	if *s == "" {
		return
	}
	if *s == n.last[field] {
		*s = n.last[field]
		return
	}
	if v, ok := n.values[*s]; ok {
		*s = v
	} else if len(n.values) < 4096 { // only the few values a field repeats
		if n.values == nil {
			n.values = map[string]string{}
		}
		n.values[*s] = *s
	}
	n.last[field] = *s
}

// DigestRecords digests records already in memory (duplicates dropped,
// redacted) as ReadRequests digests a file: their chunks stay.
func DigestRecords(records []client.Record, spans []chunkdigest.Span) *Requests {
	out := &Requests{Records: records, Chunks: make([]chunkdigest.Request, len(records)), Digest: chunkdigest.New(spans)}
	for i := range records {
		out.Chunks[i] = out.Digest.Add(&records[i])
	}
	SortByIndex(out)
	return out
}

// DedupeRecords drops every record that repeats an earlier one's request
// ID and plan index (a requests.jsonl appended onto itself, a shard merged
// twice), keeping the first, and says how many it dropped. Records without
// an ID are kept.
func DedupeRecords(records []client.Record) ([]client.Record, int) {
	type key struct {
		id    string
		index int
	}
	seen := make(map[key]struct{}, len(records))
	var out []client.Record
	dup := 0
	for i, r := range records {
		if r.ID == "" {
			if out != nil {
				out = append(out, r)
			}
			continue
		}
		k := key{r.ID, r.Index}
		if _, ok := seen[k]; ok {
			if out == nil {
				out = slices.Clone(records[:i])
			}
			dup++
			continue
		}
		seen[k] = struct{}{}
		if out != nil {
			out = append(out, r)
		}
	}
	if dup == 0 {
		return records, 0
	}
	return out, dup
}

// Clean prepares raw records and rows read from a run directory for
// reporting: duplicate records dropped (DedupeRecords) and secrets redacted
// (RedactRecord, RedactRow). It returns new slices and leaves its arguments
// untouched.
func Clean(records []client.Record, rows []scrape.Row) ([]client.Record, []scrape.Row, int) {
	records, dup := DedupeRecords(records)
	records = slices.Clone(records)
	for i := range records {
		RedactRecord(&records[i])
	}
	rows = slices.Clone(rows)
	for i := range rows {
		RedactRow(&rows[i])
	}
	return records, rows, dup
}
