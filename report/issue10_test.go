package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/live"
	"github.com/llmbench-org/llmbench/redact"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// writeDir lays meta, records and rows out as a run directory, each JSONL
// line as the Recorder writes it, and returns the directory and the
// requests file's bytes.
func writeDir(t *testing.T, meta rundir.RunMeta, recs []client.Record, rows []scrape.Row) (string, []byte) {
	t.Helper()
	dir := t.TempDir()
	b, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(rundir.RunFile, b)
	var req, scr bytes.Buffer
	for _, r := range recs {
		j, _ := json.Marshal(r)
		req.Write(append(j, '\n'))
	}
	for _, r := range rows {
		j, _ := json.Marshal(r)
		scr.Write(append(j, '\n'))
	}
	write(rundir.RequestsFile, req.Bytes())
	write(rundir.ScrapesFile, scr.Bytes())
	return dir, req.Bytes()
}

func ended(meta rundir.RunMeta) rundir.RunMeta {
	meta.Ended = meta.StartedAt.Add(time.Second)
	return meta
}

func textOf(t *testing.T, s Summary) string {
	t.Helper()
	var b bytes.Buffer
	if err := RenderText(&b, s); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A run killed with -9 leaves run.json without its end and its phase
// without an end time: not valid, and no negative duration.
func TestBuildMarksAKilledRunNotValid(t *testing.T) {
	t.Parallel()
	meta, recs, rows := fixedRun()
	t.Run("finished", func(t *testing.T) {
		t.Parallel()
		dir, _ := writeDir(t, ended(meta), recs, rows)
		s, err := Build(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !s.Health.Valid || s.Health.Unfinished || s.Health.Records != len(recs) {
			t.Errorf("a finished run: valid %v, unfinished %v, records %d; problems %q", s.Health.Valid, s.Health.Unfinished, s.Health.Records, s.Health.Problems)
		}
	})
	t.Run("killed mid-phase", func(t *testing.T) {
		t.Parallel()
		killed := meta
		killed.Phases = []rundir.PhaseMeta{{Name: "main", Measured: true, Start: 100 * time.Millisecond}} // no end yet
		dir, _ := writeDir(t, killed, recs, rows)
		s, err := Build(dir)
		if err != nil {
			t.Fatal(err)
		}
		want := "the run did not finish: llmbench was stopped before it wrote its end (killed?); 6 records were read"
		if s.Health.Valid || !s.Health.Unfinished || !contains(s.Health.Problems, want) {
			t.Errorf("valid %v, unfinished %v, problems %q: want not valid with %q", s.Health.Valid, s.Health.Unfinished, s.Health.Problems, want)
		}
		if s.Run.Duration <= 0 || s.Phases[0].Duration <= 0 || s.Client.Throughput.RequestsPerSec <= 0 {
			t.Errorf("duration %v s, phase %v s, %v req/s: want the phase closed at its last record", s.Run.Duration, s.Phases[0].Duration, s.Client.Throughput.RequestsPerSec)
		}
		text := textOf(t, s)
		if strings.Contains(text, "-0.") || !hasText(text, "NOT VALID: "+want) {
			t.Errorf("text summary:\n%s", text)
		}
	})
}

func contains(ss []string, want string) bool {
	for _, s := range ss {
		if s == want {
			return true
		}
	}
	return false
}

func containsPart(ss []string, part string) bool {
	for _, s := range ss {
		if strings.Contains(s, part) {
			return true
		}
	}
	return false
}

func TestBuildCountsTornAndDuplicateLines(t *testing.T) {
	t.Parallel()
	meta, recs, rows := fixedRun()
	meta = ended(meta)
	t.Run("torn last line", func(t *testing.T) {
		t.Parallel()
		dir, req := writeDir(t, meta, recs, rows)
		last, _ := json.Marshal(client.Record{ID: "fixed-1-9", Index: 9, Phase: "main", Sent: time.Second, End: 2 * time.Second})
		torn := append(req, last[:len(last)/2]...) // the disk filled mid-write
		if err := os.WriteFile(filepath.Join(dir, rundir.RequestsFile), torn, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Build(dir)
		if err != nil {
			t.Fatal(err)
		}
		if s.Health.PartialLines != 1 || s.Health.Valid || !containsPart(s.Health.Problems, "torn JSONL line was skipped") {
			t.Errorf("partial lines %d, valid %v, problems %q", s.Health.PartialLines, s.Health.Valid, s.Health.Problems)
		}
		if s.Client.Requests.Sent != len(recs) {
			t.Errorf("sent %d, want the %d whole records", s.Client.Requests.Sent, len(recs))
		}
		if text := textOf(t, s); !strings.Contains(text, "1 torn line skipped") || !strings.Contains(text, "NOT VALID: 1 torn JSONL line") {
			t.Errorf("the text summary does not say so:\n%s", text)
		}
	})
	t.Run("torn line inside the file", func(t *testing.T) {
		t.Parallel()
		dir, req := writeDir(t, meta, recs, rows)
		lines := bytes.SplitAfter(req, []byte("\n"))
		// The disk filled while the third line was written; the writes
		// after it went on, glued to the torn fragment.
		third := lines[2]
		torn := slicesConcat(lines[:2], [][]byte{third[:len(third)/2]}, lines[3:])
		if err := os.WriteFile(filepath.Join(dir, rundir.RequestsFile), bytes.Join(torn, nil), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Build(dir)
		if err != nil {
			t.Fatal(err)
		}
		if s.Client.Requests.Sent != len(recs)-1 || s.Health.PartialLines != 1 || s.Health.Valid {
			t.Errorf("sent %d, partial lines %d, valid %v: want %d, 1, false", s.Client.Requests.Sent, s.Health.PartialLines, s.Health.Valid, len(recs)-1)
		}
	})
	t.Run("requests.jsonl appended onto itself", func(t *testing.T) {
		t.Parallel()
		dir, req := writeDir(t, meta, recs, rows)
		if err := os.WriteFile(filepath.Join(dir, rundir.RequestsFile), append(req, req...), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Build(dir)
		if err != nil {
			t.Fatal(err)
		}
		c := s.Client.Requests
		if c.Sent != 6 || c.OK != 5 || c.Failed != 1 {
			t.Errorf("sent %d, ok %d, failed %d: want 6, 5, 1 (the first of each)", c.Sent, c.OK, c.Failed)
		}
		if s.Health.DuplicateRecords != 6 || s.Health.Records != 6 || s.Health.Valid || !containsPart(s.Health.Problems, "6 records repeated an ID already seen") {
			t.Errorf("duplicates %d, records %d, valid %v, problems %q", s.Health.DuplicateRecords, s.Health.Records, s.Health.Valid, s.Health.Problems)
		}
		if text := textOf(t, s); !strings.Contains(text, "6 duplicate records dropped") {
			t.Errorf("the text summary does not say so:\n%s", text)
		}
	})
}

// Requests cancelled by a second Ctrl-C are counted apart: not failures.
func TestCanceledRequestsAreNotFailures(t *testing.T) {
	t.Parallel()
	meta, recs, rows := fixedRun()
	recs[4].ErrorClass, recs[4].Error = client.ErrCanceled, "context canceled"
	meta.SLO = &rundir.SLO{E2E: time.Second}
	s := Compute(meta, recs, rows, nil, 0)
	c := s.Client.Requests
	if c.Sent != 6 || c.OK != 4 || c.Failed != 1 || c.Canceled != 1 || c.Errors["canceled"] != 0 || c.Errors["http_status"] != 1 {
		t.Errorf("sent %d ok %d failed %d canceled %d errors %v: want 6, 4, 1, 1 and no canceled error", c.Sent, c.OK, c.Failed, c.Canceled, c.Errors)
	}
	if g := s.Client.Goodput; g == nil || g.Canceled != 1 || g.Fraction != 4.0/5 {
		t.Errorf("goodput %+v: want 4 good of the 5 that were not cancelled", g)
	}
	if text := textOf(t, s); !strings.Contains(text, "requests: 4 ok, 1 failed (http_status 1), 1 canceled by the abort (not failures)") {
		t.Errorf("text summary:\n%s", text)
	}
}

// secrets are what a run directory may carry: passwords in URLs, query
// tokens expanded from ${VAR}, API keys echoed in error messages.
var secrets = []string{"hunter2", "s3cr3t-q", "sk-abcdefghijklmnop", "eyJhbGciOiJIUzI1NiJ9", "promtok42"}

// SecretRun is fixedRun with secrets everywhere text comes from outside.
func secretRun() (rundir.RunMeta, []client.Record, []scrape.Row) {
	meta, recs, rows := fixedRun()
	meta = ended(meta)
	meta.Engine.BaseURL = "https://bob:hunter2@engine.example/v1?api_key=s3cr3t-q"
	meta.Engine.MetricsURL = "https://bob:hunter2@engine.example/metrics?token=s3cr3t-q"
	meta.Engine.Notes = []string{"model read from https://engine.example/v1/models?key=s3cr3t-q", "key sk-abcdefghijklmnop from OPENAI_API_KEY"}
	recs[5].Error = `status 401: {"error":"invalid key sk-abcdefghijklmnop"} (Authorization: Bearer eyJhbGciOiJIUzI1NiJ9)`
	recs[4].ErrorClass, recs[4].Error = client.ErrConnect, `Post "https://bob:hunter2@engine.example/v1/chat/completions?api_key=s3cr3t-q": connection refused`
	target := "http://admin:hunter2@engine.example/metrics?token=promtok42"
	for i := range rows {
		rows[i].Target = target
	}
	rows = append(rows, scrape.Row{Target: target, At: 300 * time.Millisecond, Error: `Get "` + target + `": 401 Unauthorized`})
	ph := &meta.Phases[0]
	b, a := *ph.Before, *ph.After
	b.Target, a.Target = target, target
	ph.Before, ph.After = &b, &a
	return meta, recs, rows
}

// leaks lists the secrets found in out.
func leaks(out string) []string {
	var found []string
	for _, s := range secrets {
		if strings.Contains(out, s) {
			found = append(found, s)
		}
	}
	return found
}

func TestNoSecretReachesAReport(t *testing.T) {
	t.Parallel()
	meta, recs, rows := secretRun()
	dir, _ := writeDir(t, meta, recs, rows)
	s, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.Engine.BaseURL, "bob:REDACTED@engine.example") || !strings.Contains(s.Engine.BaseURL, "api_key=REDACTED") {
		t.Errorf("base URL %q: want the password and the key redacted, the rest kept", s.Engine.BaseURL)
	}
	for _, r := range []struct {
		name   string
		render Renderer
	}{{"text", RenderText}, {"markdown", RenderMarkdown}, {"json", RenderJSON}} {
		var b bytes.Buffer
		if err := r.render(&b, s); err != nil {
			t.Fatal(err)
		}
		if l := leaks(b.String()); len(l) > 0 {
			t.Errorf("%s output holds %q:\n%s", r.name, l, b.String())
		}
	}
	var csv bytes.Buffer
	if err := WriteRequestsCSV(&csv, recs); err != nil {
		t.Fatal(err)
	}
	if l := leaks(csv.String()); len(l) > 0 {
		t.Errorf("csv holds %q:\n%s", l, csv.String())
	}
}

// The run directory's writer writes no secret into its raw files.
func TestRunDirWriterWritesNoSecret(t *testing.T) {
	t.Parallel()
	meta, recs, rows := secretRun()
	rec, err := rundir.New(filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := rec.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range rows {
		if err := rec.Row(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.WriteJSON(rundir.RunFile, meta); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if meta.Phases[0].Before.Target == "" || !strings.Contains(meta.Phases[0].Before.Target, "hunter2") {
		t.Errorf("WriteJSON changed the caller's RunMeta: %q", meta.Phases[0].Before.Target)
	}
	for _, name := range []string{rundir.RunFile, rundir.RequestsFile, rundir.ScrapesFile} {
		b, err := os.ReadFile(filepath.Join(rec.Dir(), name))
		if err != nil {
			t.Fatal(err)
		}
		if l := leaks(string(b)); len(l) > 0 {
			t.Errorf("%s holds %q:\n%s", name, l, b)
		}
		if !strings.Contains(string(b), "REDACTED") {
			t.Errorf("%s: nothing redacted:\n%s", name, b)
		}
	}
}

// Text from outside reaches the terminal without control characters.
func TestTextSummaryPrintsNoEscapeSequence(t *testing.T) {
	t.Parallel()
	meta, recs, rows := fixedRun()
	meta = ended(meta)
	evil := "llama\x1b]0;pwned\x07\x1b[2J"
	meta.Engine.Model = evil
	meta.Engine.Notes = []string{"model " + evil + " read from /v1/models"}
	meta.Description = "desc \x1b[31mred\u009b2J"
	meta.Scenario = "s\x1b[2J"
	recs[5].Error = "status 500: \x1b]0;pwned\x07 \r overwrite"
	s := Compute(meta, recs, rows, nil, 0)
	var csv bytes.Buffer
	if err := WriteRequestsCSV(&csv, recs); err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{"text": textOf(t, s), "csv": csv.String()}
	var md bytes.Buffer
	if err := RenderMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	outs["markdown"] = md.String()
	var js bytes.Buffer
	if err := RenderJSON(&js, s); err != nil {
		t.Fatal(err)
	}
	outs["json"] = js.String()
	outs["progress"] = live.ProgressLine(live.Progress{Phase: evil, Findings: []Finding{{Severity: "warn", Verdict: evil}}})
	for name, out := range outs {
		if i := strings.IndexFunc(out, func(r rune) bool { return r != '\n' && r != '\t' && redact.Printable(string(r)) != string(r) }); i >= 0 {
			t.Errorf("%s output holds control character %q at %d:\n%s", name, out[i:i+1], i, out)
		}
	}
	if text := outs["text"]; !strings.Contains(text, `model llama\x1b]0;pwned\x07\x1b[2J read from /v1/models`) {
		t.Errorf("the text summary does not show the model id escaped:\n%s", text)
	}
	var back Summary
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Run.Description != meta.Description {
		t.Errorf("the JSON escapes do not decode to the text: %v, %q", err, back.Run.Description)
	}
}

func slicesConcat(parts ...[][]byte) [][]byte {
	var out [][]byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// A merged run ended when its last shard did, and did not end when one of
// its shards did not.
func TestMergeKeepsTheRunsEnd(t *testing.T) {
	t.Parallel()
	meta, recs, rows := fixedRun()
	shard := func(i int, end bool) string {
		m := meta
		m.ID, m.Shard, m.Shards = fmt.Sprintf("shard-%d", i), i, 2
		if end {
			m.Ended = m.StartedAt.Add(time.Duration(i+1) * time.Second)
		}
		dir, _ := writeDir(t, m, recs[3*i:3*i+3], rows)
		return dir
	}
	for _, tc := range []struct {
		name       string
		end0, end1 bool
	}{{"both ended", true, true}, {"one killed", true, false}} {
		out := filepath.Join(t.TempDir(), "merged")
		if err := rundir.Merge(out, []string{shard(0, tc.end0), shard(1, tc.end1)}); err != nil {
			t.Fatal(err)
		}
		s, err := Build(out)
		if err != nil {
			t.Fatal(err)
		}
		if s.Health.Unfinished == (tc.end0 && tc.end1) || s.Health.DuplicateRecords != 0 || s.Health.Records != 6 {
			t.Errorf("%s: unfinished %v, duplicates %d, records %d", tc.name, s.Health.Unfinished, s.Health.DuplicateRecords, s.Health.Records)
		}
	}
}
