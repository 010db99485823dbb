package sglangexport

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/llmbench-org/llmbench/internal/inputfile"
)

// sglangLine is a line shaped as SGLang 0.5's FileRequestMetricsExporter
// writes it with --enable-metrics: json.dumps of request_parameters, then
// the finished request's meta_info (field order as TokenizerManager builds
// it).
const sglangLine = `{"request_parameters": "{\"text\": \"hi\", \"sampling_params\": {\"max_new_tokens\": 8}, \"rid\": \"req-7\", \"stream\": true, \"log_metrics\": true}", ` +
	`"id": "req-7", "finish_reason": {"type": "length", "length": 8}, "prompt_tokens": 12, "weight_version": "default", "num_retractions": 0, ` +
	`"forward_entry_time": 1800000000.25, "prefill_finished_time": 1800000000.375, "queue_time": 0.125, "prefill_waiting_latency": 0.001, "prefill_launch_latency": 0.12, ` +
	`"reasoning_tokens": 0, "completion_tokens": 8, "cached_tokens": 4, "e2e_latency": 0.5, ` +
	`"request_received_ts": 1800000000.0625, "api_server_dispatch_finish_ts": 1800000000.125, "response_sent_to_client_ts": 1800000000.3828125, "request_finished_ts": 1800000000.5625, ` +
	`"inference_time": 0.3125, "decode_throughput": 42.6}`

func TestParseLine(t *testing.T) {
	sec := func(s float64) int64 { return int64(s * 1e9) }
	cases := []struct {
		name, line string
		want       Record
		err        string
	}{
		{name: "with --enable-metrics", line: sglangLine, want: Record{
			ID: "req-7", RID: "req-7",
			Received: sec(1800000000.0625), DispatchDone: sec(1800000000.125), ForwardEntry: sec(1800000000.25),
			PrefillDone: sec(1800000000.375), FirstSent: sec(1800000000.3828125), Finished: sec(1800000000.5625),
			Queue: 125 * time.Millisecond, HasQueue: true, E2E: 500 * time.Millisecond,
			PromptTokens: 12, CompletionTokens: 8, CachedTokens: 4, FinishType: "length",
		}},
		{name: "without --enable-metrics: no stamps", line: `{"request_parameters": "{\"rid\": \"a\"}", "id": "a", "finish_reason": {"type": "stop", "matched": 2}, "prompt_tokens": 3, "completion_tokens": 1, "cached_tokens": 0, "e2e_latency": 0.01}`,
			want: Record{ID: "a", RID: "a", E2E: 10 * time.Millisecond, PromptTokens: 3, CompletionTokens: 1, FinishType: "stop"}},
		{name: "rid list (a batch)", line: `{"request_parameters": "{\"rid\": [\"a\", \"b\"]}", "id": "a"}`, want: Record{ID: "a"}},
		{name: "no id", line: `{"request_parameters": "{}"}`, err: `no "id"`},
		{name: "id not a string", line: `{"id": 7}`, err: `no "id"`},
		{name: "not JSON", line: `{"id": "a", "prompt_tok`, err: "not a JSON object"},
		{name: "parameters not JSON", line: `{"id": "a", "request_parameters": "{rid"}`, err: "request_parameters"},
		{name: "stamp in milliseconds", line: `{"id": "a", "request_received_ts": 1800000000000}`, err: "request_received_ts"},
		{name: "negative queue", line: `{"id": "a", "queue_time": -1}`, err: "queue_time"},
		{name: "fractional count", line: `{"id": "a", "prompt_tokens": 1.5}`, err: "prompt_tokens"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseLine([]byte(c.line))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one naming %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
			if got.Timed() != (c.want.Received != 0) {
				t.Errorf("Timed() = %v", got.Timed())
			}
		})
	}
}

func TestFileName(t *testing.T) {
	at := time.Date(2026, 12, 5, 4, 30, 0, 0, time.Local)
	if got := FileName(at); got != "sglang-request-metrics-20261205_04.log" {
		t.Errorf("FileName = %q", got)
	}
	for name, want := range map[string]bool{
		"sglang-request-metrics-20261205_04.log": true, "sglang-request-metrics-20261205.log": false,
		"sglang-request-metrics-20261205_04.log.1": false, "other-20261205_04.log": false, "sglang-request-metrics-2026120x_04.log": false,
	} {
		if IsFileName(name) != want {
			t.Errorf("IsFileName(%q) = %v", name, !want)
		}
	}
}

// TestReadDir reads the hours in order, skips and counts a torn last line
// and other files, and refuses a line over the bound.
func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("sglang-request-metrics-20261205_05.log", `{"id": "c"}`+"\n"+`{"id": "d", "prompt_`)
	write("sglang-request-metrics-20261205_04.log", `{"id": "a"}`+"\n\n"+`{"id": "b"}`+"\n")
	write("notes.log", `{"id": "x"}`+"\n")
	log, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range log.Records {
		ids = append(ids, r.ID)
	}
	if strings.Join(ids, ",") != "a,b,c" || log.Skipped != 1 || !strings.Contains(log.FirstProblem, "_05.log:2") {
		t.Errorf("ids %v, skipped %d (%s)", ids, log.Skipped, log.FirstProblem)
	}
	if log, err := ReadDir(filepath.Join(dir, "absent")); err != nil || len(log.Records) != 0 {
		t.Errorf("missing dir: %v, %d records", err, len(log.Records))
	}
	var into Log
	long := `{"id": "` + strings.Repeat("x", inputfile.DataLineBytes) + `"}`
	var be *inputfile.BoundError
	if err := Read(strings.NewReader(long), "big.log", &into); !errors.As(err, &be) {
		t.Errorf("a line over the bound: %v", err)
	}
}
