package parquet

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	pq "github.com/parquet-go/parquet-go"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/rundir"
)

// runDir copies the v1 run directory of report's testdata (requests with
// reasoning, tool calls, chunks of two tokens, HTTP and stream errors) into a
// temporary one; with v2, its records are rewritten as v2 lines, twice over
// (a requests.jsonl appended onto itself, whose copies Write skips).
func runDir(t *testing.T, v2 bool) (string, []client.Record) {
	t.Helper()
	src := filepath.Join("..", "testdata", "v1-run")
	dir := t.TempDir()
	for _, name := range []string{rundir.RunFile, rundir.RequestsFile} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var records []client.Record
	if _, err := rundir.ReadJSONL(filepath.Join(dir, rundir.RequestsFile), func(r *client.Record) error {
		records = append(records, *r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if v2 {
		// One record of two choices (n = 2): its chunks' gaps are each
		// choice's own.
		for i := range records {
			if len(records[i].Chunks) >= 4 {
				for j := range records[i].Chunks {
					records[i].Chunks[j].Choice = int32(j % 2)
				}
				records[i].Choices = 2
				break
			}
		}
		var b []byte
		for range 2 {
			for i := range records {
				b = append(records[i].AppendJSON(b), '\n')
			}
		}
		if err := os.WriteFile(filepath.Join(dir, rundir.RequestsFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, records
}

func readBack[T any](t *testing.T, path string) ([]T, *pq.File) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	file, err := pq.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	rows, err := pq.Read[T](f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return rows, file
}

func sec(d time.Duration) float64 { return d.Seconds() }

func eqOpt(t *testing.T, what string, got *float64, want float64, has bool) {
	t.Helper()
	switch {
	case got == nil && has:
		t.Errorf("%s: null, want %v", what, want)
	case got != nil && !has:
		t.Errorf("%s: %v, want null", what, *got)
	case got != nil && math.Abs(*got-want) > 1e-12:
		t.Errorf("%s: %v, want %v", what, *got, want)
	}
}

func TestWriteReadsBack(t *testing.T) {
	t.Parallel()
	for _, v2 := range []bool{false, true} {
		dir, records := runDir(t, v2)
		w, err := Write(dir, Options{Chunks: true, RequestsPerGroup: 50, ChunksPerGroup: 300})
		if err != nil {
			t.Fatal(err)
		}
		wantDup := 0
		if v2 {
			wantDup = len(records)
		}
		if w.Requests != len(records) || w.Duplicates != wantDup || len(w.Files) != 2 {
			t.Fatalf("v2 %v: wrote %+v for %d records", v2, w, len(records))
		}
		meta, err := readMeta(dir)
		if err != nil {
			t.Fatal(err)
		}

		rows, file := readBack[Request](t, filepath.Join(dir, RequestsFile))
		if len(rows) != len(records) || file.NumRows() != int64(len(records)) || len(file.RowGroups()) < 3 {
			t.Fatalf("requests.parquet: %d rows in %d row groups, want %d rows in several", len(rows), len(file.RowGroups()), len(records))
		}
		var wantChunks []Chunk
		failed, multi := 0, 0
		for i, r := range records {
			row := rows[i]
			if row.ID != r.ID || row.ServerID != r.ServerID || row.Index != int64(r.Index) || row.Phase != r.Phase ||
				row.OK != r.OK() || row.ErrorClass != string(r.ErrorClass) || row.Status != int32(r.Status) ||
				row.OutputTokens != int64(r.OutputTokens) || row.PromptTokens != int64(r.PromptTokens) ||
				row.ReasoningTokens != int64(r.ReasoningTokens) || row.FinishReason != r.FinishReason ||
				row.Chunks != int32(len(r.Chunks)) || row.SentOnWireNS != int64(r.SentOnWire()) || row.IntendedNS != int64(r.Intended) {
				t.Fatalf("row %d = %+v\nrecord %+v", i, row, r)
			}
			if (row.EndNS == nil) != (r.End == 0) || (row.EndNS != nil && *row.EndNS != int64(r.End)) ||
				(row.FirstTokenNS == nil) != (r.FirstToken == 0) || (row.FirstTokenNS != nil && *row.FirstTokenNS != int64(r.FirstToken)) {
				t.Fatalf("row %d times: %+v, record %+v", i, row, r)
			}
			if row.SentAt == nil || !row.SentAt.Equal(meta.StartedAt.Add(r.SentOnWire())) {
				t.Fatalf("row %d sent_at %v, want %v", i, row.SentAt, meta.StartedAt.Add(r.SentOnWire()))
			}
			ttft, hasTTFT := r.TTFT()
			eqOpt(t, "ttft", row.TTFT, sec(ttft), hasTTFT)
			ttfc, hasTTFC := r.TTFC()
			eqOpt(t, "ttfc", row.TTFC, sec(ttfc), hasTTFC)
			tpot, hasTPOT := r.TPOT()
			eqOpt(t, "tpot", row.TPOT, sec(tpot), hasTPOT)
			eqOpt(t, "e2e", row.E2E, sec(r.E2E()), r.End > 0)
			itls := r.ITLs(nil)
			var sum time.Duration
			for _, d := range itls {
				sum += d
			}
			eqOpt(t, "itl_mean", row.ITLMean, sec(sum)/float64(len(itls)), len(itls) > 0)
			if !r.OK() {
				failed++
			}
			for j, c := range r.Chunks {
				ch := Chunk{RequestID: r.ID, RequestIndex: int64(r.Index), Phase: r.Phase, Chunk: int32(j), AtNS: int64(c.At), Tokens: c.Tokens, Choice: c.Choice}
				for k := j - 1; k >= 0; k-- { // the previous chunk of its choice
					if r.Chunks[k].Choice == c.Choice {
						ch.GapNS = ptr(int64(c.At - r.Chunks[k].At))
						break
					}
				}
				if c.Tokens > 1 {
					multi++
				}
				wantChunks = append(wantChunks, ch)
			}
		}
		if failed == 0 || multi == 0 {
			t.Fatalf("the run has %d failed requests and %d chunks of several tokens: it tests neither", failed, multi)
		}

		chunks, cfile := readBack[Chunk](t, filepath.Join(dir, ChunksFile))
		if w.Chunks != len(wantChunks) || len(cfile.RowGroups()) < 3 {
			t.Fatalf("chunks.parquet: wrote %d rows in %d row groups, want %d in several", w.Chunks, len(cfile.RowGroups()), len(wantChunks))
		}
		if !slices.EqualFunc(chunks, wantChunks, func(a, b Chunk) bool {
			return a.RequestID == b.RequestID && a.RequestIndex == b.RequestIndex && a.Phase == b.Phase && a.Chunk == b.Chunk &&
				a.AtNS == b.AtNS && a.Tokens == b.Tokens && (a.GapNS == nil) == (b.GapNS == nil) && (a.GapNS == nil || *a.GapNS == *b.GapNS)
		}) {
			t.Fatalf("chunks.parquet holds other chunks than requests.jsonl (%d rows, want %d)", len(chunks), len(wantChunks))
		}
		for _, name := range []string{RequestsFile + ".tmp", ChunksFile + ".tmp"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				t.Errorf("%s left behind", name)
			}
		}
	}
}

// TestColumns pins the files' column names: notebooks and queries name them.
func TestColumns(t *testing.T) {
	t.Parallel()
	dir, _ := runDir(t, false)
	if _, err := Write(dir, Options{Chunks: true}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{
		RequestsFile: {"id", "server_id", "index", "phase", "sent_at", "intended_ns", "sent_ns", "sent_on_wire_ns", "connected_ns",
			"first_byte_ns", "first_token_ns", "first_content_ns", "end_ns", "ttft_s", "ttfc_s", "tpot_s", "e2e_s", "itl_mean_s",
			"schedule_lag_s", "send_delay_s", "connect_s", "reused", "retries", "prompt_tokens", "output_tokens", "cached_tokens",
			"reasoning_tokens", "target_prompt_tokens", "max_tokens", "token_source", "chunks", "tokens_per_chunk",
			"tokens_per_chunk_source", "ok", "status", "error_class", "error", "finish_reason", "no_done", "no_stream"},
		ChunksFile: {"request_id", "request_index", "phase", "chunk", "at_ns", "tokens", "gap_ns", "choice"},
	} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		st, _ := f.Stat()
		file, err := pq.OpenFile(f, st.Size())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range file.Schema().Fields() {
			got = append(got, f.Name())
			if lt := f.Type().LogicalType(); f.Name() == "sent_at" && (lt == nil || !strings.HasPrefix(lt.String(), "TIMESTAMP")) {
				t.Errorf("sent_at is not a timestamp: %v", f.Type())
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s columns:\n got %q\nwant %q", name, got, want)
		}
	}
}

// TestWriteFailsWhole: a broken requests.jsonl writes nothing, and leaves no
// temporary file.
func TestWriteFailsWhole(t *testing.T) {
	t.Parallel()
	dir, _ := runDir(t, false)
	path := filepath.Join(dir, rundir.RequestsFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append([]byte("{broken\n"), b...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, Options{Chunks: true}); err == nil {
		t.Fatal("wrote Parquet from a broken requests.jsonl")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("a failed write left %d files in the run directory", len(entries))
	}
}
