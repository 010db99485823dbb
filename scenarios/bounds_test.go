package scenarios

import (
	"strings"
	"testing"
)

// Values that parse but no run can hold are refused, with the bound.
func TestAbsurdValuesAreRefused(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, workload, want string }{
		{"a billion-token prompt", "{concurrency: 1, duration: 1s, prompt_tokens: 1000000000}", "workload.prompt_tokens: 1e+09 is beyond what a run can hold: at most 1e+07 tokens a request"},
		{"a lognormal mean of 1e300", "{concurrency: 1, duration: 1s, output_tokens: {dist: lognormal, mean: 1e300, stddev: 1}}", "workload.output_tokens.mean: 1e+300 is beyond what a run can hold"},
		{"a rate of 1e300", "{rate: 1e300, duration: 1s}", "workload.rate: 1e+300 is beyond what a run can hold: at most 1e+06 requests per second"},
		{"ten million users", "{concurrency: 10000000, duration: 1s}", "workload.concurrency: 1e+07 is beyond what a run can hold: at most 100000 concurrent streams"},
		{"a sweep rate", "{sweep: {rates: [1, 1e9]}, duration: 1s}", "workload.sweep.rates[1]: 1e+09 is beyond"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseIn("f.yaml", []byte(head+"workload: "+tt.workload+"\n"), noEnv)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// A YAML syntax error names the line where the broken construct is.
func TestSyntaxErrorLines(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, yaml, want string }{
		{"unclosed { on line 2", "name: x\nengine: {kind: sim\nworkload: {rate: 1}\n", "f.yaml:2: invalid YAML: did not find expected ',' or '}'"},
		{"unclosed [ on line 4", "name: x\nengine:\n  kind: sim\n  dialect: [a, b\nworkload: 1\n", "f.yaml:4: invalid YAML: did not find expected ',' or ']'"},
		{"a tab on line 3", "name: x\nengine:\n\tkind: sim\n", "f.yaml:3:"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseIn("f.yaml", []byte(tt.yaml), noEnv)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
