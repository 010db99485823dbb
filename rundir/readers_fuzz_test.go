package rundir

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/scrape"
)

// realRun is a run directory kept as test data: the shapes the readers
// below are seeded with.
const realRun = "../report/testdata/v1-run"

func addReal(f *testing.F, name string) {
	if b, err := os.ReadFile(filepath.Join(realRun, name)); err == nil {
		f.Add(b)
	}
}

// ReadMeta reads any run.json without panicking: it fails naming the file,
// or gives a RunMeta that, written back, reads the same.
func FuzzReadMeta(f *testing.F) {
	addReal(f, RunFile)
	for _, s := range []string{"", "{}", "null", `{"phases":[{"name":"x","end_ns":-1}]}`, `{"id":"\u001b[2J"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, RunFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := ReadMeta(dir)
		if err != nil {
			if !strings.Contains(err.Error(), RunFile) {
				t.Fatalf("error %v does not name %s", err, RunFile)
			}
			return
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("a run.json read cannot be written back: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, RunFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		back, err := ReadMeta(dir)
		if err != nil {
			t.Fatalf("written back, it does not read: %v\n%s", err, b)
		}
		b2, _ := json.Marshal(back)
		if string(b2) != string(b) {
			t.Fatalf("written back it reads differently:\n%s\n%s", b, b2)
		}
	})
}

// ReadRows reads any scrapes.jsonl as ReadJSONL reads it, every row
// redacted; it never panics, and an error names the file.
func FuzzReadRows(f *testing.F) {
	addReal(f, ScrapesFile)
	for _, s := range []string{"", "\n", `{"at_ns":1,"target":"http://u:p@h/metrics"}` + "\n", "{\n{}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, ScrapesFile)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rows, partial, err := ReadRows(dir)
		if err != nil {
			if !strings.Contains(err.Error(), ScrapesFile) {
				t.Fatalf("error %v does not name %s", err, ScrapesFile)
			}
			return
		}
		var plain []scrape.Row
		p2, err := ReadJSONL(path, func(r *scrape.Row) error { RedactRow(r); plain = append(plain, *r); return nil })
		if err != nil || p2 != partial || !reflect.DeepEqual(rows, plain) {
			t.Fatalf("ReadRows: %d rows, %d partial; ReadJSONL: %d, %d, %v", len(rows), partial, len(plain), p2, err)
		}
	})
}

// Trials reads any trials.json without panicking: it fails naming the
// file, or lists directories inside the set, each a run directory.
func FuzzTrials(f *testing.F) {
	f.Add([]byte(`{"trials": ["trial-1", "trial-2"]}`))
	for _, s := range []string{"", "{}", `{"trials": []}`, `{"trials": ["../x"]}`, `{"trials": ["/etc"]}`, `{"trials": ["trial-1/../../x"]}`, `{"trials": ["a\\b"]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		set := t.TempDir()
		for _, name := range []string{"trial-1", "trial-2"} {
			if err := os.MkdirAll(filepath.Join(set, name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(set, name, RunFile), []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(set, TrialsFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		dirs, err := Trials(set)
		if err != nil {
			if !strings.Contains(err.Error(), TrialsFile) {
				t.Fatalf("error %v does not name %s", err, TrialsFile)
			}
			return
		}
		if len(dirs) == 0 {
			t.Fatal("no trials and no error")
		}
		for _, d := range dirs {
			rel, err := filepath.Rel(set, d)
			if err != nil || !filepath.IsLocal(rel) || !isRunDir(d) {
				t.Fatalf("trial %s: not a run directory inside the set %s", d, set)
			}
		}
	})
}
