package html

import (
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/report"
)

// A run with gates shows their verdicts first: why a CI job failed.
func TestGatesSection(t *testing.T) {
	t.Parallel()
	in := Input{Summary: report.Summary{Gates: &report.GateVerdicts{Passed: false, Pass: 1, Fail: 1, Results: []report.GateVerdict{
		{Gate: "client.requests.failed == 0", Status: "pass", Unit: "count"},
		{Gate: "client.ttft.p99 < 500ms", Status: "fail", Unit: "s", Observed: 0.75, Limit: 0.5, Reason: "750ms is not < 500ms"},
	}}}}
	page := renderString(t, in)
	gates, health := strings.Index(page, `<section id="gates"`), strings.Index(page, `<section id="health"`)
	if gates < 0 || health < gates {
		t.Fatalf("no gates section before the health section")
	}
	for _, want := range []string{"1 passed, 1 failed", "client.ttft.p99 &lt; 500ms", "0.75 s", "750ms is not &lt; 500ms", `badge bad">failed`} {
		if !strings.Contains(page[gates:health], want) {
			t.Errorf("gates section lacks %q", want)
		}
	}
	if strings.Contains(renderString(t, Input{}), `id="gates"`) {
		t.Error("a run without gates shows a gates section")
	}
}
