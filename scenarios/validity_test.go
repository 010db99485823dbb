package scenarios

import (
	"strings"
	"testing"
)

// report.validity.max_failure_rate: the default filled when absent, a
// declared share kept, a share outside (0, 1] refused at its line.
func TestValidityMaxFailureRate(t *testing.T) {
	t.Parallel()
	const workload = "workload: {concurrency: 1, duration: 1s}\n"
	for _, tt := range []struct {
		name, yaml string
		want       float64
		err        string
	}{
		{"absent", workload, DefaultMaxFailureRate, ""},
		{"a report without it", workload + "report: {percentiles: [50, 99]}\n", DefaultMaxFailureRate, ""},
		{"declared", workload + "report:\n  validity:\n    max_failure_rate: 0.05\n", 0.05, ""},
		{"all may fail", workload + "report: {validity: {max_failure_rate: 1}}\n", 1, ""},
		{"zero", workload + "report:\n  validity:\n    max_failure_rate: 0\n", 0, "f.yaml:6:23: report.validity.max_failure_rate: want a share of requests above 0 and at most 1 (0.05 for 5%), got 0"},
		{"a percentage", workload + "report:\n  validity:\n    max_failure_rate: 5\n", 0, "report.validity.max_failure_rate: want a share of requests above 0 and at most 1 (0.05 for 5%), got 5"},
		{"negative", workload + "report: {validity: {max_failure_rate: -0.1}}\n", 0, "got -0.1"},
		{"misspelt", workload + "report: {validity: {max_failures: 0.1}}\n", 0, "f.yaml:4:21: report.validity.max_failures: unknown field (known fields: max_failure_rate)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := parseIn("f.yaml", []byte(head+tt.yaml), noEnv)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want it to contain %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Report.Validity.MaxFailureRate; got != tt.want {
				t.Errorf("max_failure_rate %g, want %g", got, tt.want)
			}
			out, err := s.Resolved()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(out), "max_failure_rate: ") {
				t.Errorf("the resolved scenario does not show the bound:\n%s", out)
			}
		})
	}
}
