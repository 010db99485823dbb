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

// TestSGLangExportScenario runs the shipped sglang-export example (cut to a
// count of requests, the engine in this process): the engine writes its
// export into the run directory, summary.json's server_timeline joins every
// request by its rid from it, its engine parts match the truth file within
// 1 ms, and the text report and finding name the export.
func TestSGLangExportScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a scenario against the built-in engine")
	}
	const requests = 200
	src, err := fs.ReadFile(scenarios.Examples(), "sglang-export.yaml")
	if err != nil {
		t.Fatal(err)
	}
	yaml := strings.Replace(string(src), "  duration: 10s\n", "  requests: 200\n", 1)
	yaml = strings.Replace(yaml, "  preset: tiny\n", "  preset: tiny\n  process: inline\n", 1)
	if !strings.Contains(yaml, "requests: 200") || !strings.Contains(yaml, "process: inline") || !strings.Contains(yaml, "sglang_export: {}") {
		t.Fatalf("the example changed shape; adapt the test:\n%s", src)
	}
	cio, stdout, stderr := testIO(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir, err := runScenario(ctx, runOpts{scenario: writeScenario(t, yaml), runsDir: t.TempDir(), output: "plain", every: time.Hour}, cio)
	if err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
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
	if tl == nil || tl.Source != report.TimelineFromExport || tl.Records != requests || tl.Joined < requests*999/1000 || tl.ByRequestID != tl.Joined || tl.Spans != requests {
		t.Fatalf("server_timeline %+v", tl)
	}
	if d := tl.Parts["queue"]; d.N != requests || d.P50 <= 0 {
		t.Errorf("queue distribution %+v", d)
	}
	found := false
	for _, f := range s.Findings {
		if f.ID == report.IDServerTimeline {
			found = strings.Contains(f.Verdict, "200 of 200 requests joined SGLang's request export")
		}
	}
	if !found {
		t.Errorf("no server_timeline finding that names the export: %+v", s.Findings)
	}
	if out := stdout.String(); !strings.Contains(out, "server timeline: 200 of 200 requests joined SGLang's request export") {
		t.Errorf("the text report does not show the timeline:\n%s", out)
	}
	records := readJSONL[client.Record](t, filepath.Join(dir, rundir.RequestsFile))
	export, err := rundir.ReadSGLangExport(dir)
	if err != nil {
		t.Fatal(err)
	}
	truth := map[string]sim.RequestTruth{}
	for _, tr := range readJSONL[sim.RequestTruth](t, filepath.Join(dir, rundir.TruthFile)) {
		truth[tr.ID] = tr
	}
	res := timeline.JoinExport(records, export.Records, s.Run.StartedAt)
	if res.Joined != tl.Joined {
		t.Errorf("joined %d here, %d in the summary", res.Joined, tl.Joined)
	}
	for _, p := range res.Requests {
		tr := truth[p.ID]
		got := []time.Duration{p.Preprocess, p.Queue, p.Prefill, p.Decode}
		want := []time.Duration{tr.QueueEnter - tr.Arrival, tr.QueueLeave - tr.QueueEnter, tr.PrefillEnd - tr.QueueLeave, tr.DecodeEnd - tr.PrefillEnd}
		for k := range got {
			if d := got[k] - want[k]; d > time.Millisecond || d < -time.Millisecond {
				t.Errorf("request %s: part %d %v, truth %v", p.ID, k, got[k], want[k])
			}
		}
	}
}
