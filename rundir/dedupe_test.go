package rundir

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/llmbench-org/llmbench/client"
)

// firstSeen finds exactly the records a set of (ID, plan index) pairs
// finds: two IDs on one index, one ID on two indexes, negative and far
// indexes included.
func TestFirstSeenIsASetOfPairs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		records []client.Record
	}{
		{"two ids on one index", recs("a", 0, "b", 0, "b", 0, "a", 0, "c", 0)},
		{"one id on two indexes", recs("a", 0, "a", 1, "a", 0, "a", 1)},
		{"negative and far indexes", recs("a", -1, "a", -1, "b", 1<<40, "b", 1<<40, "c", 1<<20, "c", 1<<20)},
		{"random", func() []client.Record {
			rng := rand.New(rand.NewPCG(7, 8))
			var rs []client.Record
			for range 50_000 {
				rs = append(rs, client.Record{ID: strconv.Itoa(rng.IntN(200)), Index: rng.IntN(120_000) - 100})
			}
			return rs
		}()},
	} {
		t.Run(c.name, func(t *testing.T) {
			var f firstSeen
			set := map[idKey]bool{}
			var kept []client.Record
			for i, r := range c.records {
				k := idKey{r.ID, r.Index}
				if got, want := f.repeated(kept, &r), set[k]; got != want {
					t.Fatalf("record %d %+v: repeated %v, want %v", i, k, got, want)
				}
				if !set[k] {
					set[k] = true
					kept = append(kept, r)
				}
			}
		})
	}
}

// recs are records of the given (ID, index) pairs.
func recs(pairs ...any) []client.Record {
	var out []client.Record
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, client.Record{ID: pairs[i].(string), Index: pairs[i+1].(int)})
	}
	return out
}
