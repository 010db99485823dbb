package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/validity"
	"github.com/llmbench-org/llmbench/rundir"
)

// Validity as named states, end to end against the built-in engine
// (docs/decisions/0029): a run where ~39 % of requests fail is not valid and
// says which share its latencies cover, in every output; a clean run is
// valid; a run whose failures its scenario declares expected is valid, with
// a warning.
func TestValidityStatesEndToEnd(t *testing.T) {
	t.Parallel()
	req := "  requests: 120"
	for _, tc := range []struct {
		name, engine, report string
		valid                bool
		state                string // the failure state it must be in ("" none)
	}{
		{"39% fail", "  faults: {error_rate: 0.39}", "", false, validity.FailuresOverBound},
		{"clean", "", "", true, ""},
		{"failures declared expected", "  faults: {error_rate: 0.05}", "report: {validity: {max_failure_rate: 0.25}}\n", true, validity.FailuresWithinBound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			yaml := simYAML(tc.engine, req)("") + tc.report
			out := &syncBuffer{}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := Run(ctx, Config{Scenario: writeScenario(t, yaml), RunsDir: t.TempDir()},
				IO{Stdout: out, Stderr: &syncBuffer{}, Getenv: func(string) string { return "" }})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			h, c := res.Summary.Health, res.Summary.Client.Requests
			// The client's own health is not this test's to control: on a
			// busy machine the host may delay it, which is a state of its
			// own. Say so, and judge the rest.
			names := stateNames(h.States)
			clientDelayed := slices.ContainsFunc(names, func(n string) bool {
				return n == validity.HostDelayed || n == validity.ClientSaturated || n == validity.ClientThrottled
			})
			if clientDelayed {
				t.Logf("the host delayed the client (states %v): validity judged without it", names)
			}
			for _, n := range names {
				switch n {
				case tc.state, validity.HostDelayed, validity.ClientSaturated, validity.ClientThrottled:
				default:
					t.Errorf("state %s, want only %q (and client delays): %+v", n, tc.state, h.States)
				}
			}
			if want := tc.valid && !clientDelayed; h.Valid != want {
				t.Errorf("valid %v, want %v: states %+v", h.Valid, want, h.States)
			}
			if tc.state == "" {
				return
			}
			i := slices.Index(names, tc.state)
			if i < 0 {
				t.Fatalf("states %v lack %s (%d of %d failed)", names, tc.state, c.Failed, c.Sent)
			}
			st := h.States[i]
			counted := c.Sent - c.Canceled
			share := float64(c.OK) / float64(counted)
			if st.Figure != float64(c.Failed)/float64(counted) || !strings.HasPrefix(st.Covers, "latencies cover the ") ||
				!strings.Contains(st.Covers, fmt.Sprintf("of requests that succeeded (%d of %d)", c.OK, counted)) ||
				(share < 0.9 && !strings.Contains(st.Covers, fmt.Sprintf("the %.0f%% of requests", 100*share))) {
				t.Errorf("state %+v: want figure %d/%d, covering the %.1f%% that succeeded", st, c.Failed, counted, 100*share)
			}
			if tc.state == validity.FailuresOverBound {
				if f := st.Figure; f < 0.25 || f > 0.55 {
					t.Errorf("failure share %.2f: the engine's 39%% is not what the test assumes", f)
				}
				if !slices.Contains(h.Problems, st.Says) || st.Bound != validity.DefaultMaxFailureRate {
					t.Errorf("problems %q lack %q, or bound %g", h.Problems, st.Says, st.Bound)
				}
			}
			// Every output names the state and what the latencies cover
			// (the text summary read across its wrapped lines).
			md := readFile(t, filepath.Join(res.Dir, rundir.MarkdownFile))
			html := readFile(t, filepath.Join(res.Dir, rundir.HTMLFile))
			for what, text := range map[string]string{"the text summary": strings.Join(strings.Fields(out.String()), " "), "report.md": md, "report.html": html} {
				if !strings.Contains(text, tc.state) || !strings.Contains(strings.ToLower(text), strings.ToLower(st.Covers)) {
					t.Errorf("%s lacks %s or %q", what, tc.state, st.Covers)
				}
			}
			// summary.json, rebuilt from the raw files, says the same.
			again, err := report.Build(res.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(stateNames(again.Health.States), names) || again.Health.Valid != h.Valid {
				t.Errorf("rebuilt: states %v valid %v, run said %v %v", stateNames(again.Health.States), again.Health.Valid, names, h.Valid)
			}
		})
	}
}

func stateNames(states []validity.State) []string {
	var out []string
	for _, s := range states {
		out = append(out, s.Name)
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// An engine that restarts mid-run (the built-in engine's restart fault:
// every counter from zero) puts the run in engine_restarted: not valid.
func TestValidityEngineRestartEndToEnd(t *testing.T) {
	t.Parallel()
	yaml := simYAML("  faults: {restart_every: 1500ms, restart_downtime: 100ms}", "  duration: 4s")("")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, Config{Scenario: writeScenario(t, yaml), RunsDir: t.TempDir()},
		IO{Stdout: &syncBuffer{}, Stderr: &syncBuffer{}, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	h := res.Summary.Health
	i := slices.Index(stateNames(h.States), validity.EngineRestarted)
	if i < 0 || h.Valid {
		for _, f := range res.Summary.Findings {
			t.Logf("%s %s: %s", f.Severity, f.ID, f.Verdict)
		}
		t.Fatalf("valid %v, states %+v: want %s", h.Valid, h.States, validity.EngineRestarted)
	}
	if st := h.States[i]; st.Severity != validity.Invalid || st.Figure < 1 || !strings.Contains(st.Says, "went back to zero") {
		t.Errorf("state %+v", st)
	}
}
