package trace

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	reqA = "chatcmpl-5f0c1c3e-7a51-4c1e-9d1a-2b7b7f3f9e10"
	reqB = "chatcmpl-user7-0b6e2f4a-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
)

func ms(v int64) time.Time { return time.UnixMilli(v).UTC() }

func TestParseLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		line    string
		want    Event
		wantOK  bool
		wantErr string
	}{
		{
			name: "FastDeploy formatter line",
			line: "[2025-11-20 10:15:32,481] [INFO    ] (token_processor.py:_record_first_token_metrics:721) [thread=140031352968960] [thread_name=Thread-5] [timestamp=1763633732481] [request_id=" + reqA + "_0] [event=FIRST_TOKEN_GENERATED] [stage=PREFILL] [trace_id=unknown] ",
			want: Event{RequestID: reqA, RawID: reqA + "_0", Event: FirstToken, Stage: "PREFILL", Wall: ms(1763633732481)}, wantOK: true,
		},
		{
			name: "user id and trace id",
			line: "[x] [timestamp=5] [request_id=a_b_12] [user_id=u] [event=E] [trace_id=abc]",
			want: Event{RequestID: "a_b", RawID: "a_b_12", Event: "E", Wall: ms(5), TraceID: "abc"}, wantOK: true,
		},
		{name: "not an event", line: "WARNING something else [thread=1]"},
		{name: "empty", line: ""},
		{name: "truncated", line: "[timestamp=5] [request_id=abc"},
		{
			name: "bad timestamp", line: "[timestamp=soon] [request_id=r_0] [event=E]", wantOK: true,
			wantErr: `event E of r_0: timestamp "soon" is not epoch milliseconds`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok, err := ParseLine(tt.line)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v", ok)
			}
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("event (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStripChoice(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		reqA + "_0":    reqA,
		"chatcmpl-x_1": "chatcmpl-x",
		"id_with_word": "id_with_word",
		"plain":        "plain",
		"trailing_":    "trailing_",
		"_0":           "_0",
		"a_12_3":       "a_12",
	} {
		if got := StripChoice(in); got != want {
			t.Errorf("StripChoice(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReadAndByRequest(t *testing.T) {
	t.Parallel()
	f, err := os.Open("testdata/trace_logger.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	log, err := Read(f, "testdata/trace_logger.log")
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Events) != 13 || log.Skipped != 3 || !strings.HasPrefix(log.FirstProblem, "line 14: ") {
		t.Fatalf("events %d skipped %d first problem %q; want 13, 3, line 14", len(log.Events), log.Skipped, log.FirstProblem)
	}
	reqs := ByRequest(log.Events)
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	type step struct {
		Event string
		At    int64
		Line  int
	}
	steps := func(r Request) []step {
		var out []step
		for _, e := range r.Events {
			out = append(out, step{e.Event, e.Wall.UnixMilli(), e.Line})
		}
		return out
	}
	// POSTPROCESSING_START was written after INFERENCE_END by another
	// process, with an earlier timestamp: time order wins; within one
	// millisecond, file order.
	wantA := []step{
		{PreprocessingStart, 1763633732401, 1}, {PreprocessingEnd, 1763633732404, 2}, {QueueStart, 1763633732405, 4},
		{QueueEnd, 1763633732409, 6}, {InferenceStart, 1763633732410, 7}, {FirstToken, 1763633732481, 8},
		{DecodeStart, 1763633732481, 9}, {PostprocessingStart, 1763633734118, 11}, {InferenceEnd, 1763633734120, 10},
		{PostprocessingEnd, 1763633734125, 12},
	}
	if diff := cmp.Diff(wantA, steps(reqs[reqA])); diff != "" {
		t.Errorf("request A (-want +got):\n%s", diff)
	}
	// The "_1" choice joins the same request; the bad-timestamp line is gone.
	wantB := []step{{PreprocessingStart, 1763633732404, 3}, {QueueStart, 1763633734130, 13}, {QueueEnd, 1763633734140, 15}}
	if diff := cmp.Diff(wantB, steps(reqs[reqB])); diff != "" {
		t.Errorf("request B (-want +got):\n%s", diff)
	}
	if reqs[reqB].Events[0].TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("trace id = %q", reqs[reqB].Events[0].TraceID)
	}
	if at, ok := reqs[reqA].First(FirstToken); !ok || !at.Equal(ms(1763633732481)) {
		t.Errorf("First(FIRST_TOKEN_GENERATED) = %v, %v", at, ok)
	}
	if at, ok := reqs[reqA].Last(PostprocessingEnd); !ok || !at.Equal(ms(1763633734125)) {
		t.Errorf("Last(POSTPROCESSING_END) = %v, %v", at, ok)
	}
	if _, ok := reqs[reqB].First(FirstToken); ok {
		t.Error("request B has no first token")
	}
}

type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n > 0 {
		return 0, errors.New("disk gone")
	}
	r.n++
	return copy(p, "[timestamp=1] [request_id=a_0] [event=E]\n[timestamp=2] [request"), nil
}

func TestReadError(t *testing.T) {
	t.Parallel()
	log, err := Read(&failingReader{}, "trace.log")
	if err == nil || !strings.Contains(err.Error(), "disk gone") || !strings.Contains(err.Error(), "after line 2") {
		t.Errorf("err = %v, want the read error after line 2", err)
	}
	if len(log.Events) != 1 {
		t.Errorf("events read before the error: %d, want 1", len(log.Events))
	}
}

func FuzzParseLine(f *testing.F) {
	b, err := os.ReadFile("testdata/trace_logger.log")
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f.Add(l)
		f.Add("\ufeff" + l + "\r") // a log copied through Windows: BOM, CRLF
	}
	f.Add("[[[=]]] [event=] [request_id=_] [timestamp=-9223372036854775808]")
	f.Fuzz(func(t *testing.T, line string) {
		ev, ok, err := ParseLine(line)
		if !ok || err != nil {
			return
		}
		if ev.Event == "" || ev.RawID == "" || !strings.HasPrefix(ev.RawID, ev.RequestID) || ev.RequestID == "" {
			t.Fatalf("inconsistent event %+v from %q", ev, line)
		}
		if ev.Wall.Location() != time.UTC {
			t.Fatalf("wall %v is not UTC", ev.Wall)
		}
	})
}
