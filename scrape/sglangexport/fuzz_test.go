package sglangexport

import (
	"testing"
)

// FuzzParseLine: any line either fails with a reason or gives a record with
// an id, stamps in the years 2000 to 2200 and durations and counts that are
// not negative.
func FuzzParseLine(f *testing.F) {
	f.Add([]byte(sglangLine))
	f.Add([]byte(`{"id": "a", "queue_time": 0}`))
	f.Add([]byte(`{"id": "a", "request_parameters": "{\"rid\": 1}"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := ParseLine(line)
		if err != nil {
			return
		}
		if r.ID == "" || r.Queue < 0 || r.E2E < 0 || r.PromptTokens < 0 || r.CompletionTokens < 0 || r.CachedTokens < 0 {
			t.Fatalf("record out of bounds: %+v", r)
		}
		for _, s := range []int64{r.Received, r.DispatchDone, r.ForwardEntry, r.PrefillDone, r.FirstSent, r.Finished} {
			if s != 0 && (s < 946684800e9 || s > 7258118400e9) {
				t.Fatalf("stamp %d out of bounds: %+v", s, r)
			}
		}
	})
}
