package noise

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Load reads any file without panicking: it fails naming the file, or
// gives entries whose floors are fractions ≥ 0 and which Save writes back
// to a file Load reads the same. Seeded with a real noise file's shape.
func FuzzLoad(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "noise.json")); err == nil {
		f.Add(b)
	}
	for _, s := range []string{"", "{}", `{"schema":"llmbench.noise/v1"}`, `{"schema":"llmbench.noise/v1","entries":[{"metrics":{"x":{"floor":-1}}}]}`, "[]", "null"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "noise.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := Load(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error %v does not name the file", err)
			}
			return
		}
		for _, e := range got.Entries {
			for name, m := range e.Metrics {
				if !(m.Floor >= 0) {
					t.Fatalf("%s: floor %g let through", name, m.Floor)
				}
			}
		}
		again := filepath.Join(dir, "again.json")
		if err := got.Save(again); err != nil {
			t.Fatal(err)
		}
		back, err := Load(again)
		if err != nil || !reflect.DeepEqual(normal(back), normal(got)) {
			t.Fatalf("saved and loaded again: %+v, %v; want %+v", back, err, got)
		}
	})
}

// normal makes empty collections nil, as a JSON round trip may.
func normal(f File) File {
	if len(f.Entries) == 0 {
		f.Entries = nil
	}
	for i := range f.Entries {
		e := &f.Entries[i]
		if len(e.Metrics) == 0 {
			e.Metrics = nil
		}
		for k, m := range e.Metrics {
			if len(m.Regressions) == 0 {
				m.Regressions = nil
			}
			e.Metrics[k] = m
		}
		e.LearnedAt = e.LearnedAt.UTC()
	}
	return f
}
