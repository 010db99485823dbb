package run

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/launch"
	"github.com/llmbench-org/llmbench/internal/testkit"
	"github.com/llmbench-org/llmbench/report/comparison"
	"github.com/llmbench-org/llmbench/report/gates"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scenarios"
)

// Every file a run reads, bounded before it is read (issue 21 item 2):
// datasets, traces and length files that are devices, pipes, directories,
// links to devices, gigabytes of one line, NUL bytes, bad UTF-8, CRLF, a
// prompt of more words than a request may hold, timestamps that go back or
// are not numbers, lengths out of range. Each is refused before anything is
// sent, naming the file (and line) and the bound, or read cleanly; none
// hangs, none reads without bound (the heap cases, in TestFaultMemory).
func readerFaultCases() []faultCase {
	fx := readerFixtures
	quick := 10 * time.Second // a refusal reads a few bytes or a stat
	return []faultCase{
		// Not regular files: refused from a stat, the open never blocks.
		{name: "reader: /dev/zero as a dataset", scenario: datasetYAML("jsonl", func() string { return "/dev/zero" }), bound: quick, want: refused,
			errHas: "data file /dev/zero is a device"},
		{name: "reader: /dev/urandom as a dataset", scenario: datasetYAML("sharegpt", func() string { return "/dev/urandom" }), bound: quick, want: refused,
			errHas: "data file /dev/urandom is a device"},
		{name: "reader: a FIFO as a dataset, nobody writing", scenario: datasetYAML("jsonl", fx("fifo")), stopAt: 3 * time.Second, bound: quick, want: refused,
			errHas: "is a named pipe (FIFO): llmbench reads a data file only from a regular file (copy it to one)"},
		{name: "reader: a directory as a dataset", scenario: datasetYAML("jsonl", fx("")), bound: quick, want: refused, errHas: "is a directory"},
		{name: "reader: a symlink to /dev/zero as a dataset", scenario: datasetYAML("jsonl", fx("zero-link.jsonl")), bound: quick, want: refused,
			errHas: "zero-link.jsonl is a device"},
		{name: "reader: a FIFO as a trace", scenario: traceYAML("mooncake", fx("fifo")), stopAt: 3 * time.Second, bound: quick, want: refused, errHas: "is a named pipe (FIFO)"},
		{name: "reader: /dev/zero as a length file", scenario: lengthYAML(func() string { return "/dev/zero" }), bound: quick, want: refused,
			errHas: "data file /dev/zero is a device"},

		// Sizes: the whole file from its stat, a line as it is read.
		{name: "reader: a 3 GB sparse dataset", scenario: datasetYAML("jsonl", fx("sparse-3g.jsonl")), bound: quick, want: refused,
			errHas: "is 3000000000 bytes, over the 2147483648-byte bound on a data file"},
		{name: "reader: a 3 GB sparse trace", scenario: traceYAML("azure", fx("sparse-3g.jsonl")), bound: quick, want: refused,
			errHas: "over the 2147483648-byte bound on a data file"},
		{name: "reader: one line of 100 MiB in a dataset", scenario: datasetYAML("jsonl", fx("line-100m.jsonl")), bound: 30 * time.Second, want: refused,
			errHas: "line-100m.jsonl:1: line longer than 64 MiB (the bound on one line of a data file)", heap: 256 << 20},
		{name: "reader: one line of 1.5 GiB in a dataset, never read whole", scenario: datasetYAML("jsonl", fx("line-1500m.jsonl")), bound: 30 * time.Second, want: refused,
			errHas: "line-1500m.jsonl:1: line longer than 64 MiB", heap: 256 << 20},
		{name: "reader: one line of 100 MiB in a length file", scenario: lengthYAML(fx("line-100m.jsonl")), bound: 30 * time.Second, want: refused,
			errHas: "line-100m.jsonl:1: line longer than 64 MiB", heap: 256 << 20},
		{name: "reader: a CSV trace whose quoted field never ends", scenario: traceYAML("burstgpt", fx("open-quote.csv")), bound: 30 * time.Second, want: refused,
			errHas: "open-quote.csv:2: record longer than 64 MiB (the bound on one line or record of a data file)", heap: 512 << 20},
		{name: "reader: a prompt of more words than a request may hold", scenario: datasetYAML("jsonl", fx("huge-prompt.jsonl")), bound: 30 * time.Second, want: refused,
			errHas: "huge-prompt.jsonl:2: prompt 10000001 is above the maximum of 10000000 tokens", heap: 192 << 20},

		// Contents: refused at their line, or read cleanly.
		{name: "reader: NUL bytes in a dataset", scenario: datasetYAML("jsonl", fx("nul.jsonl")), bound: quick, want: refused, errHas: "nul.jsonl:2: invalid JSON"},
		{name: "reader: invalid UTF-8 in a prompt", scenario: datasetYAML("jsonl", fx("bad-utf8.jsonl")), bound: 30 * time.Second, want: completed,
			records: readAs(6, 4)},
		{name: "reader: a CRLF dataset", scenario: datasetYAML("jsonl", fx("crlf.jsonl")), bound: 30 * time.Second, want: completed, records: readAs(6, 2, 3)},
		{name: "reader: a CRLF ShareGPT file", scenario: datasetYAML("sharegpt", fx("crlf-sharegpt.json")), bound: 30 * time.Second, want: completed, records: readAs(6, 3)},
		{name: "reader: a CRLF Mooncake trace", scenario: traceYAML("mooncake", fx("crlf-trace.jsonl")), bound: 30 * time.Second, want: completed, records: readAs(3, 8, 9, 4)},
		{name: "reader: a CRLF length file", scenario: lengthYAML(fx("crlf-lengths.csv")), bound: 30 * time.Second, want: completed,
			records: func(t *testing.T, rs []client.Record) {
				allOK(t, rs)
				for _, r := range rs {
					if r.PromptTokens != 8 && r.PromptTokens != 12 {
						t.Errorf("%s: %d prompt tokens, want 8 or 12 (the file's lengths; a \r left on a line would refuse it)", r.ID, r.PromptTokens)
					}
				}
			}},
		{name: "reader: trace timestamps going backwards", scenario: traceYAML("mooncake", fx("backwards.jsonl")), bound: quick, want: refused,
			errHas: "backwards.jsonl:3: timestamp 100ms goes back before the previous row's"},
		{name: "reader: a NaN trace timestamp", scenario: traceYAML("mooncake", fx("nan.jsonl")), bound: quick, want: refused, errHas: "nan.jsonl:2: invalid JSON"},
		{name: "reader: a 1e308 trace timestamp", scenario: traceYAML("mooncake", fx("big-ts.jsonl")), bound: quick, want: refused,
			errHas: "big-ts.jsonl:2: timestamp out of range"},
		{name: "reader: a NaN BurstGPT timestamp", scenario: traceYAML("burstgpt", fx("nan.csv")), bound: quick, want: refused,
			errHas: `nan.csv:3: Timestamp: want seconds from 0 to 1e+09, got "NaN"`},
		{name: "reader: a 1e308 BurstGPT timestamp", scenario: traceYAML("burstgpt", fx("big-ts.csv")), bound: quick, want: refused,
			errHas: `big-ts.csv:2: Timestamp: want seconds from 0 to 1e+09, got "1e308"`},
		{name: "reader: Azure timestamps going backwards", scenario: traceYAML("azure", fx("backwards.csv")), bound: quick, want: refused,
			errHas: "backwards.csv:3: TIMESTAMP goes back before the previous row's"},
		{name: "reader: a negative length", scenario: lengthYAML(fx("negative.csv")), bound: quick, want: refused,
			errHas: `negative.csv:2: want token lengths ≥ 1 (and min ≤ max), got "-5,1"`},
		{name: "reader: a huge length", scenario: lengthYAML(fx("huge-length.csv")), bound: quick, want: refused,
			errHas: "huge-length.csv:3: length 1000000000000 is above the maximum of 10000000 tokens"},
		{name: "reader: a NaN length weight", scenario: lengthYAML(fx("nan-weight.csv")), bound: quick, want: refused,
			errHas: `nan-weight.csv:1: want a weight ≥ 0, got "NaN"`},
		{name: "reader: a negative max_tokens in a dataset", scenario: datasetYAML("jsonl", fx("negative-max.jsonl")), bound: quick, want: refused,
			errHas: "negative-max.jsonl:1: max_tokens: want at least 1, got -3"},
	}
}

