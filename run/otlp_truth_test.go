package run

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/report/timeline"
	"github.com/llmbench-org/llmbench/scrape/otlp"
)

// TestServerTimelineAgainstGroundTruth drives the built-in engine (vLLM
// dialect, 4 running requests for 12 users, so most requests queue) with the
// client, the engine exporting its llm_request spans over OTLP/HTTP to a
// receiver on loopback, and checks issue 24's acceptance: at least 99.9 % of
// the requests join their spans, and every joined request's parts match the
// engine's truth within 1 ms. Send and remainder cross the two clocks: their
// truth is the engine's own arrival (as vLLM's, stamped after tokenizing)
// and first-token stamps (Epoch + offset) against the client's send and
// first-token stamps, all read in this process, on the monotonic clock.
func TestServerTimelineAgainstGroundTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the built-in engine")
	}
	const (
		requests = 300
		users    = 12
		bound    = time.Millisecond
	)
	recv, err := otlp.Start(otlp.Config{HTTP: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer recv.Close(context.Background())
	params, err := sim.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	params.MaxRunningRequests = 4
	eng, err := sim.New(sim.Config{Dialect: sim.DialectVLLM, Params: params, OTLPTracesEndpoint: recv.HTTPEndpoint()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ep, err := eng.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cl, err := client.New(client.Config{BaseURL: ep.BaseURL, Model: ep.Model, Dialect: sim.DialectVLLM, Start: start, MaxConns: users, IncludeUsage: true})
	if err != nil {
		t.Fatal(err)
	}
	records := make([]client.Record, requests)
	var wg sync.WaitGroup
	next := make(chan int)
	for range users {
		wg.Go(func() {
			for i := range next {
				records[i] = cl.Do(ctx, client.Request{ID: fmt.Sprintf("tl-%d", i), Index: i,
					Messages: []client.Message{{Role: "user", Content: strings.Repeat("word ", 20+i%200)}}, MaxTokens: 8 + i%24})
			}
		})
	}
	for i := range requests {
		next <- i
	}
	close(next)
	wg.Wait()
	cl.Close()
	if err := eng.Stop(ctx); err != nil { // sends the spans it holds
		t.Fatal(err)
	}
	if err := recv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	res := timeline.Join(records, recv.Spans(), start)
	if res.Records != requests || float64(res.Joined) < 0.999*requests || res.ByTraceID != res.Joined {
		t.Fatalf("joined %d of %d records (%d by trace id); unjoined spans %v, records %v", res.Joined, res.Records, res.ByTraceID, res.SpansUnjoined, res.RecordsUnjoined)
	}
	truth := map[string]sim.RequestTruth{}
	for _, tr := range eng.Truth() {
		truth[tr.ID] = tr
	}
	byID := map[string]*client.Record{}
	for i := range records {
		byID[records[i].ID] = &records[i]
	}
	epoch := eng.Epoch()
	queued := 0
	for _, p := range res.Requests {
		tr, r := truth[p.ID], byID[p.ID]
		want := timeline.Parts{
			// vLLM stamps its arrival once the request is templated and
			// tokenized (the built-in engine's Submitted): both fall in send.
			Send:       epoch.Add(tr.Submitted).Sub(start.Add(r.Sent)),
			Preprocess: tr.QueueEnter - tr.Submitted,
			Queue:      tr.QueueLeave - tr.QueueEnter,
			Prefill:    tr.PrefillEnd - tr.QueueLeave,
			Remainder:  start.Add(r.FirstToken).Sub(epoch.Add(tr.PrefillEnd)),
			Decode:     tr.DecodeEnd - tr.PrefillEnd,
			TTFT:       r.FirstToken - r.Sent,
		}
		got := []time.Duration{p.Send, p.Preprocess, p.Queue, p.Prefill, p.Remainder, p.Decode, p.TTFT}
		exp := []time.Duration{want.Send, want.Preprocess, want.Queue, want.Prefill, want.Remainder, want.Decode, want.TTFT}
		for k, name := range []string{"send", "preprocess", "queue", "prefill", "remainder", "decode", "ttft"} {
			if d := got[k] - exp[k]; d > bound || d < -bound {
				t.Errorf("request %s: %s %v, truth %v", p.ID, name, got[k], exp[k])
			}
		}
		if sum := p.Send + p.Preprocess + p.Queue + p.Prefill + p.Remainder; sum != p.TTFT {
			t.Errorf("request %s: parts add up to %v, TTFT %v", p.ID, sum, p.TTFT)
		}
		if p.Queue > time.Millisecond {
			queued++
		}
	}
	if queued < requests/2 {
		t.Errorf("only %d requests queued over 1 ms: the test no longer exercises the queue", queued)
	}
}
