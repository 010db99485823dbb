package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/rundir"
)

// TestEndpointSides: a run on chat alone has no per-endpoint figures (its
// summary is as it was); one with embeddings and chat has each's, in the
// registry's order, with the pooling latencies said not to apply, in the
// summary, the text and report.md.
func TestEndpointSides(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	meta := rundir.RunMeta{ID: "e", Scenario: "e", StartedAt: start, Ended: start.Add(10 * time.Second),
		Phases: []rundir.PhaseMeta{{Name: "main", Measured: true, Start: 0, End: 10 * time.Second}}}
	chat := func(i int) client.Record {
		sent := time.Duration(i) * 100 * ms
		return client.Record{ID: fmt.Sprint("c", i), Phase: "main", Sent: sent, Status: 200, FirstToken: sent + 10*ms, End: sent + 50*ms,
			PromptTokens: 10, OutputTokens: 2, TokenSource: client.TokensFromUsage, Chunks: []client.Chunk{{At: sent + 10*ms}, {At: sent + 50*ms}}}
	}
	emb := func(i int) client.Record {
		sent := time.Duration(i) * 100 * ms
		return client.Record{ID: fmt.Sprint("e", i), Phase: "main", Sent: sent, Status: 200, End: sent + time.Duration(20+i)*ms,
			PromptTokens: 40, TokenSource: client.TokensFromUsage, Endpoint: "embeddings", Inputs: 4, Results: 4}
	}
	var chatOnly, mixed []client.Record
	for i := range 50 {
		chatOnly = append(chatOnly, chat(i))
		mixed = append(mixed, chat(i), emb(i))
	}
	failed := emb(60)
	failed.ErrorClass, failed.Error = client.ErrHTTPStatus, "status 500"
	mixed = append(mixed, failed)

	if s := Compute(meta, chatOnly, nil, nil, 0); s.Client.Endpoints != nil {
		t.Errorf("a chat run has per-endpoint figures: %+v", s.Client.Endpoints)
	}
	s := Compute(meta, mixed, nil, nil, 0)
	eps := s.Client.Endpoints
	if len(eps) != 2 || eps[0].Endpoint != "chat" || eps[1].Endpoint != "embeddings" {
		t.Fatalf("endpoints %+v, want chat then embeddings", eps)
	}
	c, e := eps[0], eps[1]
	if c.OK != 50 || c.Latency.TTFT == nil || c.Latency.TTFT.N != 50 || c.NotApplicable != nil || c.InputUnit != "" || c.OutputTokens != 100 {
		t.Errorf("chat %+v", c)
	}
	if e.OK != 50 || e.Failed != 1 || e.Sent != 51 || e.Inputs != 200 || e.Results != 200 || e.InputTokens != 2000 || e.InputTokensRequests != 50 ||
		e.InputsPerSec != 20 || e.RequestsPerSec != 5 || e.InputTokensPerSec != 200 || e.Latency.TTFT != nil || e.Latency.E2E.N != 50 ||
		e.Latency.E2E.CI == nil || e.InputUnit != "inputs" || strings.Join(e.NotApplicable, ",") != "ttft,ttfc,itl,tpot" {
		t.Errorf("embeddings %+v", e)
	}
	if got := s.Client.Unmeasured["itl"]["does not apply (pooling: nothing generated)"]; got != 50 {
		t.Errorf("unmeasured ITL %v", s.Client.Unmeasured["itl"])
	}
	var text, md bytes.Buffer
	if err := RenderText(&text, s); err != nil {
		t.Fatal(err)
	}
	if err := RenderMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"answer: chat 5.00 requests/s", "embeddings 5.00 requests/s, 20.0 inputs/s, 200 input tokens/s",
		"endpoints:", "embeddings: 50 ok, 1 failed", "200 inputs (4.0 a request), 200 answered", "TTFT, TTFC, ITL, TPOT: do not apply"} {
		// The text is wrapped to its width: compare its words.
		if !strings.Contains(strings.Join(strings.Fields(text.String()), " "), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	for _, want := range []string{"### Per endpoint", "| embeddings | 50 | 1 | 5.00 | 20.0 inputs/s | 200 |", "TTFT, TTFC, ITL, TPOT |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md.String())
		}
	}
}
