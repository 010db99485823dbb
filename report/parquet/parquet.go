// Package parquet writes a run directory's records as Parquet files, for
// pandas, Polars, DuckDB or Spark: requests.parquet holds one row per request
// (its times, latencies, tokens and outcome), and chunks.parquet, on request,
// one row per streamed output chunk. Both are written in one streaming pass
// over requests.jsonl, in row groups, so memory stays bounded whatever the
// run's size.
package parquet

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	pq "github.com/parquet-go/parquet-go"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/redact"
	"github.com/llmbench-org/llmbench/rundir"
)

// File names written into the run directory.
const (
	RequestsFile = "requests.parquet"
	ChunksFile   = "chunks.parquet"
)

// Default row group sizes: tens of MB buffered at most, groups large enough
// for the readers' scans.
const (
	requestsPerGroup = 64 << 10
	chunksPerGroup   = 1 << 20
	batch            = 1024 // rows handed to the writer at once
)

// Request is one row of requests.parquet: one request of the run. Times
// are nanoseconds on the run clock (from the run's start, started_at in
// run.json); latencies are seconds; a null is a moment that did not happen or
// a figure that is undefined for the request (no TTFT without output, no TPOT
// under two tokens). Latencies count from the request's last byte on the wire
// (client.Record.SentOnWire), as every report does.
type Request struct {
	ID       string `parquet:"id"`
	ServerID string `parquet:"server_id"`
	Index    int64  `parquet:"index"` // position in the plan
	Phase    string `parquet:"phase,dict"`

	// SentAt is when the request went out on the wire, as a UTC wall-clock
	// time (started_at + sent_on_wire_ns), to join with other data.
	SentAt *time.Time `parquet:"sent_at,optional,timestamp(nanosecond)"`

	IntendedNS     int64  `parquet:"intended_ns"`
	SentNS         int64  `parquet:"sent_ns"`
	SentOnWireNS   int64  `parquet:"sent_on_wire_ns"`
	ConnectedNS    *int64 `parquet:"connected_ns,optional"`
	FirstByteNS    *int64 `parquet:"first_byte_ns,optional"`
	FirstTokenNS   *int64 `parquet:"first_token_ns,optional"`
	FirstContentNS *int64 `parquet:"first_content_ns,optional"`
	EndNS          *int64 `parquet:"end_ns,optional"`

	TTFT        *float64 `parquet:"ttft_s,optional"`
	TTFC        *float64 `parquet:"ttfc_s,optional"`
	TPOT        *float64 `parquet:"tpot_s,optional"`
	E2E         *float64 `parquet:"e2e_s,optional"`
	ITLMean     *float64 `parquet:"itl_mean_s,optional"` // mean of the request's per-token ITLs (client.Record.ITLs)
	ScheduleLag float64  `parquet:"schedule_lag_s"`      // sent − intended
	SendDelay   float64  `parquet:"send_delay_s"`        // sent_on_wire − sent
	Connect     *float64 `parquet:"connect_s,optional"`  // dial and handshake of a new connection
	Reused      bool     `parquet:"reused"`
	Retries     int32    `parquet:"retries"`

	PromptTokens         int64    `parquet:"prompt_tokens"`
	OutputTokens         int64    `parquet:"output_tokens"`
	CachedTokens         int64    `parquet:"cached_tokens"`
	ReasoningTokens      int64    `parquet:"reasoning_tokens"`
	TargetPromptTokens   int64    `parquet:"target_prompt_tokens"`
	MaxTokens            int64    `parquet:"max_tokens"`
	TokenSource          string   `parquet:"token_source,dict"`
	Chunks               int32    `parquet:"chunks"`
	TokensPerChunk       *float64 `parquet:"tokens_per_chunk,optional"`
	TokensPerChunkSource string   `parquet:"tokens_per_chunk_source,dict"`

	OK           bool   `parquet:"ok"`
	Status       int32  `parquet:"status"` // HTTP status, 0 when none arrived
	ErrorClass   string `parquet:"error_class,dict"`
	Error        string `parquet:"error"`
	FinishReason string `parquet:"finish_reason,dict"`
	NoDone       bool   `parquet:"no_done"`
	NoStream     bool   `parquet:"no_stream"`
}