// datasetYAML is a short closed-loop run of the built-in engine over a
// dataset file.
func datasetYAML(typ string, path func() string) func(string) string {
	return func(string) string {
		return fmt.Sprintf(`
name: fault
engine: {kind: sim, preset: tiny, process: inline}
workload:
  concurrency: 2
  requests: 6
  output_tokens: 4
  dataset: {type: %s, path: %q}
scrape: {interval: 300ms, timeout: 250ms}
`, typ, path())
	}
}

// traceYAML replays a trace file against the built-in engine, fast.
func traceYAML(format string, path func() string) func(string) string {
	return func(string) string {
		return fmt.Sprintf(`
name: fault
engine: {kind: sim, preset: tiny, process: inline}
workload:
  trace: {format: %s, path: %q, time_scale: 0.01}
  max_concurrency: 4
scrape: {interval: 300ms, timeout: 250ms}
`, format, path())
	}
}

// lengthYAML draws the prompts' lengths from a length file.
func lengthYAML(path func() string) func(string) string {
	return func(string) string {
		return fmt.Sprintf(`
name: fault
engine: {kind: sim, preset: tiny, process: inline}
workload:
  concurrency: 2
  requests: 6
  prompt_tokens: {dist: empirical, file: %q}
  output_tokens: 4
scrape: {interval: 300ms, timeout: 250ms}
`, path())
	}
}

