package scenarios

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLoadGates reads only the gates of a scenario: the rest of the file may
// name unset variables and missing files (a run directory moved to another
// machine) without stopping it, while the gates section itself stays strict.
func TestLoadGates(t *testing.T) {
	const rest = `name: moved
model: ${LLMBENCH_TEST_NEVER_SET}
engine: {kind: external, base_url: "http://127.0.0.1:1/v1"}
workload:
  concurrency: 2
  requests: 4
  dataset: {type: jsonl, path: /nonexistent/prompts.jsonl}
`
	tests := []struct {
		name, yaml string
		want       []string // nil: no gates
		wantErr    string   // substring of the error
	}{
		{name: "no gates", yaml: rest},
		{name: "gates", yaml: rest + "gates:\n  thresholds: [\"client.ttft.p99 < 1s\", \"health.valid == true\"]\n",
			want: []string{"client.ttft.p99 < 1s", "health.valid == true"}},
		{name: "null gates", yaml: rest + "gates:\n"},
		{name: "unknown key in gates", yaml: rest + "gates:\n  treshold: [a]\n", wantErr: "s.yaml:9:3: gates.treshold: unknown field"},
		{name: "no thresholds", yaml: rest + "gates: {}\n", wantErr: "gates.thresholds: missing"},
		{name: "empty threshold", yaml: rest + "gates:\n  thresholds: [\" \"]\n", wantErr: "gates.thresholds[0]: empty threshold"},
		{name: "not a list", yaml: rest + "gates:\n  thresholds: 3\n", wantErr: "s.yaml:9:15: gates.thresholds"},
		{name: "broken YAML", yaml: rest + "gates: [\n", wantErr: "invalid YAML"},
		{name: "not a mapping", yaml: "- a\n", wantErr: "want a mapping"},
		{name: "empty", yaml: "", wantErr: "empty file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.yaml")
			if err := os.WriteFile(path, []byte(tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			g, err := LoadGates(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == nil {
				if g != nil {
					t.Fatalf("gates %+v, want none", g)
				}
				return
			}
			if g == nil || !slices.Equal(g.Thresholds, tt.want) {
				t.Fatalf("gates %+v, want %q", g, tt.want)
			}
		})
	}
	if _, err := LoadGates(filepath.Join(t.TempDir(), "absent.yaml")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want a not-exist error", err)
	}
}
