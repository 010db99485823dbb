package scrape_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/scrape"
	"github.com/llmbench-org/llmbench/scrape/trace"
)

// TestBuiltInEngine scrapes the built-in engine in each of its dialects
// around a burst of streaming requests: the dialect is detected, the
// settled counter deltas equal the engine's ground truth, every request is
// in the latency histograms, and (FastDeploy) every request's trace events
// join the id the client saw.
func TestBuiltInEngine(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{"sglang", "vllm", "fastdeploy"} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			p, err := sim.Preset("tiny")
			if err != nil {
				t.Fatal(err)
			}
			tracePath := filepath.Join(t.TempDir(), "trace_logger.log")
			e, err := sim.New(sim.Config{Dialect: dialect, Params: p, TraceLogPath: tracePath})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			ep, err := e.Start(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = e.Stop(context.Background()) }()

			start := time.Now()
			target := scrape.Target{URL: ep.MetricsURL, Timeout: 5 * time.Second} // dialect detected
			poll := scrape.PollTargets([]scrape.Target{target}, start, nil)
			base, err := poll(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if base.Dialect != dialect {
				t.Fatalf("detected %q, want %q", base.Dialect, dialect)
			}

			const n = 6
			chunkIDs := streamBurst(t, ctx, ep.BaseURL, n)
			settled := scrape.Settler{Poll: poll, Timeout: 10 * time.Second}.Wait(ctx, base, n)
			if !settled.OK || settled.Over {
				t.Fatalf("not settled: %+v", settled)
			}
			d := scrape.Delta(base, settled.Snapshot)

			var prompt, output float64
			for _, tr := range e.Truth() {
				prompt += float64(tr.PromptTokens)
				output += float64(tr.OutputTokens)
			}
			if d.Counters[scrape.PromptTokens] != prompt || d.Counters[scrape.GenerationTokens] != output {
				t.Errorf("Δ tokens prompt %v output %v, truth %v %v", d.Counters[scrape.PromptTokens], d.Counters[scrape.GenerationTokens], prompt, output)
			}
			for _, c := range []scrape.Concept{scrape.TTFT, scrape.E2E} {
				if h, ok := d.Histograms[c]; !ok || h.Count != n {
					t.Errorf("Δ %s count = %v (present %v), want %d", c, h.Count, ok, n)
				}
			}
			if len(d.Resets) > 0 {
				t.Errorf("resets %v in a clean run", d.Resets)
			}

			if dialect != "fastdeploy" {
				return
			}
			f, err := os.Open(tracePath)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			log, err := trace.Read(f, tracePath)
			if err != nil {
				t.Fatal(err)
			}
			reqs := trace.ByRequest(log.Events)
			for _, id := range chunkIDs {
				r, ok := reqs[id]
				if !ok {
					t.Errorf("chunk id %q has no trace events (trace ids: %d)", id, len(reqs))
					continue
				}
				first, ok1 := r.First(trace.FirstToken)
				end, ok2 := r.Last(trace.InferenceEnd)
				if !ok1 || !ok2 || end.Before(first) {
					t.Errorf("%s: first token %v (%v), inference end %v (%v)", id, first, ok1, end, ok2)
				}
			}
		})
	}
}

// streamBurst sends n streaming chat requests at once, reads every stream
// to its end, and returns the chunk ids the engine sent.
func streamBurst(t *testing.T, ctx context.Context, baseURL string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			id := fmt.Sprintf("scrape-test-%d", i)
			body, _ := json.Marshal(map[string]any{
				"model":    "m",
				"messages": []map[string]string{{"role": "user", "content": strings.Repeat("word ", 20+i)}},
				"stream":   true, "stream_options": map[string]any{"include_usage": true},
				"max_tokens": 8 + i, "ignore_eos": true, "rid": id, "request_id": id,
			})
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/chat/completions", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Request-Id", id)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				data, ok := strings.CutPrefix(sc.Text(), "data: ")
				if !ok || data == "[DONE]" {
					continue
				}
				var chunk struct{ ID string }
				if json.Unmarshal([]byte(data), &chunk) == nil && chunk.ID != "" {
					ids[i] = chunk.ID
				}
			}
			if resp.StatusCode != http.StatusOK || sc.Err() != nil {
				t.Errorf("%s: status %d, read %v", id, resp.StatusCode, sc.Err())
			}
		})
	}
	wg.Wait()
	return ids
}
