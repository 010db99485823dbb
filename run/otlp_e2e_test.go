package run

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/timeline"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scenarios"
)

// TestOTelTracesScenario runs the shipped otel-traces example (cut to a
// count of requests, the engine in this process): the receiver the
// scenario turns on keeps every span in spans.jsonl, summary.json's
// server_timeline joins them all by trace id, its engine parts match the
// truth file within 1 ms, and the slowest 1 % are said to have queued (the
// example runs 16 users on 8 seats).
func TestOTelTracesScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a scenario against the built-in engine")
	}
	const requests = 200
	src, err := fs.ReadFile(scenarios.Examples(), "otel-traces.yaml")
	if err != nil {
		t.Fatal(err)
	}
	yaml := strings.Replace(string(src), "  duration: 10s\n", "  requests: 200\n", 1)
	yaml = strings.Replace(yaml, "  preset: tiny\n", "  preset: tiny\n  process: inline\n", 1)
	if !strings.Contains(yaml, "requests: 200") || !strings.Contains(yaml, "process: inline") || !strings.Contains(yaml, "otlp: {}") {
		t.Fatalf("the example changed shape; adapt the test:\n%s", src)
	}
	cio, stdout, stderr := testIO(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir, err := runScenario(ctx, runOpts{scenario: writeScenario(t, yaml), runsDir: t.TempDir(), output: "plain", every: time.Hour}, cio)
	if err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "receiving OTLP traces at http://127.0.0.1:") {
		t.Errorf("the receiver's addresses are not said:\n%s", stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var s report.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	tl := s.Timeline
	if tl == nil || tl.Records != requests || tl.Joined < requests*999/1000 || tl.ByTraceID != tl.Joined || tl.JoinRate < 0.999 {
		t.Fatalf("server_timeline %+v", tl)
	}
	if tl.Slowest == nil || tl.Slowest.N != 2 || tl.Slowest.Dominant != "queue" || !strings.Contains(tl.Slowest.Verdict, "of their TTFT queued") {
		t.Errorf("slowest %+v", tl.Slowest)
	}
	if d := tl.Parts["queue"]; d.N != requests || d.P50 <= 0 {
		t.Errorf("queue distribution %+v", d)
	}
	found := false
	for _, f := range s.Findings {
		if f.ID == report.IDServerTimeline {
			found = f.Severity == "info" && strings.Contains(f.Verdict, "200 of 200 requests joined") && strings.Contains(f.Verdict, tl.Slowest.Verdict)
		}
	}
	if !found {
		t.Errorf("no server_timeline finding that says the join and the verdict: %+v", s.Findings)
	}
	if out := stdout.String(); !strings.Contains(out, "server timeline: 200 of 200 requests joined") || !strings.Contains(out, tl.Slowest.Verdict) {
		t.Errorf("the text report does not show the timeline:\n%s", out)
	}
	if page, err := os.ReadFile(filepath.Join(dir, "report.html")); err != nil || !strings.Contains(string(page), `<section id="server-timeline">`) ||
		!strings.Contains(string(page), "spent "+strings.SplitN(tl.Slowest.Verdict, "spent ", 2)[1]) {
		t.Errorf("report.html has no server timeline section with the verdict (%v)", err)
	}
	records := readJSONL[client.Record](t, filepath.Join(dir, rundir.RequestsFile))
	spans, _, err := rundir.ReadSpans(dir)
	if err != nil {
		t.Fatal(err)
	}
	truth := map[string]sim.RequestTruth{}
	for _, tr := range readJSONL[sim.RequestTruth](t, filepath.Join(dir, rundir.TruthFile)) {
		truth[tr.ID] = tr
	}
	res := timeline.Join(records, spans, s.Run.StartedAt)
	for _, p := range res.Requests {
		tr := truth[p.ID]
		got := []time.Duration{p.Preprocess, p.Queue, p.Prefill, p.Decode}
		// Preprocess starts where vLLM stamps its arrival: the request
		// parsed and tokenized (Submitted; decision 2420).
		want := []time.Duration{tr.QueueEnter - tr.Submitted, tr.QueueLeave - tr.QueueEnter, tr.PrefillEnd - tr.QueueLeave, tr.DecodeEnd - tr.PrefillEnd}
		for k := range got {
			if d := got[k] - want[k]; d > time.Millisecond || d < -time.Millisecond {
				t.Errorf("request %s: part %d %v, truth %v", p.ID, k, got[k], want[k])
			}
		}
	}
}