// readAs checks that the run sent n requests, all answered, each prompt
// one of the file's, as long as the file says (the built-in engine counts
// words): a line cut short, or read as more than one, would differ.
func readAs(n int, promptTokens ...int) func(*testing.T, []client.Record) {
	return func(t *testing.T, rs []client.Record) {
		allOK(t, rs)
		if len(rs) != n {
			t.Errorf("%d records, want %d", len(rs), n)
		}
		for _, r := range rs {
			if !slices.Contains(promptTokens, r.PromptTokens) {
				t.Errorf("%s: %d prompt tokens, want one of %v", r.ID, r.PromptTokens, promptTokens)
			}
		}
	}
}

// The reader fixtures live in one directory per user, made once and kept
// (the big ones are sparse: no disk behind them), so that the fault cases,
// whose scenarios are written by the matrix, can name them; a case's
// scenario function has no test to clean up after. The version in the name
// changes when a fixture does.
var (
	fixturesOnce sync.Once
	fixturesDir  string
	fixturesErr  error
)

// readerFixtures returns the path of the fixture name ("" for the
// directory itself), made on first use.
func readerFixtures(name string) func() string {
	return func() string {
		fixturesOnce.Do(func() { fixturesDir, fixturesErr = makeReaderFixtures() })
		if fixturesErr != nil {
			// The case then fails on a missing file, naming this.
			return "/nonexistent/reader-fixtures: " + fixturesErr.Error()
		}
		return filepath.Join(fixturesDir, name)
	}
}

