package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/report"
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
			checkSessionsTruth(t, s.Sessions,
				readJSONL[client.Record](t, filepath.Join(dir, rundir.RequestsFile)),
				readJSONL[sim.RequestTruth](t, filepath.Join(dir, rundir.TruthFile)))
		})
	}
}

func checkSessionsTruth(t *testing.T, got *report.Sessions, records []client.Record, truth []sim.RequestTruth) {
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
}
