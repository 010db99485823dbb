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

// A noise file edited into what no A/A pairs can give is refused, naming
// the file, the entry and the field.
func TestLoadRefusesImpossibleValues(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		`{"schema":"llmbench.noise/v1","entries":[{"pairs":3,"metrics":{"client.ttft.p99":{"floor":-0.2}}}]}`: `entries[0].metrics["client.ttft.p99"]: floor -0.2: want a fraction ≥ 0`,
		`{"schema":"llmbench.noise/v1","entries":[{"pairs":-1}]}`:                                             "entries[0]: pairs -1 and invalid_pairs 0 must not be negative",
		`{"schema":"llmbench.noise/v1","entries":[{"pairs":1,"invalid_pairs":-4}]}`:                           "entries[0]: pairs 1 and invalid_pairs -4 must not be negative",
	} {
		path := filepath.Join(t.TempDir(), "noise.json")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(path); err == nil || err.Error() != path+": "+want {
			t.Errorf("Load(%s) = %v, want %q", body, err, path+": "+want)
		}
	}
	if _, err := Load(filepath.Join("testdata", "noise.json")); err != nil {
		t.Errorf("the real shape: %v", err)
	}
}
