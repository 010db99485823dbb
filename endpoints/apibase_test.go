package endpoints

import "testing"

func TestAPIBase(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in, base string
		ok       bool
	}{
		{"http://gpu:8000", "http://gpu:8000/v1", true},
		{"http://gpu:8000/", "http://gpu:8000/v1", true},
		{"https://gpu:8000/v1", "https://gpu:8000/v1", true},
		{"http://gw/llm/v1/", "http://gw/llm/v1", true},
		{"http://gpu:8000/metrics", "", false},
		{"gpu:8000", "", false},
		{"ftp://gpu:8000", "", false},
		{"metrics.txt", "", false},
		{"testdata/sglang.prom", "", false},
	} {
		base, ok := APIBase(tt.in)
		if base != tt.base || ok != tt.ok {
			t.Errorf("APIBase(%q) = %q, %v; want %q, %v", tt.in, base, ok, tt.base, tt.ok)
		}
	}
}
