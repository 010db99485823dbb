package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/rundir"
)

// What the client measured of itself becomes a problem (the run is not
// valid) that names the cause and what to do, in every report.
func TestClientHealthVerdicts(t *testing.T) {
	t.Parallel()
	other, quota := 0.8, 1.5
	for _, tc := range []struct {
		name    string
		client  rundir.ClientHealth
		problem string // a substring of the one problem; "" for none
		text    string // a substring of the text summary's health line
	}{
		{"fine", rundir.ClientHealth{CPUCores: 2, CPUUtilization: 0.2}, "", "client CPU 20% of 2 cores"},
		{"cpu-bound", rundir.ClientHealth{CPUCores: 2, CPUUtilization: 0.95, Saturated: true, Delay: "cpu_bound"},
			"the client itself was saturated (95% of 2 cores)", "client CPU 95%"},
		{"host delayed", rundir.ClientHealth{CPUCores: 2, CPUUtilization: 0.1, SchedLatencyP99_s: 0.0005, Delay: "host_delayed", HostOtherCPU: &other},
			"other processes used 80% of the machine", "other processes used 80% of the machine"},
		{"throttled by a pod's limit", rundir.ClientHealth{CPUCores: 2, CPUUtilization: 0.6, Delay: "cpu_throttled",
			CPUQuota: &quota, ThrottledPeriods: 12, Throttled_s: 0.31},
			"the CPU limit of llmbench's container (1.5 cores) stopped the client 12 times, 310 ms in all",
			"its container's CPU limit (1.5 cores) stopped it 12 times (310.0 ms)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta, recs, rows := fixedRun()
			meta.Client = tc.client
			s := Compute(meta, recs, rows, nil, 0)
			var client []string
			for _, p := range s.Health.Problems {
				if strings.Contains(p, "client") {
					client = append(client, p)
				}
			}
			switch {
			case tc.problem == "" && len(client) > 0:
				t.Errorf("problems %q, want none about the client", client)
			case tc.problem != "" && (len(client) != 1 || !strings.Contains(client[0], tc.problem)):
				t.Errorf("problems %q, want one saying %q", client, tc.problem)
			case tc.problem != "" && s.Health.Valid:
				t.Error("the run is valid despite the problem")
			}
			for name, render := range map[string]Renderer{"text": RenderText, "md": RenderMarkdown} {
				var buf bytes.Buffer
				if err := render(&buf, s); err != nil {
					t.Fatal(err)
				}
				if name == "text" && !hasText(buf.String(), tc.text) {
					t.Errorf("text summary lacks %q:\n%s", tc.text, buf.String())
				}
				if tc.client.Throttled_s > 0 && !strings.Contains(buf.String(), "stopped") {
					t.Errorf("%s report does not say the limit stopped the client", name)
				}
			}
		})
	}
}