// Chunk is one row of chunks.parquet: one streamed output chunk of a
// request. The ITL of each of its tokens is gap_ns / tokens (see
// client.Record.ITLs); the first chunk has no gap.
type Chunk struct {
	RequestID    string `parquet:"request_id,dict"`
	RequestIndex int64  `parquet:"request_index,delta"`
	Phase        string `parquet:"phase,dict"`
	Chunk        int32  `parquet:"chunk,delta"` // 0 for the request's first output chunk
	AtNS         int64  `parquet:"at_ns,delta"` // arrival on the run clock
	Tokens       int32  `parquet:"tokens"`      // tokens it carried (0 in old records means 1)
	// GapNS is the time since the previous chunk of its choice (null for a
	// choice's first).
	GapNS *int64 `parquet:"gap_ns,optional"`
	// Choice is the choice it belongs to (n > 1; 0 otherwise).
	Choice int32 `parquet:"choice"`
}

// Options choose what Write writes.
type Options struct {
	Chunks bool // also chunks.parquet
	// RequestsPerGroup and ChunksPerGroup are the files' row group sizes
	// (0: 65,536 requests, 1,048,576 chunks). A row group is buffered in
	// memory before it is written, so they bound the memory Write takes.
	RequestsPerGroup, ChunksPerGroup int
}

// Written says what Write wrote.
type Written struct {
	Files    []string // the paths written
	Requests int      // rows of requests.parquet
	Chunks   int      // rows of chunks.parquet
	// Duplicates are records skipped because one with the same id and plan
	// index came before (a requests.jsonl appended onto itself), as the
	// reports skip them.
	Duplicates int
}

// Write writes the run directory dir's records into dir/requests.parquet
// and, with opts.Chunks, dir/chunks.parquet. Rows come in requests.jsonl's
// order (the order requests finished); sort by index for the plan's. Each
// file is written under a temporary name and renamed when whole.
func Write(dir string, opts Options) (Written, error) {
	var w Written
	meta, err := readMeta(dir)
	if err != nil {
		return w, err
	}
	createdBy := pq.CreatedBy("llmbench", meta.Version, "")
	reqs, err := newTableFile[Request](filepath.Join(dir, RequestsFile), cmp.Or(opts.RequestsPerGroup, requestsPerGroup), createdBy)
	if err != nil {
		return w, err
	}
	defer reqs.abandon()
	var chunks *tableFile[Chunk]
	if opts.Chunks {
		if chunks, err = newTableFile[Chunk](filepath.Join(dir, ChunksFile), cmp.Or(opts.ChunksPerGroup, chunksPerGroup), createdBy); err != nil {
			return w, err
		}
		defer chunks.abandon()
	}

	type key struct {
		id    string
		index int
	}
	seen := map[key]struct{}{}
	var itls []time.Duration
	_, err = rundir.ReadJSONL(filepath.Join(dir, rundir.RequestsFile), func(r *client.Record) error {
		if r.ID != "" {
			k := key{r.ID, r.Index}
			if _, dup := seen[k]; dup {
				w.Duplicates++
				return nil
			}
			seen[k] = struct{}{}
		}
		itls = r.ITLs(itls[:0])
		if err := reqs.add(requestRow(r, meta.StartedAt, itls)); err != nil {
			return err
		}
		w.Requests++
		if chunks == nil {
			return nil
		}
		var prev [64]time.Duration // each choice's last chunk (client.Chunk.Choice)
		var seen uint64
		for i, c := range r.Chunks {
			row := Chunk{RequestID: r.ID, RequestIndex: int64(r.Index), Phase: r.Phase, Chunk: int32(i), AtNS: int64(c.At), Tokens: c.Tokens, Choice: c.Choice}
			if k := uint(c.Choice) % 64; seen&(1<<k) != 0 {
				row.GapNS = ptr(int64(c.At - prev[k]))
			}
			seen |= 1 << (uint(c.Choice) % 64)
			prev[uint(c.Choice)%64] = c.At
			if err := chunks.add(row); err != nil {
				return err
			}
			w.Chunks++
		}
		return nil
	})
	if err != nil {
		return w, fmt.Errorf("parquet: %w", err)
	}
	if err := reqs.close(); err != nil {
		return w, err
	}
	w.Files = append(w.Files, reqs.path)
	if chunks != nil {
		if err := chunks.close(); err != nil {
			return w, err
		}
		w.Files = append(w.Files, chunks.path)
	}
	return w, nil
}

func readMeta(dir string) (rundir.RunMeta, error) {
	var meta rundir.RunMeta
	b, err := rundir.ReadFile(filepath.Join(dir, rundir.RunFile))
	if err != nil {
		return meta, fmt.Errorf("parquet: %w", err)
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return meta, fmt.Errorf("parquet: %s: %w", filepath.Join(dir, rundir.RunFile), err)
	}
	return meta, nil
}

