package html

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

var secrets = []string{"hunter2", "s3cr3t-q", "sk-abcdefghijklmnop", "eyJhbGciOiJIUzI1NiJ9", "promtok42"}

// A run directory whose run.json, records and scrapes carry secrets (URL
// passwords, query tokens, API keys echoed in errors) renders a page that
// holds none of them, and counts each request once however often
// requests.jsonl holds it.
func TestPageHoldsNoSecret(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	target := "http://admin:hunter2@engine.example/metrics?token=promtok42"
	meta := rundir.RunMeta{ID: "secret-run", Scenario: "secret", StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Ended: time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC),
		Engine: rundir.EngineMeta{Kind: "external", Dialect: "vllm", BaseURL: "https://bob:hunter2@engine.example/v1?api_key=s3cr3t-q",
			MetricsURL: target, Model: "m", Notes: []string{"key sk-abcdefghijklmnop from OPENAI_API_KEY"}},
		Phases: []rundir.PhaseMeta{{Name: "main", Measured: true, Start: 0, End: time.Second}}}
	var recs []client.Record
	for i := range 8 {
		sent := time.Duration(10+100*i) * ms
		r := client.Record{ID: "r" + string(rune('0'+i)), Index: i, Phase: "main", Sent: sent, Wrote: sent, FirstToken: sent + 20*ms, End: sent + 80*ms,
			OutputTokens: 4, TokenSource: client.TokensFromUsage, Status: 200,
			Chunks: []client.Chunk{{At: sent + 20*ms, Tokens: 2}, {At: sent + 60*ms, Tokens: 2}}}
		recs = append(recs, r)
	}
	recs[6].ErrorClass, recs[6].Status, recs[6].Error = client.ErrHTTPStatus, 401, `status 401: invalid key sk-abcdefghijklmnop (Authorization: Bearer eyJhbGciOiJIUzI1NiJ9)`
	recs[7].ErrorClass, recs[7].Error = client.ErrConnect, `Post "https://bob:hunter2@engine.example/v1/chat/completions?api_key=s3cr3t-q": connection refused`
	rows := []scrape.Row{
		{Target: target, At: 100 * ms, OK: true, Snapshot: &scrape.Snapshot{Dialect: "vllm", Gauges: map[scrape.Concept]float64{scrape.RequestsRunning: 2}}},
		{Target: target, At: 500 * ms, Error: `Get "` + target + `": 401 Unauthorized`},
		{Target: target, At: 900 * ms, OK: true, Snapshot: &scrape.Snapshot{Dialect: "vllm", Gauges: map[scrape.Concept]float64{scrape.RequestsRunning: 1}}},
	}
	dir := t.TempDir()
	lines := func(vs ...any) []byte {
		var b []byte
		for _, v := range vs {
			j, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			b = append(append(b, j...), '\n')
		}
		return b
	}
	var reqs, scr []any
	for _, r := range recs {
		reqs = append(reqs, r)
	}
	for _, r := range rows {
		scr = append(scr, r)
	}
	req := lines(reqs...)
	for name, b := range map[string][]byte{rundir.RunFile: lines(meta), rundir.RequestsFile: append(req, req...), rundir.ScrapesFile: lines(scr...)} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Records) != len(recs) || in.Summary.Client.Requests.Sent != len(recs) || in.Summary.Health.DuplicateRecords != len(recs) {
		t.Errorf("%d records, %d sent, %d duplicates: want %d, %d, %d", len(in.Records), in.Summary.Client.Requests.Sent,
			in.Summary.Health.DuplicateRecords, len(recs), len(recs), len(recs))
	}
	check := func(name, page string) {
		for _, s := range secrets {
			if strings.Contains(page, s) {
				t.Errorf("%s: the page holds %q", name, s)
			}
		}
		for _, want := range []string{"REDACTED", "connection refused", "invalid key", "401 Unauthorized"} {
			if !strings.Contains(page, want) {
				t.Errorf("%s: the page does not show %q", name, want)
			}
		}
	}
	check("loaded", renderString(t, in))
	// Raw records and rows handed to Render directly are redacted where
	// the page shows them.
	check("raw", renderString(t, Input{Summary: in.Summary, Records: recs, Rows: rows}))
}
