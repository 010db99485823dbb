package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/noise"
	"github.com/llmbench-org/llmbench/rundir"
)

// The noise model end to end on the built-in engine (docs/decisions/0034):
// an A/A pair is never a fail; a planted regression (the decode pass four
// times as long) fails, or is inconclusive when the busy host delayed a
// run (never a pass); a run that is not valid (39 % of requests failed)
// makes its latency gates inconclusive with exit 4, naming the state, while
// a failed count gate still fails with exit 3; compare of the A/A pair
// finds no change beyond noise in ITL; a trial set of the two A runs and
// llmbench noise work from the command line.
func TestNoiseModelEndToEnd(t *testing.T) {
	t.Parallel()
	path := writeScenario(t, `
name: noisy
seed: 5
engine:
  kind: sim
  preset: tiny
workload:
  concurrency: 4
  requests: 120
  prompt_tokens: 32
  output_tokens: 16
`)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	runOnce := func(sets ...string) string {
		t.Helper()
		cio, _, stderr := testIO(nil)
		dir, err := runScenario(ctx, runOpts{scenario: path, runsDir: t.TempDir(), output: "plain", every: time.Hour, sets: sets}, cio)
		if err != nil {
			t.Fatalf("run: %v\n%s", err, stderr.String())
		}
		return dir
	}
	a, b := runOnce(), runOnce()
	slow := runOnce("engine.sim.decode_base=8ms", "engine.sim.decode_per_seq=80us")
	broken := runOnce("engine.faults.error_rate=0.39")

	command := func(args ...string) (string, int) {
		t.Helper()
		cio, out, _ := testIO(nil)
		root := newRootCmd(cio)
		root.SetArgs(args)
		err := root.ExecuteContext(ctx)
		return out.String(), exitCode(err)
	}
	valid := func(dirs ...string) bool {
		for _, d := range dirs {
			s, err := report.Build(d)
			if err != nil {
				t.Fatal(err)
			}
			if !s.Health.Valid || s.Health.Client.SchedLatencyP99_s > 0.005 {
				t.Logf("%s: the host delayed the client (states %+v)", d, s.Health.States)
				return false
			}
		}
		return true
	}
	regressions := []string{"--threshold", "client.itl.p50 regression < 10%", "--threshold", "client.ttft.p99 regression < 10%"}

	out, code := command(append([]string{"gate", b, "--baseline", a}, regressions...)...)
	if code == exitGate || strings.Contains(out, "FAIL ") {
		t.Errorf("an A/A pair failed (exit %d):\n%s", code, out)
	}

	out, code = command("gate", slow, "--baseline", a, "--threshold", "client.itl.p50 regression < 10%")
	if valid(a, slow) {
		if code != exitGate || !hasGateLine(out, "FAIL", "client.itl.p50 regression < 10%") {
			t.Errorf("a 4× slower decode pass did not fail (exit %d):\n%s", code, out)
		}
	} else if code == exitOK || strings.Contains(out, "PASS ") {
		t.Errorf("a 4× slower decode pass passed on a delayed host (exit %d):\n%s", code, out)
	}

	out, code = command("gate", broken, "--threshold", "client.ttft.p50 < 10s")
	if code != exitInconclusive || !hasGateLine(out, "INCONCLUSIVE", "client.ttft.p50 < 10s") || !strings.Contains(out, "failures_over_bound") {
		t.Errorf("a run NOT VALID: exit %d, want %d:\n%s", code, exitInconclusive, out)
	}
	out, code = command("gate", broken, "--threshold", "client.ttft.p50 < 10s", "--threshold", "client.requests.failed == 0")
	if code != exitGate || !hasGateLine(out, "FAIL", "client.requests.failed == 0") {
		t.Errorf("a failed count gate beside an inconclusive one: exit %d, want %d (a fail dominates):\n%s", code, exitGate, out)
	}

	out, code = command("compare", a, b)
	if code != exitOK {
		t.Fatalf("compare: exit %d\n%s", code, out)
	}
	delayed := !valid(a, b)
	for _, line := range strings.Split(out, "\n") {
		switch {
		case !strings.Contains(line, "client.itl."), strings.Contains(line, "no change beyond noise"):
		case delayed && strings.Contains(line, "inconclusive"):
			// A change on a host that held a run's client back may be the
			// host's: never worse or better then (decision 0034).
		default:
			t.Errorf("compare of an A/A pair: %q", line)
		}
	}

	// The two A runs as a trial set, against the slow run: a side of two
	// runs and a side of one.
	set := t.TempDir()
	for i, d := range []string{a, b} {
		if err := os.Rename(d, filepath.Join(set, []string{"t1", "t2"}[i])); err != nil {
			t.Fatal(err)
		}
	}
	if err := rundir.WriteTrials(set, []string{"t1", "t2"}); err != nil {
		t.Fatal(err)
	}
	out, code = command("gate", set, "--baseline", set, "--threshold", "client.itl.p50 regression < 10%")
	if code == exitGate || !strings.Contains(out, "over 2 runs") || !strings.Contains(out, "bootstrap over runs, then requests") {
		t.Errorf("a trial set against itself: exit %d:\n%s", code, out)
	}

	// compare takes a trial set as a side, and a history with --baseline.
	if out, code = command("compare", set, slow); code != exitOK || !strings.Contains(out, "client.itl.p50") {
		t.Errorf("compare of a trial set: exit %d:\n%s", code, out)
	}
	if out, code = command("compare", "--baseline", filepath.Join(set, "t1"), "--baseline", filepath.Join(set, "t2"), slow); code != exitOK || !strings.Contains(out, "client.itl.p50") {
		t.Errorf("compare against a history: exit %d:\n%s", code, out)
	}

	// llmbench noise: one pair, floors written under the scenario's key.
	nf := filepath.Join(t.TempDir(), "noise.json")
	out, code = command("noise", path, "--pairs", "1", "--out", nf, "--runs", t.TempDir())
	if code != exitOK || !strings.Contains(out, "client.itl.p50") {
		t.Fatalf("noise: exit %d:\n%s", code, out)
	}
	f, err := noise.Load(nf)
	if err != nil || len(f.Entries) != 1 || f.Entries[0].Pairs != 1 || f.Entries[0].Scenario != "noisy" {
		t.Fatalf("noise file %+v, %v", f, err)
	}
	out, code = command("gate", slow, "--baseline", filepath.Join(set, "t1"), "--noise", nf, "--threshold", "client.itl.p50 regression < 10%")
	if code == exitOK || !strings.Contains(out, "noise floors: "+nf) {
		t.Errorf("gate --noise: exit %d:\n%s", code, out)
	}
	if _, code = command("gate", slow, "--baseline", filepath.Join(set, "t1"), "--noise", filepath.Join(t.TempDir(), "empty.json"), "--threshold", "client.itl.p50 regression < 10%"); code != exitUsage {
		t.Errorf("--noise without floors for the scenario: exit %d, want %d", code, exitUsage)
	}
}
