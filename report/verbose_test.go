package report

import (
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/report/reconcile"
)

// The text summary gives each finding one line; --verbose gives it whole,
// with its evidence.
func TestFindingsBriefAndVerbose(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("the engine and the client agree on this count ", 5)
	s := Summary{Findings: []Finding{{ID: "token_conservation", Severity: reconcile.Info, Verdict: long, Evidence: map[string]float64{"client_prompt_tokens": 220}}}}
	var brief, verbose strings.Builder
	if err := RenderText(&brief, s); err != nil {
		t.Fatal(err)
	}
	if err := RenderTextVerbose(&verbose, s); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(brief.String(), "\n") {
		if strings.HasPrefix(l, "INFO") && len([]rune(l)) > 130 {
			t.Errorf("a brief finding line of %d characters: %q", len([]rune(l)), l)
		}
	}
	if !strings.Contains(verbose.String(), strings.TrimSpace(long)) || !strings.Contains(verbose.String(), "client_prompt_tokens = 220") {
		t.Errorf("verbose summary lacks the whole verdict or its evidence:\n%s", verbose.String())
	}
}

// A live warning is printed only once it held in two consecutive looks.
func TestLiveWarningsMustHold(t *testing.T) {
	t.Parallel()
	warn := Finding{ID: "token_conservation", Severity: reconcile.Warn, Verdict: "differs"}
	var s steadyFindings
	if got := s.filter(Progress{Findings: []Finding{warn}}).Findings; len(got) != 0 {
		t.Errorf("first look: %v, want the warning held back", got)
	}
	if got := s.filter(Progress{Findings: []Finding{warn}}).Findings; len(got) != 1 {
		t.Errorf("second look: %v, want the warning", got)
	}
	if got := s.filter(Progress{}).Findings; len(got) != 0 {
		t.Errorf("gone: %v", got)
	}
	if got := s.filter(Progress{Findings: []Finding{warn}}).Findings; len(got) != 0 {
		t.Errorf("back after a gap: %v, want it held back again", got)
	}
}