func makeReaderFixtures() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "llmbench-test", "reader-faults-v1")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	words := func(n int) string { return strings.TrimSuffix(strings.Repeat("a ", n), " ") }
	text := map[string]string{
		"nul.jsonl":          "{\"prompt\": \"a b c\"}\n{\"prompt\": \"a\x00b\"}\n",
		"bad-utf8.jsonl":     "{\"prompt\": \"one \xff\xfe two three\"}\n{\"prompt\": \"\xc3\x28 four five six\"}\n",
		"crlf.jsonl":         "{\"prompt\": \"one two\"}\r\n\r\n{\"messages\": [{\"role\": \"user\", \"content\": \"three four five\"}]}\r\n",
		"crlf-sharegpt.json": "[\r\n{\"conversations\": [{\"from\": \"human\", \"value\": \"one two three\"}, {\"from\": \"gpt\", \"value\": \"a b\"}]}\r\n]\r\n",
		"crlf-trace.jsonl":   "{\"timestamp\": 0, \"input_length\": 8, \"output_length\": 3}\r\n{\"timestamp\": 50, \"input_length\": 9, \"output_length\": 2}\r\n{\"timestamp\": 90, \"input_length\": 4, \"output_length\": 3}\r\n",
		"crlf-lengths.csv":   "tokens,weight\r\n8,1\r\n12,2\r\n",
		"backwards.jsonl":    "{\"timestamp\": 0, \"input_length\": 8, \"output_length\": 3}\n{\"timestamp\": 200, \"input_length\": 8, \"output_length\": 3}\n{\"timestamp\": 100, \"input_length\": 8, \"output_length\": 3}\n",
		"nan.jsonl":          "{\"timestamp\": 0, \"input_length\": 8, \"output_length\": 3}\n{\"timestamp\": NaN, \"input_length\": 8, \"output_length\": 3}\n",
		"big-ts.jsonl":       "{\"timestamp\": 0, \"input_length\": 8, \"output_length\": 3}\n{\"timestamp\": 1e308, \"input_length\": 8, \"output_length\": 3}\n",
		"nan.csv":            "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,10,2,12,x\nNaN,ChatGPT,10,2,12,x\n",
		"big-ts.csv":         "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n1e308,ChatGPT,10,2,12,x\n",
		"backwards.csv":      "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:50.0,10,2\n2023-11-16 18:15:46.0,10,2\n",
		"negative.csv":       "tokens,weight\n-5,1\n",
		"huge-length.csv":    "# lengths\n8,1\n1000000000000,1\n",
		"nan-weight.csv":     "8,NaN\n",
		"negative-max.jsonl": "{\"prompt\": \"a b\", \"max_tokens\": -3}\n",
		"huge-prompt.jsonl":  "{\"prompt\": \"a b\"}\n{\"prompt\": \"" + words(10_000_001) + "\"}\n",
	}
	for name, body := range text {
		if err := fixture(dir, name, func(f *os.File) error { _, err := f.WriteString(body); return err }, int64(len(body))); err != nil {
			return "", err
		}
	}
	// Sparse: a size with no disk behind it, NUL bytes when read.
	for name, size := range map[string]int64{"sparse-3g.jsonl": 3_000_000_000, "line-100m.jsonl": 100 << 20, "line-1500m.jsonl": 1500 << 20} {
		if err := fixture(dir, name, func(f *os.File) error { return f.Truncate(size) }, size); err != nil {
			return "", err
		}
	}
	// A quoted field opened, then NUL bytes for 1.5 GiB.
	if err := fixture(dir, "open-quote.csv", func(f *os.File) error {
		if _, err := f.WriteString("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,\""); err != nil {
			return err
		}
		return f.Truncate(1500 << 20)
	}, 1500<<20); err != nil {
		return "", err
	}
	if err := special(dir, "fifo", mkfifo); err != nil {
		return "", err
	}
	if err := special(dir, "zero-link.jsonl", func(p string) error { return os.Symlink("/dev/zero", p) }); err != nil {
		return "", err
	}
	return dir, nil
}

