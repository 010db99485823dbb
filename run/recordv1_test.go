package run_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/run"
	"github.com/llmbench-org/llmbench/rundir"
)

// v1Run is a run directory written before record format v2 (report's
// testdata: the Parquet export reads it too).
const v1Run = "../report/testdata/v1-run"

// copyRun copies a run directory's raw files into a new temporary one.
func copyRun(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// v1Chunk and v1Record are the v1 line's shape, decoded by encoding/json
// alone: what the old format meant, independent of client's decoder.
type v1Chunk struct {
	At     int64 `json:"at_ns"`
	Tokens int32 `json:"tokens"`
}

type v1Record struct {
	ID     string    `json:"id"`
	Chunks []v1Chunk `json:"chunks"`
	Output int       `json:"output_tokens"`
	End    int64     `json:"end_ns"`
}

func lines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

func readRecords(t *testing.T, path string) []client.Record {
	t.Helper()
	var out []client.Record
	if _, err := rundir.ReadJSONL(path, func(r *client.Record) error {
		out = append(out, *r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// rewriteRecords writes records as requests.jsonl of dir, line i in v2 when
// v2(i), in v1 otherwise.
func rewriteRecords(t *testing.T, dir string, records []client.Record, v2 func(i int) bool) {
	t.Helper()
	var b []byte
	for i := range records {
		if v2(i) {
			b = records[i].AppendJSON(b)
		} else {
			old := lines(t, filepath.Join(v1Run, rundir.RequestsFile))[i]
			b = append(b, old...)
		}
		b = append(b, '\n')
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.RequestsFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestV1RunDirectoryReads: a run directory of v1 records reads as its lines
// say, and reports the same whether its records are v1, v2, or both mixed
// in one file (an old file appended to by a new llmbench).
func TestV1RunDirectoryReads(t *testing.T) {
	t.Parallel()
	path := filepath.Join(v1Run, rundir.RequestsFile)
	raw := lines(t, path)
	records := readRecords(t, path)
	if len(records) != len(raw) || len(records) < 100 {
		t.Fatalf("read %d records from %d lines", len(records), len(raw))
	}
	multi := 0
	for i, line := range raw {
		if bytes.Contains(line, []byte(`"v":`)) {
			t.Fatalf("line %d is not v1: %s", i+1, line)
		}
		var want v1Record
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatal(err)
		}
		got := records[i]
		if got.ID != want.ID || got.OutputTokens != want.Output || int64(got.End) != want.End || len(got.Chunks) != len(want.Chunks) {
			t.Fatalf("line %d: read %+v", i+1, got)
		}
		for j, c := range want.Chunks {
			if int64(got.Chunks[j].At) != c.At || got.Chunks[j].Tokens != c.Tokens {
				t.Fatalf("line %d chunk %d: %+v, the line says %+v", i+1, j, got.Chunks[j], c)
			}
			if c.Tokens > 1 {
				multi++
			}
		}
	}
	if multi == 0 {
		t.Fatal("the v1 run has no chunk of several tokens: it does not test chunk_tokens")
	}

	summaries := map[string][]byte{}
	for name, v2 := range map[string]func(int) bool{
		"v1":    func(int) bool { return false },
		"v2":    func(int) bool { return true },
		"mixed": func(i int) bool { return i%3 == 1 },
	} {
		dir := copyRun(t, v1Run)
		rewriteRecords(t, dir, records, v2)
		if name != "v1" {
			if d := cmp.Diff(records, readRecords(t, filepath.Join(dir, rundir.RequestsFile))); d != "" {
				t.Fatalf("%s: records differ from v1's (-v1 +%s):\n%s", name, name, d)
			}
		}
		fin, err := run.Finalize(dir, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fin.Summary.Health.Records != len(records) {
			t.Fatalf("%s: summary of %d records, want %d", name, fin.Summary.Health.Records, len(records))
		}
		if summaries[name], err = os.ReadFile(filepath.Join(dir, rundir.SummaryFile)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"v2", "mixed"} {
		if d := cmp.Diff(string(summaries["v1"]), string(summaries[name])); d != "" {
			t.Errorf("summary.json of the %s records differs from v1's:\n%s", name, d)
		}
	}
}

// TestMergeOfBothVersions: shards of a v1 and a v2 run merge into v2 lines
// that hold the same records.
func TestMergeOfBothVersions(t *testing.T) {
	t.Parallel()
	records := readRecords(t, filepath.Join(v1Run, rundir.RequestsFile))
	half := len(records) / 2
	var shards []string
	for shard, v2 := range []bool{false, true} {
		dir := copyRun(t, v1Run)
		b, err := os.ReadFile(filepath.Join(dir, rundir.RunFile))
		if err != nil {
			t.Fatal(err)
		}
		var meta map[string]any
		if err := json.Unmarshal(b, &meta); err != nil {
			t.Fatal(err)
		}
		meta["shard"], meta["shards"] = shard, 2
		if b, err = json.Marshal(meta); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rundir.RunFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		rewriteRecords(t, dir, records, func(int) bool { return v2 })
		mine := records[:half]
		if shard == 1 {
			mine = records[half:]
		}
		// Keep this shard's lines only.
		all := lines(t, filepath.Join(dir, rundir.RequestsFile))
		kept := all[:half]
		if shard == 1 {
			kept = all[half:]
		}
		if err := os.WriteFile(filepath.Join(dir, rundir.RequestsFile), append(bytes.Join(kept, []byte("\n")), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := readRecords(t, filepath.Join(dir, rundir.RequestsFile)); !cmp.Equal(got, mine) {
			t.Fatalf("shard %d: %s", shard, cmp.Diff(mine, got))
		}
		shards = append(shards, dir)
	}
	out := filepath.Join(t.TempDir(), "merged")
	if err := rundir.Merge(out, shards); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(out, rundir.RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if !bytes.HasPrefix(sc.Bytes(), []byte(`{"v":2,`)) {
			t.Fatalf("merged line is not v2: %.80s", sc.Bytes())
		}
	}
	merged := readRecords(t, filepath.Join(out, rundir.RequestsFile))
	byID := func(a, b client.Record) int { return strings.Compare(a.ID, b.ID) }
	want := slices.Clone(records)
	slices.SortFunc(want, byID)
	slices.SortFunc(merged, byID)
	if d := cmp.Diff(want, merged); d != "" {
		t.Fatalf("merged records differ (-shards +merged):\n%s", d)
	}
	if _, err := report.Build(out); err != nil {
		t.Fatal(err)
	}
}

// TestTornV2LineAtEveryByte: a v2 line torn at any byte (a full disk), with
// the next line glued to it, reads as one torn line and the whole next one.
func TestTornV2LineAtEveryByte(t *testing.T) {
	t.Parallel()
	records := readRecords(t, filepath.Join(v1Run, rundir.RequestsFile))
	var torn, whole client.Record
	for _, r := range records {
		if len(r.Chunks) > 3 && torn.ID == "" {
			torn = r
		} else if len(r.Chunks) > 3 {
			whole = r
			break
		}
	}
	line, next := torn.AppendJSON(nil), whole.AppendJSON(nil)
	path := filepath.Join(t.TempDir(), rundir.RequestsFile)
	for cut := 1; cut < len(line); cut++ {
		b := append(append(append(slices.Clip(line[:cut]), next...), '\n'), next...)
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		var got []client.Record
		partial, err := rundir.ReadJSONL(path, func(r *client.Record) error {
			got = append(got, *r)
			return nil
		})
		if err != nil || partial != 1 || len(got) != 2 || !cmp.Equal(got[0], whole) || !cmp.Equal(got[1], whole) {
			t.Fatalf("torn at byte %d (%q): %d records, %d partial, %v", cut, line[max(0, cut-10):cut], len(got), partial, err)
		}
	}
}
