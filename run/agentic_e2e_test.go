package run

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/gates"
	"github.com/llmbench-org/llmbench/rundir"
)

// TestAgenticReplaySessions runs each agentic example as `llmbench run`
// does, against the built-in engine: every call of the trace succeeds,
// and the summary's per-session prefix-cache hit rates are the engine's
// ground truth (its truth log's cached and prompt tokens, summed over each
// session's requests).
func TestAgenticReplaySessions(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end against the built-in engine")
	}
	for _, tc := range []struct {
		example, trace string
		calls          int
	}{
		{"agentic-trace.yaml", "agentic-weka.jsonl", 10},
		{"agentic-copilot.yaml", "agentic-copilot.jsonl", 8},
		{"agentic-copilot-azure.yaml", "agentic-copilot-azure.jsonl", 8}, // the published schema
	} {
		t.Run(tc.example, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("..", "scenarios", tc.example))
			if err != nil {
				t.Fatal(err)
			}
			trace, err := filepath.Abs(filepath.Join("..", "scenarios", tc.trace))
			if err != nil {
				t.Fatal(err)
			}
			yaml := strings.Replace(string(src), "path: "+tc.trace, "path: "+trace, 1)
			yaml = strings.Replace(yaml, "time_scale: 0.5", "time_scale: 0.05", 1)
			cio, _, stderr := testIO(nil)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			dir, err := runScenario(ctx, runOpts{scenario: writeScenario(t, yaml), runsDir: t.TempDir(), output: "plain", every: time.Second}, cio)
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			s, err := report.Build(dir)
			if err != nil {
				t.Fatal(err)
			}
			if s.Client.Requests.OK != tc.calls {
				t.Fatalf("%d calls succeeded, the trace has %d", s.Client.Requests.OK, tc.calls)
			}
			want := checkSessionsTruth(t, s.Sessions,
				readJSONL[client.Record](t, filepath.Join(dir, rundir.RequestsFile)),
				readJSONL[sim.RequestTruth](t, filepath.Join(dir, rundir.TruthFile)))
			checkSessionGates(t, s, want)
		})
	}
}

func checkSessionsTruth(t *testing.T, got *report.Sessions, records []client.Record, truth []sim.RequestTruth) map[string]*report.SessionCache {
	t.Helper()
	session := map[string]string{}
	for _, r := range records {
		session[r.ID] = r.Session
	}
	want := map[string]*report.SessionCache{}
	for _, tr := range truth {
		s := session[tr.HeaderID]
		if s == "" {
			continue // a calibration probe
		}
		w := want[s]
		if w == nil {
			w = &report.SessionCache{Session: s}
			want[s] = w
		}
		w.Requests++
		w.PromptTokens += tr.PromptTokens
		w.CachedTokens += tr.CachedTokens
	}
	if got == nil || got.Count != len(want) || len(got.List) != len(want) || len(want) != 3 {
		t.Fatalf("summary sessions %+v; the engine saw %d sessions, the trace has 3", got, len(want))
	}
	cached := 0
	for _, sc := range got.List {
		w := want[sc.Session]
		if w == nil || sc.Requests != w.Requests || sc.PromptTokens != w.PromptTokens || sc.CachedTokens != w.CachedTokens {
			t.Errorf("session %s: summary %+v, engine %+v", sc.Session, sc, w)
			continue
		}
		if rate := float64(w.CachedTokens) / float64(w.PromptTokens); sc.HitRate != rate {
			t.Errorf("session %s: hit rate %g, the engine's %g", sc.Session, sc.HitRate, rate)
		}
		cached += w.CachedTokens
	}
	// Each session's later calls resend its history: the cache must show it.
	if cached == 0 || got.HitRate.Max <= 0 || got.MinHitRate > got.HitRate.P50 {
		t.Errorf("hit rates %+v (min %g): the sessions' shared history left no trace in the cache", got.HitRate, got.MinHitRate)
	}
	return want
}

// checkSessionGates evaluates the sessions.* gates on the run's summary:
// each observes the engine's truth (want, per session), a gate at the
// truth's value passes and one just past it fails (on a valid run: on one
// a busy host made invalid, both are inconclusive).
func checkSessionGates(t *testing.T, s report.Summary, want map[string]*report.SessionCache) {
	t.Helper()
	prompt, cached := 0, 0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, w := range want {
		prompt += w.PromptTokens
		cached += w.CachedTokens
		r := float64(w.CachedTokens) / float64(w.PromptTokens)
		lo, hi = min(lo, r), max(hi, r)
	}
	overall := float64(cached) / float64(prompt)
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, tc := range []struct {
		expr     string
		observed float64
		status   gates.Status
	}{
		{"sessions.overall_hit_rate >= " + g(overall), overall, gates.Pass},
		{"sessions.overall_hit_rate > " + g(overall), overall, gates.Fail},
		{"sessions.min_hit_rate >= " + g(lo), lo, gates.Pass},
		{"sessions.min_hit_rate > " + g(lo), lo, gates.Fail},
		{"sessions.hit_rate.max <= " + g(hi), hi, gates.Pass},
		{"sessions.hit_rate.max < " + g(hi), hi, gates.Fail},
		{"sessions.count == " + strconv.Itoa(len(want)), float64(len(want)), gates.Pass},
		{"sessions.hit_rate.n == " + strconv.Itoa(len(want)), float64(len(want)), gates.Pass},
	} {
		gs, err := gates.ParseAll([]string{tc.expr})
		if err != nil {
			t.Fatal(err)
		}
		r := gs.Evaluate(s, nil)[0]
		if !s.Health.Valid {
			// A busy host makes the run invalid, and every gate on it
			// undecided; the figure observed must still be the truth.
			tc.status = gates.Inconclusive
		}
		if r.Status != tc.status || r.Observed != tc.observed {
			t.Errorf("%s: %s observing %v (%s); the engine's truth is %v, want %s", tc.expr, r.Status, r.Observed, r.Reason, tc.observed, tc.status)
		}
	}
}
