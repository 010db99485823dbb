package reconcile

import (
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/scrape"
)

// TestCounterResetFinding: an engine that restarts inside a window
// (requests_finished 358 → 40) gets a finding naming the concept and when,
// and the window's delta keeps what was counted before the restart.
func TestCounterResetFinding(t *testing.T) {
	t.Parallel()
	const target = "http://engine/metrics"
	row := func(at time.Duration, fin float64) scrape.Row {
		return scrape.Row{Target: target, OK: true, At: at, Duration: time.Millisecond,
			Snapshot: &scrape.Snapshot{Dialect: "vllm", Counters: map[scrape.Concept]float64{scrape.RequestsFinished: fin}}}
	}
	rows := []scrape.Row{row(0, 100), row(5*time.Second, 358), row(10*time.Second, 40), row(15*time.Second, 100)}
	in := Input{Rows: rows, Dialect: "vllm",
		Windows: []Window{{Name: "main", Measured: true, Start: 0, End: 15 * time.Second, Before: &rows[0], After: &rows[3]}}}
	a := analyse(in)
	if got := a.server.Counters[scrape.RequestsFinished]; got != 358 {
		t.Errorf("Δ finished = %v, want 258 + 100 = 358 across the restart", got)
	}
	var found *Finding
	fs := Reconcile(in)
	for i := range fs {
		if fs[i].ID == IDCounterReset {
			found = &fs[i]
		}
	}
	if found == nil {
		t.Fatalf("no %s finding in %v", IDCounterReset, fs)
	}
	if found.Severity != Warn {
		t.Errorf("severity %s, want warn", found.Severity)
	}
	for _, want := range []string{"requests_finished 358 → 40", "10", target, "increase()"} {
		if !strings.Contains(found.Verdict, want) {
			t.Errorf("verdict %q does not contain %q", found.Verdict, want)
		}
	}
	for k, want := range map[string]float64{"resets": 1, "concepts": 1, "first_reset_at_s": 10, "first_reset_before": 358, "first_reset_after": 40} {
		if got, ok := found.Evidence[k]; !ok || got != want {
			t.Errorf("evidence %s = %v (%v), want %v", k, got, ok, want)
		}
	}

	// No reset, no finding.
	rows = []scrape.Row{row(0, 100), row(5*time.Second, 358), row(10*time.Second, 400), row(15*time.Second, 458)}
	in.Rows, in.Windows[0].Before, in.Windows[0].After = rows, &rows[0], &rows[3]
	for _, f := range Reconcile(in) {
		if f.ID == IDCounterReset {
			t.Errorf("a finding without a reset: %s", f.Verdict)
		}
	}
}

// TestInvalidValuesFinding: a concept the engine exposed with an unusable
// value (two replicas' prompt_tokens of 10 and +Inf) is named with its
// reason, and is not compared.
func TestInvalidValuesFinding(t *testing.T) {
	t.Parallel()
	mk := func(at time.Duration, prompt float64, invalid map[scrape.Concept]string) scrape.Row {
		s := scrape.Snapshot{Dialect: "vllm", Counters: map[scrape.Concept]float64{scrape.RequestsFinished: 10 * at.Seconds()}, Invalid: invalid}
		if invalid == nil {
			s.Counters[scrape.PromptTokens] = prompt
		}
		return scrape.Row{Target: "t", OK: true, At: at, Snapshot: &s}
	}
	rows := []scrape.Row{mk(0, 100, nil), mk(10*time.Second, 0, map[scrape.Concept]string{scrape.PromptTokens: `replica 2 of 2: vllm:prompt_tokens_total is +Inf`})}
	in := Input{Rows: rows, Dialect: "vllm", Windows: []Window{{Name: "main", Measured: true, End: 10 * time.Second, Before: &rows[0], After: &rows[1]}}}
	a := analyse(in)
	if v, ok := a.server.Counters[scrape.PromptTokens]; ok {
		t.Errorf("prompt_tokens compared: %v", v)
	}
	var found *Finding
	fs := Reconcile(in)
	for i := range fs {
		if fs[i].ID == IDInvalidValues {
			found = &fs[i]
		}
	}
	if found == nil {
		t.Fatalf("no %s finding in %v", IDInvalidValues, fs)
	}
	if found.Severity != Warn || !strings.Contains(found.Verdict, "prompt_tokens (replica 2 of 2: vllm:prompt_tokens_total is +Inf)") || found.Evidence["concepts"] != 1 {
		t.Errorf("finding %+v", *found)
	}
}
