package tui

import (
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/reconcile"
)

// sgr is the styling the view itself writes; nothing else may reach the
// terminal as an escape sequence.
var sgr = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

// Text from outside (a model id read from /v1/models, a phase name, a
// scrape error, a finding) carries no escape sequence into the live view.
func TestViewPrintsNoEscapeSequenceFromOutside(t *testing.T) {
	t.Parallel()
	evil := "llama\x1b]0;pwned\x07\x1b[2J\u009b2J\r"
	m := newModel(Header{Scenario: "s" + evil, RunDir: "runs/" + evil, Engine: "sim (sglang) model " + evil, Planned: time.Minute}, nil)
	p := busyProgress(12)
	p.Phase, p.LastScrapeErr = evil, "401 "+evil
	p.Errors = map[client.ErrorClass]int{client.ErrorClass(evil): 1}
	p.Failed, p.Canceled = 1, 3
	p.Findings = []reconcile.Finding{{ID: "x", Severity: "warn", Verdict: "verdict " + evil}}
	m, _ = step(t, m, sampleMsg{p}, tea.WindowSizeMsg{Width: 160, Height: 40})
	view := m.View().Content
	rest := sgr.ReplaceAllString(view, "")
	for _, bad := range []string{"\x1b", "\x07", "\u009b", "\r"} {
		if strings.Contains(rest, bad) {
			t.Errorf("the view holds %q from outside text:\n%q", bad, view)
		}
	}
	if !strings.Contains(rest, "canceled 3") {
		t.Errorf("the view does not show the cancelled requests apart:\n%s", rest)
	}
}

// No secret from outside reaches a frame: the engine's URL, a scrape
// error and a finding pass the one redaction policy (decision 0018).
func TestViewPrintsNoSecret(t *testing.T) {
	t.Parallel()
	m := newModel(Header{Scenario: "s", RunDir: "runs/x", Engine: "vllm (vllm) https://bob:hunter2@engine.example/v1?api_key=s3cr3t", Planned: time.Minute}, nil)
	p := busyProgress(12)
	p.LastScrapeErr = `Get "http://admin:hunter2@e/metrics": 401`
	p.Findings = []reconcile.Finding{{ID: "x", Severity: "warn", Verdict: "engine said Bearer sk-abcdefghijkl"}}
	m, _ = step(t, m, sampleMsg{p}, tea.WindowSizeMsg{Width: 200, Height: 40})
	view := sgr.ReplaceAllString(m.View().Content, "")
	for _, secret := range []string{"hunter2", "s3cr3t", "sk-abcdefghijkl"} {
		if strings.Contains(view, secret) {
			t.Errorf("the view shows %q:\n%s", secret, view)
		}
	}
	if !strings.Contains(view, "REDACTED") {
		t.Errorf("nothing redacted in the view:\n%s", view)
	}
}
