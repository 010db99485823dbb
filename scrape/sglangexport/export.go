// Package sglangexport reads SGLang's per-request metrics export
// (`--export-metrics-to-file --export-metrics-to-file-dir DIR`): one JSON
// object a line, in files named sglang-request-metrics-YYYYMMDD_HH.log (the
// hour of the engine host's local clock when the line was written), one
// line per finished request. The built-in engine writes the same files in
// its SGLang dialect. This package reads and checks; it does not join
// (report/timeline does). Decision 2400.
//
// What a line holds (SGLang's FileRequestMetricsExporter and the meta_info
// its TokenizerManager builds for a finished request):
//
//   - request_parameters: the GenerateReqInput's fields that are not None,
//     as a JSON string (rid among them: the id the client sent in the body)
//   - id: the rid; finish_reason, prompt_tokens, completion_tokens,
//     cached_tokens, reasoning_tokens, num_retractions, e2e_latency (s)
//   - with --enable-metrics only: request_received_ts,
//     api_server_dispatch_finish_ts, response_sent_to_client_ts,
//     request_finished_ts (API-server stamps), forward_entry_time and
//     prefill_finished_time (scheduler stamps), all Unix seconds as floats
//     (time.perf_counter() plus the process's realtime offset); queue_time,
//     inference_time, prefill_waiting_latency, prefill_launch_latency in
//     seconds; decode_throughput in tokens/s.
package sglangexport

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/internal/inputfile"
)

// File names: FilePrefix + the hour (FileHourLayout, local time) + FileSuffix.
const (
	FilePrefix     = "sglang-request-metrics-"
	FileHourLayout = "20060102_15"
	FileSuffix     = ".log"
)

// FileName is the file SGLang appends a line to at t (its datetime.now(),
// the host's local time).
func FileName(t time.Time) string {
	return FilePrefix + t.Local().Format(FileHourLayout) + FileSuffix
}

// IsFileName says whether name is one of the export's files.
func IsFileName(name string) bool {
	hour, ok := strings.CutPrefix(name, FilePrefix)
	if !ok {
		return false
	}
	hour, ok = strings.CutSuffix(hour, FileSuffix)
	if !ok {
		return false
	}
	_, err := time.Parse(FileHourLayout, hour)
	return err == nil
}

// Record is one line: the fields llmbench reads. Times are Unix
// nanoseconds on the engine host's wall clock (0 = absent), durations
// nanoseconds (Has* say whether the line carried them).
type Record struct {
	ID  string `json:"id"`  // meta_info.id: the request's rid
	RID string `json:"rid"` // request_parameters.rid when it is a string ("" otherwise)

	Received     int64 `json:"request_received_unix_ns,omitempty"`        // request_received_ts: the API server's receipt
	DispatchDone int64 `json:"dispatch_finish_unix_ns,omitempty"`         // api_server_dispatch_finish_ts: tokenized and sent to the scheduler
	ForwardEntry int64 `json:"forward_entry_unix_ns,omitempty"`           // forward_entry_time: the scheduler put it in its first batch
	PrefillDone  int64 `json:"prefill_finished_unix_ns,omitempty"`        // prefill_finished_time: its prefill batch's result processed (the first token)
	FirstSent    int64 `json:"response_sent_to_client_unix_ns,omitempty"` // response_sent_to_client_ts: its first chunk (stream) or its answer handed to the HTTP layer
	Finished     int64 `json:"request_finished_unix_ns,omitempty"`        // request_finished_ts: its last output at the API server

	Queue    time.Duration `json:"queue_ns"` // queue_time: forward_entry − wait-queue entry
	HasQueue bool          `json:"has_queue"`
	E2E      time.Duration `json:"e2e_ns,omitempty"` // e2e_latency: API-server receipt to finish

	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	CachedTokens     int    `json:"cached_tokens"`
	FinishType       string `json:"finish_type,omitempty"` // finish_reason.type: stop, length, abort
}

// Timed says whether the record carries what a request's timeline needs:
// the engine was run with --enable-metrics.
func (r *Record) Timed() bool {
	return r.Received != 0 && r.ForwardEntry != 0 && r.PrefillDone != 0 && r.HasQueue
}

// wire is a line as SGLang writes it; pointers tell absent from zero.
type wire struct {
	RequestParameters *string         `json:"request_parameters"`
	ID                json.RawMessage `json:"id"`
	FinishReason      json.RawMessage `json:"finish_reason"`
	PromptTokens      *float64        `json:"prompt_tokens"`
	CompletionTokens  *float64        `json:"completion_tokens"`
	CachedTokens      *float64        `json:"cached_tokens"`
	E2E               *float64        `json:"e2e_latency"`
	Received          *float64        `json:"request_received_ts"`
	DispatchDone      *float64        `json:"api_server_dispatch_finish_ts"`
	FirstSent         *float64        `json:"response_sent_to_client_ts"`
	Finished          *float64        `json:"request_finished_ts"`
	ForwardEntry      *float64        `json:"forward_entry_time"`
	PrefillDone       *float64        `json:"prefill_finished_time"`
	QueueTime         *float64        `json:"queue_time"`
}