// fixture makes dir/name with write unless a file of that size is there,
// through a temporary file renamed into place (two test processes may make
// it at once).
func fixture(dir, name string, write func(*os.File) error, size int64) error {
	path := filepath.Join(dir, name)
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() && st.Size() == size {
		return nil
	}
	f, err := os.CreateTemp(dir, name+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// special makes dir/name with mk (a FIFO, a symlink) unless it is there.
func special(dir, name string, mk func(string) error) error {
	path := filepath.Join(dir, name)
	if _, err := os.Lstat(path); err == nil {
		return nil
	}
	tmp := fmt.Sprintf("%s.tmp%d", path, os.Getpid())
	os.Remove(tmp)
	if err := mk(tmp); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// The run directory's readers (what `report`, `gate`, `compare` and `merge`
// read) get the same hostile files as the matrix's data files: each is
// refused at once naming the file (and line) and why, or read cleanly, and
// none blocks. The matrix runs `run`; this table runs the commands that
// read a run directory, on copies of a real one (report/testdata/v1-run).
func TestRunDirReaderFaults(t *testing.T) {
	t.Parallel()
	// bad rewrites one file of a copy of the run directory.
	type bad func(t *testing.T, path string)
	replace := func(body string) bad {
		return func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	edit := func(fn func([]byte) []byte) bad {
		return func(t *testing.T, path string) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			replace(string(fn(b)))(t, path)
		}
	}
	link := func(target string) bad {
		return func(t *testing.T, path string) {
			os.Remove(path)
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}
	}
	fifo := func(t *testing.T, path string) {
		os.Remove(path)
		if err := mkfifo(path); err != nil {
			t.Skip("no named pipes here:", err)
		}
	}
	dir := func(t *testing.T, path string) {
		os.Remove(path)
		if err := os.Mkdir(path, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sparse := func(size int64) bad {
		return func(t *testing.T, path string) {
			if err := os.Truncate(path, size); err != nil {
				t.Fatal(err)
			}
		}
	}
	// line n (1-based) of a file replaced.
	line := func(n int, with string) bad {
		return edit(func(b []byte) []byte {
			lines := strings.Split(string(b), "\n")
			lines[n-1] = with
			return []byte(strings.Join(lines, "\n"))
		})
	}
	type reader func(t *testing.T, dir string) error
	report := func(_ *testing.T, dir string) error { _, err := Finalize(dir, nil); return err }
	gate := func(_ *testing.T, dir string) error { _, err := gates.LoadSide(dir); return err }
	gateSummary := func(_ *testing.T, dir string) error {
		_, err := gates.LoadRun(filepath.Join(dir, rundir.SummaryFile))
		return err
	}
	gatesOf := func(_ *testing.T, dir string) error {
		_, err := scenarios.LoadGates(filepath.Join(dir, rundir.ScenarioFile))
		return err
	}
	compare := func(_ *testing.T, dir string) error { _, err := comparison.Load(dir); return err }
	// merge merges dir, as shard 0 of 2, with an intact copy of the same
	// run as shard 1.
	merge := func(t *testing.T, dir string) error {
		other := testkit.CopyDir(t, "../report/testdata/v1-run")
		asShard(t, other, 1)
		if st, err := os.Lstat(filepath.Join(dir, rundir.RunFile)); err == nil && st.Mode().IsRegular() {
			asShard(t, dir, 0)
		}
		return rundir.Merge(filepath.Join(t.TempDir(), "merged"), []string{dir, other})
	}
	const records = 172 // report/testdata/v1-run's requests.jsonl
	cases := []struct {
		name, file string
		bad        bad
		read       reader
		errHas     string // "": read cleanly
		check      func(t *testing.T, dir string)
	}{
		{"requests.jsonl: a symlink to /dev/zero", rundir.RequestsFile, link("/dev/zero"), report, "requests.jsonl is a device", nil},
		{"requests.jsonl: a FIFO", rundir.RequestsFile, fifo, report, "requests.jsonl is a named pipe (FIFO)", nil},
		{"requests.jsonl: a directory", rundir.RequestsFile, dir, report, "requests.jsonl is a directory", nil},
		{"requests.jsonl: /dev/urandom", rundir.RequestsFile, link("/dev/urandom"), report, "requests.jsonl is a device", nil},
		{"requests.jsonl: a bad line inside", rundir.RequestsFile, line(2, "not json"), report, "requests.jsonl:2: ", nil},
		{"requests.jsonl: NUL bytes inside", rundir.RequestsFile, line(5, "{\"id\":\"x\x00\x00\"}"), report, "requests.jsonl:5: ", nil},
		{"requests.jsonl: a torn last line", rundir.RequestsFile, edit(func(b []byte) []byte { return append(b, `{"id":"torn","ind`...) }), report, "",
			func(t *testing.T, dir string) { wantRecords(t, dir, records) }},
		{"requests.jsonl: CRLF line ends", rundir.RequestsFile, edit(func(b []byte) []byte { return []byte(strings.ReplaceAll(string(b), "\n", "\r\n")) }), report, "",
			func(t *testing.T, dir string) { wantRecords(t, dir, records) }},
		{"requests.jsonl: invalid UTF-8 in a string", rundir.RequestsFile, edit(func(b []byte) []byte {
			return []byte(strings.Replace(string(b), `"phase":"`, "\"phase\":\"\xff\xfe", 1))
		}), report, "",
			func(t *testing.T, dir string) { wantRecords(t, dir, records) }},
		{"requests.jsonl: sparse 3 GB of NUL bytes", rundir.RequestsFile, sparse(3_000_000_000), report, "requests.jsonl:173: ", nil},
		{"the trace log: a FIFO", rundir.TraceLogFile, fifo, report, "is a named pipe (FIFO)", nil},
		{"the trace log: one line of 8 MiB", rundir.TraceLogFile, func(t *testing.T, path string) {
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			sparse(8<<20)(t, path)
		}, report, ":1: line longer than 4 MiB (the bound on one line of a trace log)", nil},
		{"requests.jsonl: a FIFO, for merge", rundir.RequestsFile, fifo, merge, "requests.jsonl is a named pipe (FIFO)", nil},
		{"requests.jsonl: a bad line inside, for merge", rundir.RequestsFile, line(3, "{\"id\": 7"), merge, "requests.jsonl:3: ", nil},
		{"requests.jsonl: CRLF line ends, for merge", rundir.RequestsFile, edit(func(b []byte) []byte { return []byte(strings.ReplaceAll(string(b), "\n", "\r\n")) }), merge, "", nil},
		{"run.json: /dev/zero, for merge", rundir.RunFile, link("/dev/zero"), merge, "is not a run directory (no run.json)", nil},
		{"run.json: a FIFO, for compare", rundir.RunFile, fifo, compare, "run.json is a named pipe (FIFO)", nil},
		{"requests.jsonl: /dev/zero, for compare", rundir.RequestsFile, link("/dev/zero"), compare, "requests.jsonl is a device", nil},
		{"scrapes.jsonl: a FIFO", rundir.ScrapesFile, fifo, report, "scrapes.jsonl is a named pipe (FIFO)", nil},
		{"scrapes.jsonl: a symlink to /dev/zero", rundir.ScrapesFile, link("/dev/zero"), report, "scrapes.jsonl is a device", nil},
		{"scrapes.jsonl: a bad line inside", rundir.ScrapesFile, line(1, "{"), report, "scrapes.jsonl:1: ", nil},
		{"run.json: a symlink to /dev/zero", rundir.RunFile, link("/dev/zero"), report, "run.json is a device", nil},
		{"run.json: a FIFO, for gate", rundir.RunFile, fifo, gate, "run.json is a named pipe (FIFO)", nil},
		{"run.json: sparse past the bound", rundir.RunFile, sparse(300 << 20), report, "is 314572800 bytes, over the 268435456-byte bound on a result file", nil},
		{"run.json: cut short", rundir.RunFile, edit(func(b []byte) []byte { return b[:len(b)/2] }), report, "run.json: unexpected end of JSON input", nil},
		{"summary.json: a FIFO, for gate", rundir.SummaryFile, fifo, gateSummary, "summary.json is a named pipe (FIFO)", nil},
		{"summary.json: cut short, for gate", rundir.SummaryFile, edit(func(b []byte) []byte { return b[:len(b)/3] }), gateSummary, "summary.json: unexpected end of JSON input", nil},
		{"summary.json: sparse past the bound, for gate", rundir.SummaryFile, sparse(300 << 20), gateSummary, "over the 268435456-byte bound on a result file", nil},
		{"trials.json: a FIFO, for gate", rundir.TrialsFile, fifo, gate, "trials.json is a named pipe (FIFO)", nil},
		{"trials.json: a directory, for gate", rundir.TrialsFile, dir, gate, "trials.json is a directory", nil},
		{"scenario.yaml: a FIFO, for gate", rundir.ScenarioFile, fifo, gatesOf, "scenario.yaml is a named pipe (FIFO)", nil},
		{"scenario.yaml: /dev/zero, for gate", rundir.ScenarioFile, link("/dev/zero"), gatesOf, "scenario.yaml is a device", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := testkit.CopyDir(t, "../report/testdata/v1-run")
			if tc.file == rundir.SummaryFile {
				if err := report(t, d); err != nil {
					t.Fatal(err)
				}
			}
			tc.bad(t, filepath.Join(d, tc.file))
			done := make(chan error, 1)
			go func() { done <- tc.read(t, d) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(60 * time.Second): // a bound on a hang, not a timing: each read takes milliseconds
				t.Fatalf("reading %s blocked", tc.file)
			}
			switch {
			case tc.errHas == "" && err != nil:
				t.Fatalf("want a clean read, got %v", err)
			case tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)):
				t.Fatalf("error %v, want it to say %q", err, tc.errHas)
			case err != nil && strings.ContainsAny(err.Error(), "\x00\x1b\x07\u009b"):
				t.Errorf("the error carries a control character: %q", err)
			}
			if tc.check != nil {
				tc.check(t, d)
			}
		})
	}
}

// asShard makes the run directory dir shard i of 2.
func asShard(t *testing.T, dir string, i int) {
	t.Helper()
	m, err := rundir.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.Shard, m.Shards = i, 2
	if err := rundir.WriteJSON(filepath.Join(dir, rundir.RunFile), m); err != nil {
		t.Fatal(err)
	}
}

// wantRecords checks the rebuilt summary counts n records.
func wantRecords(t *testing.T, dir string, n int) {
	t.Helper()
	fin, err := Finalize(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := fin.Summary.Health.Records; got != n {
		t.Errorf("%d records in the summary, want %d", got, n)
	}
}

// An engine.pgid that is not a regular file (a FIFO in another run's
// directory) is refused at once, naming it: the reaper every run starts
// with never blocks on it.
func TestReaperRefusesAGroupFileThatIsNotAFile(t *testing.T) {
	t.Parallel()
	for name, mk := range map[string]func(string) error{
		"fifo":      mkfifo,
		"/dev/zero": func(p string) error { return os.Symlink("/dev/zero", p) },
		"directory": func(p string) error { return os.Mkdir(p, 0o755) },
	} {
		dir := t.TempDir()
		if err := mk(filepath.Join(dir, launch.GroupFile)); err != nil {
			t.Skip(name, err)
		}
		done := make(chan error, 1)
		go func() { _, err := launch.KillLeftover(dir); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), launch.GroupFile) || !strings.Contains(err.Error(), "only from a regular file") {
				t.Errorf("%s as %s: %v, want it refused naming the file", name, launch.GroupFile, err)
			}
		case <-time.After(20 * time.Second): // a bound on a hang, not a timing
			t.Fatalf("the reaper blocked on a %s", name)
		}
	}
}
