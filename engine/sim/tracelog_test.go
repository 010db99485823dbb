package sim

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/internal/quiet"
)

// traceLine is one parsed trace_logger.log line.
type traceLine struct {
	timestampMS int64
	requestID   string
	event       string
	stage       string
}

var traceField = regexp.MustCompile(`\[(\w+)=([^\]]*)\]`)

// parseTraceLine reads the [key=value] fields of a FastDeploy trace line.
func parseTraceLine(line string) (traceLine, error) {
	var tl traceLine
	fields := map[string]string{}
	for _, m := range traceField.FindAllStringSubmatch(line, -1) {
		fields[m[1]] = m[2]
	}
	for _, k := range []string{"timestamp", "request_id", "event", "stage"} {
		if _, ok := fields[k]; !ok {
			return tl, fmt.Errorf("trace line without %s: %q", k, line)
		}
	}
	ts, err := strconv.ParseInt(fields["timestamp"], 10, 64)
	if err != nil {
		return tl, fmt.Errorf("trace line timestamp: %w", err)
	}
	return traceLine{ts, fields["request_id"], fields["event"], fields["stage"]}, nil
}

func FuzzParseTraceLine(f *testing.F) {
	f.Add("[2025-11-20 10:15:32,481] [INFO    ] (token_processor.py:_record_first_token_metrics:721) [thread=1] [thread_name=Thread-5] [timestamp=1763604932481] [request_id=chatcmpl-x_0] [event=FIRST_TOKEN_GENERATED] [stage=PREFILL] [trace_id=unknown] ")
	f.Add("[timestamp=x]")
	f.Fuzz(func(t *testing.T, line string) {
		tl, err := parseTraceLine(line)
		if err == nil && !strings.Contains(line, "[event="+tl.event+"]") {
			t.Errorf("parsed event %q not in %q", tl.event, line)
		}
	})
}

var mixedSequence = []string{
	"PREPROCESSING_START", "PREPROCESSING_END", "REQUEST_QUEUE_START", "REQUEST_QUEUE_END",
	"RESOURCE_ALLOCATE_START", "RESOURCE_ALLOCATE_END", "INFERENCE_START",
	"FIRST_TOKEN_GENERATED", "DECODE_START", "INFERENCE_END", "POSTPROCESSING_START", "POSTPROCESSING_END",
}

// TestFastDeployTraceLog: the trace log parses back into each request's
// event sequence, in order, under the ids the client saw; preempted
// requests add PREEMPTED and RESCHEDULED_INFERENCE_START.
func TestFastDeployTraceLog(t *testing.T) {
	t.Parallel()
	quiet.Busy(t) // loads the machine: a timing-sensitive test elsewhere waits for it
	p, _ := Preset("tiny")
	p.MaxRunningRequests = 4
	p.MaxModelLen = 512
	p.KVBlocks = 48
	p.PrefixCache = false
	path := t.TempDir() + "/trace_logger.log"
	e, ep := startEngine(t, Config{Dialect: DialectFastDeploy, Params: p, TraceLogPath: path})
	results := burst(t, ep.BaseURL, "fd", 12, 100, 100)
	ctx := t.Context()
	if err := e.Stop(ctx); err != nil { // flush and close the log
		t.Fatal(err)
	}

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	events := map[string][]traceLine{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		tl, err := parseTraceLine(sc.Text())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(sc.Text(), "] ") {
			t.Errorf("line does not end with the empty message's trailing space: %q", sc.Text())
		}
		id, ok := strings.CutSuffix(tl.requestID, "_0")
		if !ok {
			t.Errorf("request_id %q lacks the _0 choice suffix", tl.requestID)
		}
		events[id] = append(events[id], tl)
	}
	if len(events) != len(results) {
		t.Errorf("%d requests in the trace, %d sent", len(events), len(results))
	}
	preempted := 0
	for id, res := range results {
		chunkID := res.chunks[0].ID
		if chunkID != "chatcmpl-"+id {
			t.Errorf("chunk id %q, want chatcmpl- + the request_id", chunkID)
		}
		lines := events[chunkID]
		var names []string
		for i, l := range lines {
			names = append(names, l.event)
			if i > 0 && l.timestampMS < lines[i-1].timestampMS {
				t.Errorf("%s: timestamps go back at %s", id, l.event)
			}
		}
		// Remove the preemption pairs, then the rest is the mixed-mode sequence.
		var core []string
		for i := 0; i < len(names); i++ {
			if names[i] == "PREEMPTED" {
				if i+1 >= len(names) || names[i+1] != "RESCHEDULED_INFERENCE_START" {
					t.Errorf("%s: PREEMPTED not followed by RESCHEDULED_INFERENCE_START: %v", id, names)
				}
				preempted++
				i++
				continue
			}
			core = append(core, names[i])
		}
		if !slices.Equal(core, mixedSequence) {
			t.Errorf("%s: events %v, want %v", id, names, mixedSequence)
		}
	}
	if preempted == 0 {
		t.Error("no request was preempted; the KV cache was meant to be too small")
	}
}
