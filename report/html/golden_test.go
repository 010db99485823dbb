package html

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// renderString renders in and fails the test on an error.
func renderString(t testing.TB, in Input) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, in); err != nil {
		t.Fatalf("Render: %v", err)
	}
	return b.String()
}

// TestGolden holds the whole page of a seeded, fixed-time run to a golden
// file: go test ./report/html -run TestGolden -update rewrites it.
func TestGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  synth
	}{
		{"full", goldenRun},
		{"no-metrics", synth{seed: 7, rateScale: 0.5, stretch: 1, chunks: 4, noMetrics: true}},
		{"agentic", synth{seed: 9, rateScale: 0.25, stretch: 0.5, chunks: 4, noMetrics: true, agentic: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := tt.run.input()
			got := renderString(t, in)
			path := filepath.Join("testdata", tt.name+".golden.html")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("report differs from %s (-want +got; -update rewrites it):\n%s", path, diff)
			}
			// Rendering is deterministic: the same input, the same bytes.
			if again := renderString(t, in); again != got {
				t.Error("two renders of the same input differ")
			}
		})
	}
}
