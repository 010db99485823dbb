package rundir

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/llmbench-org/llmbench/client"
)

// The two readers of requests.jsonl agree on any file: the line reader
// (ReadJSONL, what merge and the exports read) and the parallel one
// (readRequests, what a report reads) accept the same files, count the
// same torn lines and, duplicates dropped, give the same records; neither
// panics. Blocks of a few bytes make the parallel reader cut lines
// everywhere.
func FuzzReadJSONL(f *testing.F) {
	whole := `{"id":"a","index":0,"phase":"p","sent_ns":1,"end_ns":2}` + "\n" + `{"id":"b","index":1,"error":"Bearer sk-abcdefghij"}` + "\n"
	for _, seed := range []string{
		"",
		whole,
		whole + `{"id":"c","ind`, // a torn last line
		`{"id":"x","in` + `{"id":"c","index":2}` + "\n", // a torn line with a whole one glued to it
		whole + "not json\n" + whole,                    // a bad line inside
		whole + whole,                                   // every record twice
		"\n\r\n" + whole + "\r\n",                       // empty lines, CRLF
		`{"id":"a","index":0,"chunks":[{"at_ns":1,"tokens":2}]}` + "\n",
	} {
		f.Add([]byte(seed), uint8(7))
	}
	f.Fuzz(func(t *testing.T, data []byte, block uint8) {
		path := filepath.Join(t.TempDir(), RequestsFile)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var lines []client.Record
		partial, lineErr := ReadJSONL(path, func(r *client.Record) error { lines = append(lines, *r); return nil })
		got, err := readRequests(bytes.NewReader(data), path, nil, 3, int64(len(data)), int(block)+1)
		if (lineErr == nil) != (err == nil) {
			t.Fatalf("ReadJSONL: %v; readRequests: %v", lineErr, err)
		}
		if err != nil {
			return
		}
		want, dups := DedupeRecords(lines)
		want = slices.Clone(want)
		slices.SortStableFunc(want, func(a, b client.Record) int { return a.Index - b.Index })
		if got.Partial != partial || got.Duplicates != dups || len(got.Records) != len(want) {
			t.Fatalf("readRequests: %d records, %d partial, %d duplicates; ReadJSONL: %d, %d, %d",
				len(got.Records), got.Partial, got.Duplicates, len(want), partial, dups)
		}
		for i := range want {
			w := want[i]
			RedactRecord(&w)
			g := got.Records[i]
			if g.ID != w.ID || g.Index != w.Index || g.Error != w.Error || g.Phase != w.Phase || g.End != w.End {
				t.Fatalf("record %d: %+v, want %+v", i, g, w)
			}
		}
	})
}
