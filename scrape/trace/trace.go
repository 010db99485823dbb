// Package trace reads engine trace logs into per-request, time-ordered
// events, so a report can join them to the client's records by request id
// and lay out where each request's time went. It reads FastDeploy's
// trace_logger.log (engine-metrics.md §3.1), which the built-in engine also
// writes in its FastDeploy dialect. It does not join or aggregate.
package trace

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/internal/inputfile"
)

// FastDeploy trace events, in the order a request meets them (mixed mode).
const (
	PreprocessingStart  = "PREPROCESSING_START"
	PreprocessingEnd    = "PREPROCESSING_END"
	QueueStart          = "REQUEST_QUEUE_START"
	QueueEnd            = "REQUEST_QUEUE_END"
	InferenceStart      = "INFERENCE_START"
	FirstToken          = "FIRST_TOKEN_GENERATED"
	DecodeStart         = "DECODE_START"
	Preempted           = "PREEMPTED"
	Rescheduled         = "RESCHEDULED_INFERENCE_START"
	InferenceEnd        = "INFERENCE_END"
	PostprocessingStart = "POSTPROCESSING_START"
	PostprocessingEnd   = "POSTPROCESSING_END"
)

// Event is one trace line.
type Event struct {
	RequestID string    `json:"request_id"` // the logged id without its "_N" choice suffix: the id the client saw in the chunks
	RawID     string    `json:"raw_id"`     // the engine-internal id as logged
	Event     string    `json:"event"`
	Stage     string    `json:"stage,omitempty"`
	Wall      time.Time `json:"wall"` // the line's timestamp field: wall clock, millisecond resolution
	TraceID   string    `json:"trace_id,omitempty"`
	Line      int       `json:"line"` // 1-based line in the file
}

// ParseLine reads one trace_logger.log line. ok is false for a line that is
// not a trace event (no request_id or event field); err says what is wrong
// with a line that is one but cannot be used (a bad timestamp).
func ParseLine(line string) (ev Event, ok bool, err error) {
	fields := bracketFields(line)
	ev.RawID, ev.Event = fields["request_id"], fields["event"]
	if ev.RawID == "" || ev.Event == "" {
		return Event{}, false, nil
	}
	ev.RequestID = StripChoice(ev.RawID)
	ev.Stage = fields["stage"]
	if t := fields["trace_id"]; t != "unknown" {
		ev.TraceID = t
	}
	ms, perr := strconv.ParseInt(fields["timestamp"], 10, 64)
	if perr != nil {
		return Event{}, true, fmt.Errorf("event %s of %s: timestamp %q is not epoch milliseconds", ev.Event, ev.RawID, fields["timestamp"])
	}
	ev.Wall = time.UnixMilli(ms).UTC()
	return ev, true, nil
}

// bracketFields collects the "[key=value]" fields of a line; brackets
// without "=" right after a word (the asctime, the level) are skipped.
func bracketFields(line string) map[string]string {
	fields := map[string]string{}
	for {
		open := strings.IndexByte(line, '[')
		if open < 0 {
			return fields
		}
		line = line[open+1:]
		end := strings.IndexByte(line, ']')
		if end < 0 {
			return fields // a truncated last field: dropped
		}
		key, value, found := strings.Cut(line[:end], "=")
		if found && isWord(key) {
			fields[key] = value
		}
		line = line[end+1:]
	}
}

func isWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// StripChoice removes the "_N" choice-index suffix FastDeploy adds to a
// request id (`chatcmpl-…_0` → `chatcmpl-…`); other ids are returned as they are.
func StripChoice(id string) string {
	i := strings.LastIndexByte(id, '_')
	if i <= 0 || i == len(id)-1 {
		return id
	}
	for _, r := range id[i+1:] {
		if r < '0' || r > '9' {
			return id
		}
	}
	return id[:i]
}

// Log is a parsed trace file.
type Log struct {
	Events []Event `json:"events"` // in file order
	// Skipped counts lines that are not usable events: other log output, a
	// line cut short while the engine was writing, a bad timestamp.
	Skipped int `json:"skipped"`
	// FirstProblem names the first skipped line that looked like an event
	// but could not be used, with its line number; "" when none.
	FirstProblem string `json:"first_problem,omitempty"`
}

// Read parses a whole trace log, the file name. Only a read error or a line
// over the bound on one (inputfile.TraceLineBytes, named with the file and
// line) fails it: lines that are not events are counted, so a log still
// being written can be read.
func Read(r io.Reader, name string) (Log, error) {
	var log Log
	sc := inputfile.NewLines(r, name, inputfile.TraceLog)
	n := 0
	for sc.Next() {
		n++
		ev, ok, err := ParseLine(string(sc.Bytes()))
		switch {
		case err != nil:
			log.Skipped++
			if log.FirstProblem == "" {
				log.FirstProblem = fmt.Sprintf("line %d: %v", n, err)
			}
		case !ok:
			log.Skipped++
		default:
			ev.Line = n
			log.Events = append(log.Events, ev)
		}
	}
	if err := sc.Err(); err != nil {
		var be *inputfile.BoundError
		if errors.As(err, &be) {
			return log, err
		}
		return log, fmt.Errorf("read trace log after line %d: %w", n, err)
	}
	return log, nil
}

// Request is one request's events in time order (file order within a millisecond).
type Request struct {
	ID     string  `json:"id"`
	Events []Event `json:"events"`
}

// First returns the time of the request's first event of that name.
func (r Request) First(event string) (time.Time, bool) {
	for _, e := range r.Events {
		if e.Event == event {
			return e.Wall, true
		}
	}
	return time.Time{}, false
}

// Last returns the time of the request's last event of that name.
func (r Request) Last(event string) (time.Time, bool) {
	for i := len(r.Events) - 1; i >= 0; i-- {
		if e := r.Events[i]; e.Event == event {
			return e.Wall, true
		}
	}
	return time.Time{}, false
}

// ByRequest groups events by request id (suffix stripped) and orders each
// request's events by time, then by line: several processes write the file,
// so a later line can carry an earlier timestamp.
func ByRequest(events []Event) map[string]Request {
	out := map[string]Request{}
	for _, e := range events {
		r := out[e.RequestID]
		r.ID = e.RequestID
		r.Events = append(r.Events, e)
		out[e.RequestID] = r
	}
	for id, r := range out {
		sort.SliceStable(r.Events, func(i, j int) bool {
			a, b := r.Events[i], r.Events[j]
			if !a.Wall.Equal(b.Wall) {
				return a.Wall.Before(b.Wall)
			}
			return a.Line < b.Line
		})
		out[id] = r
	}
	return out
}
