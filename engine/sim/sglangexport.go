package sim

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/llmbench-org/llmbench/engine/sim/batch"
)

// requestExport writes SGLang's per-request metrics export
// (--export-metrics-to-file, python/sglang/srt/managers/
// request_metrics_exporter.py; decision 2400) for the sglang dialect: one
// JSON object a line, appended to sglang-request-metrics-YYYYMMDD_HH.log in
// Config.SGLangExportDir (the hour of the local clock when the line is
// written, a new file each hour), one line per finished request, as
// SGLang writes it with --enable-metrics:
//
//	request_parameters  json.dumps of the request's fields that are not None (rid, stream, sampling_params, …)
//	id                  the rid
//	finish_reason       {"type": "length", "length": N} | {"type": "stop", "matched": …} | {"type": "abort", "message": …}
//	prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens (ints), weight_version, num_retractions
//	forward_entry_time       epoch + QueueLeave            (Unix s, float: the scheduler's first batch)
//	prefill_finished_time    epoch + PrefillEnd            (its prefill's result: the first token)
//	queue_time               QueueLeave − QueueEnter       (s)
//	prefill_waiting_latency  PrefillStart − QueueLeave     (s)
//	prefill_launch_latency   PrefillEnd − PrefillStart     (s)
//	e2e_latency              DecodeEnd − Arrival           (s)
//	request_received_ts      epoch + Arrival
//	api_server_dispatch_finish_ts  epoch + QueueEnter      (tokenized and handed to the scheduler)
//	response_sent_to_client_ts     epoch + the first chunk's flush (a stream) or Finish (a whole body)
//	request_finished_ts      epoch + DecodeEnd             (the last token at the API server)
//	inference_time           DecodeEnd − QueueLeave        (s)
//	decode_throughput        completion_tokens / (DecodeEnd − PrefillEnd)   (tokens/s, when both are > 0)
//
// An aborted request's line carries no stamps (SGLang's abort path builds
// its meta_info without them). A line is written once per request, never
// per chunk.
type requestExport struct {
	dir   string
	epoch time.Time
	now   func() time.Time // the file's hour: the local clock when the line is written

	mu   sync.Mutex
	hour string
	f    *os.File
	err  error
}

