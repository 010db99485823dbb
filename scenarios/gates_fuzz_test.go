package scenarios

import (
	"errors"
	"io/fs"
	"testing"
)

// ParseGates (what `llmbench gate` reads of a run directory's scenario.yaml)
// reads any file without panicking: it fails with a non-empty ErrorList, or
// gives the gates the whole scenario's parser gives when that parser
// accepts the file too. Seeded with the example scenarios.
func FuzzParseGates(f *testing.F) {
	examples, _ := fs.Glob(Examples(), "*.yaml")
	for _, name := range examples {
		data, _ := fs.ReadFile(Examples(), name)
		f.Add(data)
	}
	f.Add([]byte("gates: {thresholds: [\"client.ttft.p99 < 500ms\"]}\n"))
	f.Add([]byte("gates: {thresholds: [\"client.ttft.p99 < \"]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ParseGates("fuzz.yaml", data)
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is not a non-empty ErrorList: %v", err)
			}
			return
		}
		s, err := parseIn("fuzz.yaml", data, noEnv)
		if err != nil {
			return // gates alone may be valid in a scenario that is not
		}
		if (g == nil) != (s.Gates == nil) || (g != nil && len(g.Thresholds) != len(s.Gates.Thresholds)) {
			t.Fatalf("ParseGates: %+v; the scenario's gates: %+v", g, s.Gates)
		}
	})
}
