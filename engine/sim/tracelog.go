package sim

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// FastDeploy trace events (engine-metrics.md §3.1), mixed mode plus
// preemption. Each carries its stage and the source location FastDeploy's
// formatter would print (the caller's file:function:line; the line numbers
// are illustrative).
type traceEvent struct {
	name, stage, caller string
}

var (
	evPreprocessingStart  = traceEvent{"PREPROCESSING_START", "PREPROCESSING", "serving_chat.py:create_chat_completion:118"}
	evPreprocessingEnd    = traceEvent{"PREPROCESSING_END", "PREPROCESSING", "common_engine.py:_insert_task_to_scheduler:702"}
	evQueueStart          = traceEvent{"REQUEST_QUEUE_START", "SCHEDULE", "resource_manager_v1.py:add_request:880"}
	evQueueEnd            = traceEvent{"REQUEST_QUEUE_END", "SCHEDULE", "resource_manager_v1.py:schedule:611"}
	evAllocStart          = traceEvent{"RESOURCE_ALLOCATE_START", "SCHEDULE", "resource_manager_v1.py:schedule:613"}
	evAllocEnd            = traceEvent{"RESOURCE_ALLOCATE_END", "SCHEDULE", "resource_manager_v1.py:schedule:660"}
	evInferenceStart      = traceEvent{"INFERENCE_START", "PREFILL", "common_engine.py:_schedule_request_to_worker_v1:789"}
	evFirstToken          = traceEvent{"FIRST_TOKEN_GENERATED", "PREFILL", "token_processor.py:_record_first_token_metrics:721"}
	evDecodeStart         = traceEvent{"DECODE_START", "DECODE", "token_processor.py:_record_first_token_metrics:724"}
	evInferenceEnd        = traceEvent{"INFERENCE_END", "DECODE", "token_processor.py:_record_completion_metrics:752"}
	evPreempted           = traceEvent{"PREEMPTED", "DECODE", "resource_manager_v1.py:_trigger_preempt:402"}
	evRescheduled         = traceEvent{"RESCHEDULED_INFERENCE_START", "DECODE", "resource_manager_v1.py:schedule:598"}
	evPostprocessingStart = traceEvent{"POSTPROCESSING_START", "POSTPROCESSING", "serving_chat.py:chat_completion_stream_generator:402"}
	evPostprocessingEnd   = traceEvent{"POSTPROCESSING_END", "POSTPROCESSING", "serving_chat.py:chat_completion_stream_generator:470"}
)

// traceLog writes FastDeploy trace_logger.log lines. Each line is one write,
// so a crash loses nothing already logged.
type traceLog struct {
	mu    sync.Mutex
	f     *os.File
	epoch time.Time // the engine clock's zero, to turn offsets into wall time
	buf   []byte
	err   error
}

func openTraceLog(path string, epoch time.Time) (*traceLog, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open trace log: %w", err)
	}
	return &traceLog{f: f, epoch: epoch}, nil
}

// event logs one event of a request at an engine-clock offset. requestID is
// the chunk id; FastDeploy's internal id adds the choice index "_0".
func (t *traceLog) event(ev traceEvent, requestID string, at time.Duration) {
	if t == nil {
		return
	}
	// Wall clock: FastDeploy stamps lines with time.time() at format time.
	wall := t.epoch.Add(at)
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf[:0]
	b = wall.AppendFormat(b, "[2006-01-02 15:04:05,000] [INFO    ] (")
	b = append(b, ev.caller...)
	b = append(b, ") [thread=140031352968960] [thread_name=Thread-5] [timestamp="...)
	b = strconv.AppendInt(b, wall.UnixMilli(), 10)
	b = append(b, "] [request_id="...)
	b = append(b, requestID...)
	b = append(b, "_0] [event="...)
	b = append(b, ev.name...)
	b = append(b, "] [stage="...)
	b = append(b, ev.stage...)
	b = append(b, "] [trace_id=unknown] \n"...)
	t.buf = b
	if t.f != nil && t.err == nil {
		if _, err := t.f.Write(b); err != nil {
			t.err = fmt.Errorf("write trace log %s: %w", t.f.Name(), err)
		}
	}
}

func (t *traceLog) close() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	err := t.err
	if t.f == nil {
		return err
	}
	if cerr := t.f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("close trace log: %w", cerr)
	}
	t.f = nil
	return err
}