func openRequestExport(dir string, epoch time.Time) (*requestExport, error) {
	if dir == "" {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil { // SGLang: os.makedirs(exist_ok=True)
		return nil, fmt.Errorf("sglang request export: %w", err)
	}
	return &requestExport{dir: dir, epoch: epoch, now: time.Now}, nil
}

// write appends t's line.
func (x *requestExport) write(t *RequestTruth) {
	if x == nil || t.QueueEnter == 0 {
		return // rejected before the scheduler: SGLang logs no line
	}
	line, err := json.Marshal(x.line(t))
	if err != nil {
		return // a map of plain values always marshals
	}
	line = append(line, '\n')
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.err != nil {
		return
	}
	if hour := x.now().Local().Format("20060102_15"); hour != x.hour || x.f == nil {
		if x.f != nil {
			_ = x.f.Close()
		}
		x.f, x.err = os.OpenFile(filepath.Join(x.dir, "sglang-request-metrics-"+hour+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if x.err != nil {
			x.err = fmt.Errorf("sglang request export: %w", x.err)
			return
		}
		x.hour = hour
	}
	if _, err := x.f.Write(line); err != nil {
		x.err = fmt.Errorf("sglang request export: %w", err)
	}
}

// line is t's record, keys as SGLang names them.
func (x *requestExport) line(t *RequestTruth) map[string]any {
	sampling := map[string]any{"max_new_tokens": t.MaxTokens}
	params := map[string]any{"rid": t.ID, "stream": t.Stream, "sampling_params": sampling,
		"return_logprob": false, "log_metrics": true, "return_text_in_logprobs": false}
	pj, _ := json.Marshal(params)
	m := map[string]any{
		"request_parameters": string(pj),
		"id":                 t.ID,
		"weight_version":     "default",
		"completion_tokens":  t.GeneratedTokens,
	}
	last := t.DecodeEnd
	if last == 0 {
		last = t.PrefillEnd
	}
	sec := func(d time.Duration) float64 { return max(d, 0).Seconds() }
	if t.FinishReason == batch.FinishAbort || t.PrefillEnd == 0 {
		m["finish_reason"] = map[string]any{"type": "abort", "message": "Abort in waiting queue"}
		m["e2e_latency"] = sec(t.Finish - t.Arrival)
		return m
	}
	wall := func(d time.Duration) float64 {
		ns := x.epoch.Add(d).UnixNano()
		return float64(ns/1e9) + float64(ns%1e9)/1e9
	}
	first := t.Finish
	if t.Stream && t.FirstTokenFlushed != 0 {
		first = t.FirstTokenFlushed
	}
	if t.FinishReason == batch.FinishLength {
		m["finish_reason"] = map[string]any{"type": "length", "length": t.GeneratedTokens}
	} else {
		m["finish_reason"] = map[string]any{"type": "stop", "matched": nil}
	}
	m["prompt_tokens"] = t.PromptTokens
	m["num_retractions"] = t.Preemptions
	m["forward_entry_time"] = wall(t.QueueLeave)
	m["prefill_finished_time"] = wall(t.PrefillEnd)
	m["queue_time"] = sec(t.QueueLeave - t.QueueEnter)
	m["prefill_waiting_latency"] = sec(t.PrefillStart - t.QueueLeave)
	m["prefill_launch_latency"] = sec(t.PrefillEnd - t.PrefillStart)
	m["reasoning_tokens"] = t.ReasoningTokens
	m["cached_tokens"] = t.CachedTokens
	m["e2e_latency"] = sec(last - t.Arrival)
	m["request_received_ts"] = wall(t.Arrival)
	m["api_server_dispatch_finish_ts"] = wall(t.QueueEnter)
	m["response_sent_to_client_ts"] = wall(first)
	m["request_finished_ts"] = wall(last)
	m["inference_time"] = sec(last - t.QueueLeave)
	if d := last - t.PrefillEnd; d > 0 && t.GeneratedTokens > 0 {
		m["decode_throughput"] = float64(t.GeneratedTokens) / d.Seconds()
	}
	return m
}

func (x *requestExport) close() error {
	if x == nil {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	err := x.err
	if x.f != nil {
		if cerr := x.f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("sglang request export: %w", cerr)
		}
		x.f = nil
	}
	return err
}

// SGLangExportFlags are SGLang's own flags for the export, which `llmbench
// serve` takes as SGLang does: --export-metrics-to-file turns it on,
// --export-metrics-to-file-dir says where.
type SGLangExportFlags struct {
	On  bool
	Dir string
}

func (f *SGLangExportFlags) bind(fs *flag.FlagSet) {
	fs.BoolVar(&f.On, "export-metrics-to-file", false, "sglang dialect: write SGLang's per-request metrics export (one JSON line per request)")
	fs.StringVar(&f.Dir, "export-metrics-to-file-dir", "", "where --export-metrics-to-file writes sglang-request-metrics-YYYYMMDD_HH.log")
}

// dir is the export's directory, "" when off.
func (f *SGLangExportFlags) dir(dialect string) (string, error) {
	switch {
	case !f.On && f.Dir != "":
		return "", errors.New("--export-metrics-to-file-dir needs --export-metrics-to-file")
	case !f.On:
		return "", nil
	case f.Dir == "":
		return "", errors.New("--export-metrics-to-file needs --export-metrics-to-file-dir")
	case dialect != DialectSGLang:
		return "", fmt.Errorf("--export-metrics-to-file needs --dialect %s", DialectSGLang)
	}
	return f.Dir, nil
}
