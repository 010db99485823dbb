package live

import (
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
)

// TestPoolingLive: the window's pooling requests give inputs/s and input
// tokens/s; with nothing generated, the plain line says TTFT and ITL do
// not apply; a chat request beside them keeps its TTFT.
func TestPoolingLive(t *testing.T) {
	t.Parallel()
	w := newWindow(10 * time.Second)
	for i := range 20 {
		at := time.Duration(i) * 500 * time.Millisecond
		w.addRecord(&client.Record{Sent: at, End: at + 30*time.Millisecond, Status: 200, Endpoint: "embeddings", Inputs: 8, Results: 8,
			PromptTokens: 512, TokenSource: client.TokensFromUsage}, at+30*time.Millisecond)
	}
	// TEI's rerank: inputs, no usage; a failure counts nothing.
	w.addRecord(&client.Record{Sent: time.Second, End: 2 * time.Second, Status: 200, Endpoint: "tei-rerank", Inputs: 10, Results: 10}, 2*time.Second)
	w.addRecord(&client.Record{Sent: time.Second, End: 2 * time.Second, Endpoint: "embeddings", Inputs: 8, ErrorClass: client.ErrHTTPStatus}, 2*time.Second)
	p := w.progress(10 * time.Second)
	if p.Pooling.Requests != 21 || p.Pooling.InputsPerSec != 17 || p.Pooling.InputTokensPerSec != 1024 {
		t.Fatalf("pooling %+v, want 21 requests, 170 inputs and 10240 tokens over 10 s", p.Pooling)
	}
	line := ProgressLine(p)
	for _, want := range []string{"17.0 inputs/s, 1024 input tok/s", "TTFT/ITL n/a (nothing generated)", "E2E p50"} {
		if !strings.Contains(line, want) {
			t.Errorf("plain line lacks %q:\n%s", want, line)
		}
	}
	w.addRecord(&client.Record{Sent: 9 * time.Second, FirstToken: 9*time.Second + 10*time.Millisecond, End: 9*time.Second + 50*time.Millisecond,
		Status: 200, OutputTokens: 4}, 9*time.Second+50*time.Millisecond)
	if line := ProgressLine(w.progress(10 * time.Second)); strings.Contains(line, "n/a") || !strings.Contains(line, "TTFT p50") {
		t.Errorf("with a chat request the TTFT is shown:\n%s", line)
	}
}