func requestRow(r *client.Record, started time.Time, itls []time.Duration) Request {
	row := Request{
		ID: r.ID, ServerID: r.ServerID, Index: int64(r.Index), Phase: r.Phase,
		IntendedNS: int64(r.Intended), SentNS: int64(r.Sent), SentOnWireNS: int64(r.SentOnWire()),
		ConnectedNS: nonZero(r.Connected), FirstByteNS: nonZero(r.FirstByte), FirstTokenNS: nonZero(r.FirstToken),
		FirstContentNS: nonZero(r.FirstContent), EndNS: nonZero(r.End),
		ScheduleLag: r.ScheduleLag().Seconds(), SendDelay: r.SendDelay().Seconds(),
		Reused: r.Reused, Retries: int32(r.Retries),
		PromptTokens: int64(r.PromptTokens), OutputTokens: int64(r.OutputTokens), CachedTokens: int64(r.CachedTokens),
		ReasoningTokens: int64(r.ReasoningTokens), TargetPromptTokens: int64(r.TargetPromptTokens), MaxTokens: int64(r.MaxTokens),
		TokenSource: string(r.TokenSource), Chunks: int32(len(r.Chunks)), TokensPerChunkSource: string(r.TokensPerChunkSource),
		OK: r.OK(), Status: int32(r.Status), ErrorClass: string(r.ErrorClass), Error: redact.Text(r.Error),
		FinishReason: r.FinishReason, NoDone: r.NoDone, NoStream: r.NoStream,
	}
	if !started.IsZero() {
		t := started.Add(r.SentOnWire()).UTC()
		row.SentAt = &t
	}
	if d, ok := r.TTFT(); ok {
		row.TTFT = ptr(d.Seconds())
	}
	if d, ok := r.TTFC(); ok {
		row.TTFC = ptr(d.Seconds())
	}
	if d, ok := r.TPOT(); ok {
		row.TPOT = ptr(d.Seconds())
	}
	if r.End > 0 {
		row.E2E = ptr(r.E2E().Seconds())
	}
	if len(itls) > 0 {
		var sum time.Duration
		for _, d := range itls {
			sum += d
		}
		row.ITLMean = ptr(sum.Seconds() / float64(len(itls)))
	}
	if r.ConnectDur > 0 {
		row.Connect = ptr(r.ConnectDur.Seconds())
	}
	if v, ok := r.TokensPerChunk(); ok {
		row.TokensPerChunk = ptr(v)
	}
	return row
}

func ptr[T any](v T) *T { return &v }

// nonZero is d in nanoseconds, or nil for a zero time: "did not happen".
func nonZero(d time.Duration) *int64 {
	if d == 0 {
		return nil
	}
	return ptr(int64(d))
}

// tableFile is one Parquet file being written: rows are handed to the writer
// in batches, and the writer cuts a row group every perGroup rows.
type tableFile[T any] struct {
	path string
	f    *rundir.File // atomic: in place only once whole
	w    *pq.GenericWriter[T]
	rows []T
}

func newTableFile[T any](path string, perGroup int, createdBy pq.WriterOption) (*tableFile[T], error) {
	f, err := rundir.Create(path)
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	w := pq.NewGenericWriter[T](f, pq.Compression(&pq.Zstd), pq.MaxRowsPerRowGroup(int64(perGroup)), createdBy)
	return &tableFile[T]{path: path, f: f, w: w, rows: make([]T, 0, batch)}, nil
}

func (t *tableFile[T]) add(row T) error {
	t.rows = append(t.rows, row)
	if len(t.rows) < batch {
		return nil
	}
	return t.flush()
}

func (t *tableFile[T]) flush() error {
	if _, err := t.w.Write(t.rows); err != nil {
		return fmt.Errorf("parquet: write %s: %w", t.path, err)
	}
	clear(t.rows) // drop the strings and pointers the writer has copied
	t.rows = t.rows[:0]
	return nil
}

// close writes the last rows and the footer, and puts the file in place.
func (t *tableFile[T]) close() error {
	err := t.flush()
	if err == nil {
		err = t.w.Close()
	}
	if err != nil {
		t.f.Abort()
		return fmt.Errorf("parquet: %s: %w", t.path, err)
	}
	if err := t.f.Commit(); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	return nil
}

// abandon removes a file that was not finished (an error on the way).
func (t *tableFile[T]) abandon() {
	t.f.Abort() // nothing after Commit
}