// ParseLine reads one line. An error says why the line is not a record.
func ParseLine(line []byte) (Record, error) {
	var w wire
	if err := json.Unmarshal(line, &w); err != nil {
		return Record{}, fmt.Errorf("not a JSON object: %w", err)
	}
	var r Record
	if err := json.Unmarshal(w.ID, &r.ID); err != nil || r.ID == "" {
		return Record{}, errors.New(`no "id" string (the request's rid)`)
	}
	if w.RequestParameters != nil {
		var p struct {
			RID json.RawMessage `json:"rid"`
		}
		if err := json.Unmarshal([]byte(*w.RequestParameters), &p); err != nil {
			return Record{}, fmt.Errorf("request_parameters is not a JSON object: %w", err)
		}
		_ = json.Unmarshal(p.RID, &r.RID) // a list of rids (a batch) stays ""
	}
	var fr struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(w.FinishReason, &fr) == nil {
		r.FinishType = fr.Type
	}
	var err error
	stamp := func(name string, v *float64) int64 {
		if v == nil || err != nil {
			return 0
		}
		// Seconds since 1970 within the years 2000 to 2200: a float64
		// holds them to a quarter of a microsecond.
		if math.IsNaN(*v) || *v < 946684800 || *v > 7258118400 {
			err = fmt.Errorf("%s %v is not a Unix time in seconds", name, *v)
			return 0
		}
		return int64(math.Round(*v * 1e9))
	}
	r.Received = stamp("request_received_ts", w.Received)
	r.DispatchDone = stamp("api_server_dispatch_finish_ts", w.DispatchDone)
	r.FirstSent = stamp("response_sent_to_client_ts", w.FirstSent)
	r.Finished = stamp("request_finished_ts", w.Finished)
	r.ForwardEntry = stamp("forward_entry_time", w.ForwardEntry)
	r.PrefillDone = stamp("prefill_finished_time", w.PrefillDone)
	dur := func(name string, v *float64) time.Duration {
		if v == nil || err != nil {
			return 0
		}
		if math.IsNaN(*v) || *v < 0 || *v > 1e6 {
			err = fmt.Errorf("%s %v is not a duration in seconds", name, *v)
			return 0
		}
		return time.Duration(math.Round(*v * 1e9))
	}
	r.Queue, r.HasQueue = dur("queue_time", w.QueueTime), w.QueueTime != nil
	r.E2E = dur("e2e_latency", w.E2E)
	count := func(name string, v *float64) int {
		if v == nil || err != nil {
			return 0
		}
		if *v < 0 || *v > 1e12 || *v != math.Trunc(*v) {
			err = fmt.Errorf("%s %v is not a token count", name, *v)
			return 0
		}
		return int(*v)
	}
	r.PromptTokens = count("prompt_tokens", w.PromptTokens)
	r.CompletionTokens = count("completion_tokens", w.CompletionTokens)
	r.CachedTokens = count("cached_tokens", w.CachedTokens)
	if err != nil {
		return Record{}, fmt.Errorf("request %s: %w", r.ID, err)
	}
	return r, nil
}

// Log is what a reading found.
type Log struct {
	Records []Record `json:"records"` // in file order, files in name (hour) order
	// Skipped counts lines that are not records (a line cut short while
	// the engine was writing, other output); FirstProblem names the first.
	Skipped      int    `json:"skipped"`
	FirstProblem string `json:"first_problem,omitempty"`
}

// Read reads one export file, name for messages. Only a read error or a
// line over inputfile.RequestExport's bound fails it.
func Read(r io.Reader, name string, into *Log) error {
	sc := inputfile.NewLines(r, name, inputfile.RequestExport)
	n := 0
	for sc.Next() {
		n++
		line := sc.Bytes()
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		rec, err := ParseLine(line)
		if err != nil {
			into.Skipped++
			if into.FirstProblem == "" {
				into.FirstProblem = fmt.Sprintf("%s:%d: %v", name, n, err)
			}
			continue
		}
		into.Records = append(into.Records, rec)
	}
	if err := sc.Err(); err != nil {
		var be *inputfile.BoundError
		if errors.As(err, &be) {
			return err
		}
		return fmt.Errorf("read %s after line %d: %w", name, n, err)
	}
	return nil
}

// ReadDir reads every export file in dir, in name (hour) order. A missing
// dir is no export: an empty Log.
func ReadDir(dir string) (Log, error) {
	var log Log
	names, err := Files(dir)
	if err != nil {
		return log, err
	}
	for _, name := range names {
		path := filepath.Join(dir, name)
		f, err := inputfile.Open(path, inputfile.RequestExport)
		if err != nil {
			return log, err
		}
		err = Read(f, path, &log)
		f.Close()
		if err != nil {
			return log, err
		}
	}
	return log, nil
}

// Files lists dir's export files in name order; none for a missing dir.
func Files(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && IsFileName(e.Name()) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}
