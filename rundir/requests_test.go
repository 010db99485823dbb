package rundir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/bigrun"
	"github.com/llmbench-org/llmbench/report/chunkdigest"
)

// writeBigRun writes a generated run directory: run.json and requests.jsonl
// (the first phase not measured), plus extra raw lines appended.
func writeBigRun(t testing.TB, n, chunks int, extra ...string) string {
	t.Helper()
	dir := t.TempDir()
	var buf bytes.Buffer
	spans, err := bigrun.Write(&buf, bigrun.Config{Requests: n, Chunks: chunks, Seed: 5, Phases: []string{"warmup", "a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range extra {
		buf.WriteString(e)
	}
	if err := os.WriteFile(filepath.Join(dir, RequestsFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	meta := RunMeta{ID: "big", Scenario: "big", StartedAt: start, Ended: start.Add(time.Hour)}
	for i, sp := range spans {
		meta.Phases = append(meta.Phases, PhaseMeta{Name: sp.Name, Measured: i > 0, Start: sp.Start, End: sp.End})
	}
	b, _ := json.Marshal(meta)
	if err := os.WriteFile(filepath.Join(dir, RunFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// firstLine is line i of a run directory's requests.jsonl.
func lineOf(t *testing.T, dir string, i int) string {
	b, err := os.ReadFile(filepath.Join(dir, RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(bytes.Split(b, []byte{'\n'})[i]) + "\n"
}

// One streaming pass gives the same records, digests and counts whatever
// the number of workers, and the same records as reading every line whole
// (ReadJSONL, then the duplicates dropped): a duplicate and a torn last
// line included.
func TestReadRequestsSameForAnyWorkerCount(t *testing.T) {
	t.Parallel()
	dir := writeBigRun(t, 3000, 12)
	dup := lineOf(t, dir, 1500)
	glued := `{"id":"torn","ind` + lineOf(t, dir, 10) // a torn line with a whole record glued on
	dir = writeBigRun(t, 3000, 12, dup, glued, `{"id":"cut-off","ind`)
	path := filepath.Join(dir, RequestsFile)

	var want []client.Record
	partial, err := ReadJSONL(path, func(r *client.Record) error { want = append(want, *r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	want, dups := DedupeRecords(want)
	for i := range want {
		RedactRecord(&want[i])
	}
	slices.SortStableFunc(want, func(a, b client.Record) int { return a.Index - b.Index })
	wantChunks := make([]chunkdigest.Request, len(want))
	for i := range want {
		wantChunks[i] = chunkdigest.Of(&want[i])
		want[i].Chunks = nil
	}

	var first *Requests
	for _, c := range []struct{ workers, block int }{{1, readBlockBytes}, {2, 64 << 10}, {3, 64 << 10}, {8, 64 << 10}, {2, 100}} {
		workers := c.workers
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		// Blocks of 64 KiB make many batches; of 100 bytes, every line is
		// longer than a block.
		got, err := readRequests(f, path, []chunkdigest.Span{{From: 0, To: 2 * time.Second}}, workers, 0, c.block)
		f.Close()
		if err != nil {
			t.Fatalf("%d workers: %v", workers, err)
		}
		if got.Partial != partial || got.Duplicates != dups || dups != 2 || partial != 2 {
			t.Errorf("%d workers: %d partial, %d duplicates; ReadJSONL: %d, %d (want 2 and 2)", workers, got.Partial, got.Duplicates, partial, dups)
		}
		if !reflect.DeepEqual(got.Records, want) {
			t.Fatalf("%d workers: records differ from ReadJSONL's", workers)
		}
		if !reflect.DeepEqual(got.Chunks, wantChunks) {
			t.Fatalf("%d workers: chunk digests differ from the records'", workers)
		}
		if first == nil {
			first = got
			continue
		}
		if !reflect.DeepEqual(got.Records, first.Records) || !reflect.DeepEqual(got.Chunks, first.Chunks) ||
			!reflect.DeepEqual(canonical(got.Digest), canonical(first.Digest)) {
			t.Errorf("%d workers, blocks of %d bytes: the result differs from 1 worker's", workers, c.block)
		}
	}
	// The duplicate's chunks are not counted twice.
	if n := first.Digest.Of(nil).Arrivals.Total(); n != sumChunkTokens(t, dir) {
		t.Errorf("arrivals count %d tokens, the distinct records carry %d", n, sumChunkTokens(t, dir))
	}
}

// canonical is what a digest says, whatever the order it was merged in
// (a reservoir's heap is laid out by the order of its offers).
func canonical(d *chunkdigest.Digest) any {
	type phase struct {
		ITL      chunkdigest.Sketch
		Arrivals chunkdigest.Bins
		Sample   []chunkdigest.Sampled
	}
	out := map[string]phase{}
	for name, p := range d.Phases {
		out[name] = phase{p.ITL, p.Arrivals, p.Sample.Requests()}
	}
	return []any{out, d.InSpans, d.Spans}
}

// sumChunkTokens counts the tokens of the distinct records' chunks,
// reading the file whole.
func sumChunkTokens(t *testing.T, dir string) int64 {
	var recs []client.Record
	if _, err := ReadJSONL(filepath.Join(dir, RequestsFile), func(r *client.Record) error { recs = append(recs, *r); return nil }); err != nil {
		t.Fatal(err)
	}
	recs, _ = DedupeRecords(recs)
	var n int64
	for _, r := range recs {
		for _, c := range r.Chunks {
			n += int64(max(c.Tokens, 1))
		}
	}
	return n
}

// A bad line inside the file (not the last) is an error naming the line.
func TestReadRequestsBadLineInside(t *testing.T) {
	t.Parallel()
	dir := writeBigRun(t, 700, 3, "not json\n", `{"id":"after","index":9999}`+"\n")
	_, err := ReadRequests(filepath.Join(dir, RequestsFile), nil)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte(":701:")) {
		t.Errorf("error %v, want one naming line 701", err)
	}
}

// SortByIndex moves records and their digests together, stably.
func TestSortByIndexInPlace(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	r := &Requests{}
	for i := range 5000 {
		idx := rng.IntN(1000) // repeats: stability matters
		r.Records = append(r.Records, client.Record{ID: fmt.Sprint(i), Index: idx})
		r.Chunks = append(r.Chunks, chunkdigest.Request{Chunks: int32(i)})
	}
	want := slices.Clone(r.Records)
	slices.SortStableFunc(want, func(a, b client.Record) int { return a.Index - b.Index })
	SortByIndex(r)
	if !reflect.DeepEqual(r.Records, want) {
		t.Fatal("records not in stable plan order")
	}
	for i, rec := range r.Records {
		if fmt.Sprint(r.Chunks[i].Chunks) != rec.ID {
			t.Fatalf("record %s carries the digest of record %d", rec.ID, r.Chunks[i].Chunks)
		}
	}
}

// BenchmarkDecodeRecords is decodeRecord alone over the same file, on one
// core: the floor BenchmarkBuild stands on (compare CPU per request).
func BenchmarkDecodeRecords(b *testing.B) {
	dir := writeBigRun(b, 10_000, 200)
	data, err := os.ReadFile(filepath.Join(dir, RequestsFile))
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte{'\n'}), []byte{'\n'})
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		for _, l := range lines {
			var r client.Record
			if err := decodeRecord(l, &r, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(lines)), "ns/request")
}
