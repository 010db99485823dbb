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
	"github.com/llmbench-org/llmbench/scrape/sglangexport"
)

// sglangLoad drives the built-in engine in its SGLang dialect (4 running
// requests for 12 users, so most requests queue) with the client and
// returns the records, the engine (stopped: its files are closed) and the
// run start.
func sglangLoad(t *testing.T, cfg sim.Config, requests int) ([]client.Record, *sim.Engine, time.Time) {
	t.Helper()
	const users = 12
	params, err := sim.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	params.MaxRunningRequests = 4
	cfg.Dialect, cfg.Params = sim.DialectSGLang, params
	eng, err := sim.New(cfg)
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
	cl, err := client.New(client.Config{BaseURL: ep.BaseURL, Model: ep.Model, Dialect: sim.DialectSGLang, Start: start, MaxConns: users, IncludeUsage: true})
	if err != nil {
		t.Fatal(err)
	}
	records := make([]client.Record, requests)
	var wg sync.WaitGroup
	next := make(chan int)
	for range users {
		wg.Go(func() {
			for i := range next {
				records[i] = cl.Do(ctx, client.Request{ID: fmt.Sprintf("sg-%d", i), Index: i,
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
	if err := eng.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	return records, eng, start
}

// checkTimelineTruth checks issue 24's acceptance on a join: at least
// 99.9 % of the requests joined, and every joined request's parts within
// 1 ms of the engine's truth. Send and remainder cross the two clocks:
// their truth is the engine's own arrival and first-token stamps (Epoch +
// offset) against the client's send and first-token stamps, all read in
// this process, on the monotonic clock.
func checkTimelineTruth(t *testing.T, res timeline.Result, records []client.Record, eng *sim.Engine, start time.Time) {
	t.Helper()
	const bound = time.Millisecond
	if res.Records != len(records) || float64(res.Joined) < 0.999*float64(len(records)) {
		t.Fatalf("joined %d of %d records; unjoined %v, records %v", res.Joined, res.Records, res.SpansUnjoined, res.RecordsUnjoined)
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
		got := []time.Duration{p.Send, p.Preprocess, p.Queue, p.Prefill, p.Remainder, p.Decode, p.TTFT}
		want := []time.Duration{
			epoch.Add(tr.Arrival).Sub(start.Add(r.Sent)),
			tr.QueueEnter - tr.Arrival,
			tr.QueueLeave - tr.QueueEnter,
			tr.PrefillEnd - tr.QueueLeave,
			start.Add(r.FirstToken).Sub(epoch.Add(tr.PrefillEnd)),
			tr.DecodeEnd - tr.PrefillEnd,
			r.FirstToken - r.Sent,
		}
		for k, name := range []string{"send", "preprocess", "queue", "prefill", "remainder", "decode", "ttft"} {
			if d := got[k] - want[k]; d > bound || d < -bound {
				t.Errorf("request %s: %s %v, truth %v", p.ID, name, got[k], want[k])
			}
		}
		if sum := p.Send + p.Preprocess + p.Queue + p.Prefill + p.Remainder; sum != p.TTFT {
			t.Errorf("request %s: parts add up to %v, TTFT %v", p.ID, sum, p.TTFT)
		}
		if p.Queue > time.Millisecond {
			queued++
		}
	}
	if queued < len(records)/2 {
		t.Errorf("only %d requests queued over 1 ms: the test no longer exercises the queue", queued)
	}
}

// TestSGLangExportAgainstGroundTruth: the built-in engine writes SGLang's
// per-request export; read back from its directory and joined by rid, at
// least 99.9 % of the requests join and every part matches the truth
// within 1 ms.
func TestSGLangExportAgainstGroundTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the built-in engine")
	}
	const requests = 300
	dir := t.TempDir()
	records, eng, start := sglangLoad(t, sim.Config{SGLangExportDir: dir}, requests)
	log, err := sglangexport.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Records) != requests || log.Skipped != 0 {
		t.Fatalf("%d lines read, %d skipped (%s), want %d", len(log.Records), log.Skipped, log.FirstProblem, requests)
	}
	res := timeline.JoinExport(records, log.Records, start)
	if res.ByRequestID != res.Joined {
		t.Errorf("%d joined by request id of %d", res.ByRequestID, res.Joined)
	}
	checkTimelineTruth(t, res, records, eng, start)
}

// TestSGLangSpansAgainstGroundTruth: the built-in engine in its SGLang
// dialect exports SGLang's request spans (a root per request, its stage
// slices under per-process spans) over OTLP/HTTP; joined by the trace id of
// the traceparent the client sent, at least 99.9 % of the requests join
// and every part matches the truth within 1 ms; the stage spans are
// counted as such, none as foreign.
func TestSGLangSpansAgainstGroundTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the built-in engine")
	}
	const requests = 300
	recv, err := otlp.Start(otlp.Config{HTTP: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer recv.Close(context.Background())
	records, eng, start := sglangLoad(t, sim.Config{OTLPTracesEndpoint: recv.HTTPEndpoint()}, requests)
	if err := recv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := recv.Spans()
	res := timeline.Join(records, spans, start)
	if res.ByTraceID != res.Joined || len(res.SpansUnjoined) != 1 || res.SpansUnjoined[0].Reason != timeline.SpanStage ||
		res.SpansUnjoined[0].N != len(spans)-requests {
		t.Errorf("%d spans, %d joined (%d by trace id); unjoined %v", len(spans), res.Joined, res.ByTraceID, res.SpansUnjoined)
	}
	checkTimelineTruth(t, res, records, eng, start)
}
