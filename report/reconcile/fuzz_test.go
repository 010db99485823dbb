package reconcile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape"
)

// runFiles is what report.Build reads from a run directory, as JSON.
type runFiles struct {
	Records []client.Record `json:"records"`
	Rows    []scrape.Row    `json:"rows"`
	Dialect string          `json:"dialect"`
}

// FuzzReconcile: whatever a run directory holds (a torn or hand-edited
// file), reconciling it neither panics nor produces findings that do not
// encode.
func FuzzReconcile(f *testing.F) {
	w := newWorld("sglang")
	in := w.input()
	seed, err := json.Marshal(runFiles{Records: in.Records[:8], Rows: in.Rows[:6], Dialect: "sglang"})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	// Real expositions, as rows: a llama-server before and after three
	// requests, and a vLLM that restarted between two scrapes (issue 10),
	// with a NaN gauge and a negative counter beside them.
	for _, pair := range [][3]string{
		{"llamacpp", "llamacpp_before.txt", "llamacpp_after.txt"},
		{"vllm", "vllm_v1.txt", "vllm_v1_restarted.txt"},
		{"vllm", "vllm_v1_restarted.txt", "vllm_v1.txt"},
	} {
		var rows []scrape.Row
		for i, name := range pair[1:] {
			body, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				f.Fatal(err)
			}
			fams, err := scrape.Parse(body, "text/plain; version=0.0.4")
			if err != nil {
				f.Fatal(err)
			}
			d, _ := scrape.DialectFor(pair[0])
			s := d.Map(fams)
			rows = append(rows, scrape.Row{Target: "t", OK: true, At: time.Duration(i) * time.Second, Snapshot: &s})
		}
		mid := rows[0]
		mid.At = 500 * time.Millisecond
		bad := *mid.Snapshot
		bad.Invalid = map[scrape.Concept]string{scrape.KVCacheUsage: "NaN", scrape.RequestsFinished: "negative"}
		mid.Snapshot = &bad
		b, err := json.Marshal(runFiles{Rows: []scrape.Row{rows[0], mid, rows[1]}, Dialect: pair[0]})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"rows":[{"target":"t","ok":true,"snapshot":{"histograms":{"ttft":{"bounds":[1,2],"cumulative":[1],"count":3,"sum":1}}}},{"target":"t","ok":true,"at_ns":5,"snapshot":{"histograms":{"ttft":{"bounds":[1,2],"cumulative":[5,6,7],"count":9,"sum":4}}}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var rf runFiles
		if json.Unmarshal(b, &rf) != nil || len(rf.Rows) < 2 {
			return
		}
		first, last := rf.Rows[0], rf.Rows[len(rf.Rows)-1]
		in := Input{Records: rf.Records, Rows: rf.Rows, Dialect: rf.Dialect,
			Windows: []Window{{Name: "main", Measured: true, Start: first.At, End: last.At, Before: &first, After: &last}}}
		fs := Reconcile(in)
		if _, err := json.Marshal(fs); err != nil {
			t.Fatalf("findings do not encode: %v", err)
		}
		l := NewLive(1<<40, rf.Dialect)
		for _, r := range rf.Records {
			l.AddRecord(r)
		}
		for _, r := range rf.Rows {
			l.AddRow(r)
		}
		_ = l.Findings(last.At+1<<30, 0)
	})
}
