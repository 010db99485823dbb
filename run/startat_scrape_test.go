package run

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
)

// slowMetrics serves the engine's /metrics at url after a pause: an engine
// whose scrape takes a while, as a busy one's does.
func slowMetrics(t *testing.T, url string, pause time.Duration) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(pause)
		forwardMetrics(w, r, url)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

// TestStartAtIsWhenArrivalsBegin: with a start time, the first phase's
// first request is planned for that time, not a /metrics scrape later (the
// opening snapshot is taken while the run waits), and the phase's counter
// deltas still count exactly its requests.
func TestStartAtIsWhenArrivalsBegin(t *testing.T) {
	t.Parallel()
	const pause = 300 * time.Millisecond
	_, ep := startSim(t, sim.Config{Dialect: sim.DialectVLLM})
	yaml := `
name: barrier-slow-scrape
model: ` + sim.DefaultModel + `
engine: {kind: external, dialect: vllm, base_url: "` + ep.BaseURL + `", metrics_url: "` + slowMetrics(t, ep.MetricsURL, pause) + `"}
workload: {rate: 20, arrival: constant, requests: 10, prompt_tokens: 16, output_tokens: 8}
scrape: {interval: 1s}
`
	path := writeScenario(t, yaml)
	cio, _, stderr := testIO(nil)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	// Far enough ahead for the run to be up and take its opening snapshot
	// twice (the probe, then the one kept) before it.
	at := time.Now().Add(2 * time.Second)
	res, err := Run(ctx, Config{Scenario: path, RunsDir: t.TempDir(), StartAt: at}, cio.io)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	meta := readRunMeta(t, res.Dir)
	recs := readJSONL[client.Record](t, filepath.Join(res.Dir, rundir.RequestsFile))
	if len(recs) == 0 {
		t.Fatal("no records")
	}
	planned := recs[0].Intended
	for _, r := range recs {
		planned = min(planned, r.Intended)
	}
	// The first arrival is due at the phase's start (a constant rate's
	// first offset is 0): at the start time, give or take the few
	// milliseconds between the wait's end and the driver's start. Before,
	// it came a whole scrape (the pause and more) after it.
	off := meta.StartedAt.Add(planned).Sub(at)
	t.Logf("first request planned %v after the start time; /metrics answers in %v", off, pause)
	if off < 0 || off >= pause/2 {
		t.Errorf("the first request was planned %v after the start time, want within %v: the schedule waited for the opening scrape", off, pause/2)
	}
	ph := meta.Phases[0]
	if ph.Before == nil || !ph.Before.OK || meta.StartedAt.Add(ph.Before.At).After(at) {
		t.Errorf("opening snapshot %+v: want one taken before the start time", ph.Before)
	}

	s, err := report.Build(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	ok, prompt, output := 0, 0, 0
	for _, r := range recs {
		if r.OK() {
			ok, prompt, output = ok+1, prompt+r.PromptTokens, output+r.OutputTokens
		}
	}
	if ok != 10 || s.Server == nil {
		t.Fatalf("%d requests ok, server view %+v: want 10 and the engine's counters", ok, s.Server)
	}
	for _, c := range []struct {
		name string
		want int
	}{{"requests_finished", ok}, {"prompt_tokens", prompt}, {"generation_tokens", output}} {
		if got := s.Server.Counters[c.name]; got != float64(c.want) {
			t.Errorf("server Δ%s = %v, client sum %d: the phase's counters must cover its requests and only them", c.name, got, c.want)
		}
	}
}

// A /metrics so slow that the opening snapshot ends more than
// StartLateness after the start time fails the run, as an engine that came
// up that late does: it would start after the other shards. Nothing is sent
// and the run returns (the recording stopped and written out).
func TestOpeningSnapshotPastTheStartTime(t *testing.T) {
	t.Parallel()
	_, ep := startSim(t, sim.Config{Dialect: sim.DialectVLLM})
	yaml := `
name: barrier-too-slow-scrape
model: ` + sim.DefaultModel + `
engine: {kind: external, dialect: vllm, base_url: "` + ep.BaseURL + `", metrics_url: "` + slowMetrics(t, ep.MetricsURL, StartLateness+500*time.Millisecond) + `"}
workload: {rate: 20, arrival: constant, requests: 4, prompt_tokens: 16, output_tokens: 8}
scrape: {interval: 5s}
`
	path := writeScenario(t, yaml)
	cio, _, stderr := testIO(nil)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res, err := Run(ctx, Config{Scenario: path, RunsDir: t.TempDir(), StartAt: time.Now().Add(200 * time.Millisecond)}, cio.io)
	if err == nil || !strings.Contains(err.Error(), "opening /metrics snapshot ended") {
		t.Fatalf("error %v, want one saying the opening snapshot ended past the start time\n%s", err, stderr)
	}
	if ctx.Err() != nil {
		t.Fatal("the run returned only at the test's deadline")
	}
	if n := len(readJSONL[client.Record](t, filepath.Join(res.Dir, rundir.RequestsFile))); n != 0 {
		t.Errorf("%d requests sent by a run that started late", n)
	}
}

// A stop while the opening snapshot is taken ends the wait as a stop during
// the rest of it does; a start time the snapshot overran by more than
// StartLateness is an error, and one it did not overrun is none.
func TestWaitForStartTakesTheOpeningSnapshot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	never := make(chan struct{})
	tests := []struct {
		name  string
		ahead time.Duration // the start time, from now
		take  time.Duration // how long the snapshot takes
		opens int           // how many times it is taken
		late  bool
	}{
		{"long wait: probed, then retaken late", 400 * time.Millisecond, 10 * time.Millisecond, 2, false},
		{"short wait: taken once", 50 * time.Millisecond, 20 * time.Millisecond, 1, false},
		{"already started, within the tolerance", -StartLateness / 2, 0, 1, false},
		{"the snapshot overran the start time", 10 * time.Millisecond, StartLateness + 100*time.Millisecond, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opens := 0
			at := time.Now().Add(tt.ahead)
			err := waitForStart(ctx, at, never, io.Discard, func(context.Context) { opens++; time.Sleep(tt.take) })
			if (err != nil) != tt.late {
				t.Errorf("error %v, want late %v", err, tt.late)
			}
			if opens != tt.opens {
				t.Errorf("snapshot taken %d times, want %d", opens, tt.opens)
			}
			if err == nil && time.Now().Before(at) {
				t.Errorf("returned %v before the start time", time.Until(at))
			}
		})
	}
	opens := 0
	if err := waitForStart(ctx, time.Time{}, never, io.Discard, func(context.Context) { opens++ }); err != nil || opens != 0 {
		t.Errorf("without a start time: error %v, snapshot taken %d times; want neither", err, opens)
	}

	// A retake the host slows past twice the probe is cut at the start time
	// (its context's deadline), not waited for: the probe's snapshot stands.
	at := time.Now().Add(400 * time.Millisecond)
	var deadlines []time.Time
	err := waitForStart(ctx, at, never, io.Discard, func(ctx context.Context) {
		d, ok := ctx.Deadline()
		if !ok || d.After(at) {
			deadlines = append(deadlines, time.Time{})
			return
		}
		deadlines = append(deadlines, d)
		<-ctx.Done() // slower than anything but the deadline
	})
	if err != nil || len(deadlines) != 2 || deadlines[1].IsZero() {
		t.Errorf("error %v, deadlines %v: want the probe and a retake that ends by the start time %v", err, deadlines, at)
	}
}
