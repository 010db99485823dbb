package sim

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// burst sends n streaming requests at once and waits for them all.
func burst(t *testing.T, ep string, prefix string, n, promptWords, maxTokens int) map[string]streamResult {
	t.Helper()
	client := newClient()
	clock := clockSince()
	out := make(map[string]streamResult, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			id := fmt.Sprintf("%s-%d", prefix, i)
			res := postStream(t, client, ep+"/chat/completions", clock, map[string]string{"X-Request-Id": id}, chatBody(map[string]any{
				"messages": []map[string]any{{"role": "user", "content": words(id+"w", promptWords)}},
				"stream":   true, "stream_options": map[string]any{"include_usage": true},
				"max_tokens": maxTokens, "ignore_eos": true, "rid": id, "request_id": id,
			}))
			mu.Lock()
			out[id] = res
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

func meanTTFT(truth []RequestTruth, prefix string) time.Duration {
	var sum time.Duration
	n := 0
	for _, tr := range truth {
		if len(tr.ID) > len(prefix) && tr.ID[:len(prefix)] == prefix && tr.Outcome == OutcomeOK {
			sum += tr.FirstTokenFlushed - tr.Arrival
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / time.Duration(n)
}

// meanPassesToFirstToken is the mean number of forward passes that started
// between a request's arrival and its first token.
func meanPassesToFirstToken(truth []RequestTruth, steps []StepTruth, prefix string) float64 {
	total, n := 0, 0
	for _, tr := range truth {
		if !strings.HasPrefix(tr.ID, prefix) || tr.Outcome != OutcomeOK {
			continue
		}
		for _, s := range steps {
			if s.Start >= tr.QueueEnter && s.Start < tr.PrefillEnd {
				total++
			}
		}
		n++
	}
	if n == 0 {
		return 0
	}
	return float64(total) / float64(n)
}

// TestOverload: above capacity the queue grows and TTFT grows, in the ground
// truth and in every dialect's metrics; with a small KV cache requests are
// preempted, and the truth and the metrics count the same preemptions.
func TestOverload(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{DialectSGLang, DialectVLLM, DialectFastDeploy} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			p, _ := Preset("tiny")
			p.MaxRunningRequests = 4
			p.MaxModelLen = 512
			p.KVBlocks = 48 // 768 tokens: four 100-token prompts growing by 100 each do not fit
			p.PrefixCache = false
			e, ep := startEngine(t, Config{Dialect: dialect, Params: p})

			m0 := scrape(t, ep.MetricsURL)
			for _, res := range burst(t, ep.BaseURL, "light", 1, 100, 100) {
				if !res.done {
					t.Fatal("light request failed")
				}
			}
			m1 := scrape(t, ep.MetricsURL)
			for id, res := range burst(t, ep.BaseURL, "heavy", 24, 100, 100) {
				if !res.done {
					t.Fatalf("%s failed (status %d)", id, res.status)
				}
			}
			m2 := scrape(t, ep.MetricsURL)
			truth := e.Truth()

			// Waits are counted in forward passes, which do not depend on how
			// loaded the machine is.
			steps := e.Steps()
			lightPasses, heavyPasses := meanPassesToFirstToken(truth, steps, "light"), meanPassesToFirstToken(truth, steps, "heavy")
			if lightPasses > 2 || heavyPasses < 50 {
				t.Errorf("truth: %.1f passes to the first token alone, %.1f under overload; want ≤ 2 and ≥ 50", lightPasses, heavyPasses)
			}
			light, heavy := meanTTFT(truth, "light"), meanTTFT(truth, "heavy")
			if heavy <= light {
				t.Errorf("truth: mean TTFT %v under overload vs %v alone; want it to grow", heavy, light)
			}
			maxWaiting, stepPreemptions := 0, 0
			for _, s := range steps {
				maxWaiting = max(maxWaiting, s.Waiting)
				stepPreemptions += s.Preempted
			}
			if maxWaiting < 10 {
				t.Errorf("truth: the waiting queue peaked at %d, want it to grow", maxWaiting)
			}
			truthPreemptions := 0
			for _, tr := range truth {
				truthPreemptions += tr.Preemptions
			}
			if truthPreemptions == 0 || truthPreemptions != stepPreemptions {
				t.Errorf("truth: %d preemptions in requests, %d in steps; want equal and > 0", truthPreemptions, stepPreemptions)
			}

			ttftName, preemptName := map[string][2]string{
				DialectSGLang:     {"sglang:time_to_first_token_seconds", "sglang:num_retracted_requests_total"},
				DialectVLLM:       {"vllm:time_to_first_token_seconds", "vllm:num_preemptions_total"},
				DialectFastDeploy: {"fastdeploy:time_to_first_token_seconds", ""},
			}[dialect][0], map[string]string{
				DialectSGLang: "sglang:num_retracted_requests_total",
				DialectVLLM:   "vllm:num_preemptions_total",
			}[dialect]
			n0, s0 := histCount(t, m0, ttftName)
			n1, s1 := histCount(t, m1, ttftName)
			n2, s2 := histCount(t, m2, ttftName)
			lightMean := (s1 - s0) / float64(n1-n0)
			heavyMean := (s2 - s1) / float64(n2-n1)
			if n2-n1 != 24 || heavyMean <= lightMean {
				t.Errorf("metrics: %d TTFT observations, mean %.4fs under overload vs %.4fs alone", n2-n1, heavyMean, lightMean)
			}
			// The engine observes TTFT when the token leaves the batch, the
			// truth when it is flushed: the means agree closely.
			if d := heavyMean - heavy.Seconds(); d > 0.01 || d < -0.05-0.1*heavy.Seconds() {
				t.Errorf("metrics mean TTFT %.4fs vs truth %.4fs under overload", heavyMean, heavy.Seconds())
			}
			if preemptName != "" {
				if got := value(t, m2, preemptName) - value(t, m0, preemptName); int(got) != truthPreemptions {
					t.Errorf("metrics: %s grew by %v, truth counts %d", preemptName, got, truthPreemptions)
				}
			}
		})
	}
}

// TestPrefixCacheHits: a repeated long prefix is a cache hit that shortens
// TTFT and shows in each dialect's hit metrics.
func TestPrefixCacheHits(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{DialectSGLang, DialectVLLM, DialectFastDeploy} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			p, _ := Preset("tiny")
			p.PrefillPerToken = 40 * time.Microsecond // 1000 tokens ≈ 40 ms of prefill
			e, ep := startEngine(t, Config{Dialect: dialect, Params: p})
			client := newClient()
			shared := words("ctx", 1000)
			send := func(id, question string) streamResult {
				return postStream(t, client, ep.BaseURL+"/chat/completions", clockSince(), map[string]string{"X-Request-Id": id}, chatBody(map[string]any{
					"messages": []map[string]any{{"role": "system", "content": shared}, {"role": "user", "content": question}},
					"stream":   true, "stream_options": map[string]any{"include_usage": true},
					"max_tokens": 2, "rid": id, "request_id": id,
				}))
			}
			cold := send("cold", "first question")
			warm := send("warm", "second question")
			if cold.chunks[len(cold.chunks)-1].Usage.PromptTokensDetails.CachedTokens != 0 {
				t.Error("the first request reported cached tokens")
			}
			cached := warm.chunks[len(warm.chunks)-1].Usage.PromptTokensDetails.CachedTokens
			if cached < 992 {
				t.Errorf("second request: %d cached tokens, want the 1000-token prefix in whole blocks", cached)
			}
			// The modeled time of the passes up to the first token: what the
			// cache saves, independent of how loaded the machine is.
			steps := e.Steps()
			ttft := map[string]time.Duration{}
			for _, tr := range e.Truth() {
				for _, s := range steps {
					if s.Start >= tr.QueueEnter && s.Start < tr.PrefillEnd {
						ttft[tr.ID] += s.Modeled
					}
				}
				if tr.ID == "warm" && tr.CachedTokens != cached {
					t.Errorf("truth cached %d, usage %d", tr.CachedTokens, cached)
				}
			}
			if ttft["warm"]*3 > ttft["cold"] {
				t.Errorf("modeled TTFT %v with a cache hit vs %v cold; want much shorter", ttft["warm"], ttft["cold"])
			}
			m := scrape(t, ep.MetricsURL)
			switch dialect {
			case DialectSGLang:
				if v := value(t, m, "sglang:cached_tokens_total"); int(v) != cached {
					t.Errorf("sglang:cached_tokens_total = %v, want %d", v, cached)
				}
			case DialectVLLM:
				if v := value(t, m, "vllm:prefix_cache_hits_total"); int(v) != cached {
					t.Errorf("vllm:prefix_cache_hits_total = %v, want %d", v, cached)
				}
				if q := value(t, m, "vllm:prefix_cache_queries_total"); q != 2004 {
					t.Errorf("vllm:prefix_cache_queries_total = %v, want both prompts (2004)", q)
				}
			case DialectFastDeploy:
				if v := value(t, m, "fastdeploy:prefix_cache_token_num_total"); int(v) != cached {
					t.Errorf("fastdeploy:prefix_cache_token_num_total = %v, want %d", v, cached)
				}
				if r := value(t, m, "fastdeploy:hit_req_rate"); r != 0.5 {
					t.Errorf("fastdeploy:hit_req_rate = %v, want 0.5", r)
				}
			}
		})
	}
}

// TestSGLangGaugeCadence: the scheduler gauges change only at prefill
// batches and every decode_log_interval decode passes; with an interval of 1
// they track every pass. On a fake clock (synctest) the counts are exact.
func TestSGLangGaugeCadence(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		interval    int
		scrapeEvery int // in decode_base units; a decode pass is slightly longer, so 1 misses none
		wantChanges int
	}{
		// 200 tokens = 1 prefill pass + 199 decode passes. decode_sum_seq_lens
		// is written at decode logs only: passes 40, 80, 120, 160 — plus the
		// first scrape's reading of the initial 0.
		{40, 5, 1 + 4},
		// Every decode pass writes a new value.
		{1, 1, 1 + 199},
	} {
		t.Run(fmt.Sprintf("interval %d", tc.interval), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				p, _ := Preset("tiny")
				p.DecodeLogInterval = tc.interval
				e, err := New(Config{Params: p})
				if err != nil {
					t.Fatal(err)
				}
				ln := newPipeListener()
				srv := &http.Server{Handler: e.Handler()}
				go srv.Serve(ln)
				client := &http.Client{Transport: &http.Transport{DialContext: ln.dial}}
				done := make(chan struct{})
				go func() {
					defer close(done)
					resp, err := client.Post("http://sim/v1/chat/completions", "application/json", strings.NewReader(
						`{"messages":[{"role":"user","content":"a b c"}],"stream":true,"max_tokens":200}`))
					if err != nil {
						t.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}()
				changes, last := 0, -1.0
				for running := true; running; {
					select {
					case <-done:
						running = false
					default:
					}
					resp, err := client.Get("http://sim/metrics")
					if err != nil {
						t.Fatal(err)
					}
					parser := expfmt.NewTextParser(model.UTF8Validation)
					fams, err := parser.TextToMetricFamilies(resp.Body)
					resp.Body.Close()
					if err != nil {
						t.Fatal(err)
					}
					if v := value(t, fams, "sglang:decode_sum_seq_lens"); v != last {
						changes++
						last = v
					}
					time.Sleep(time.Duration(tc.scrapeEvery) * p.DecodeBase)
				}
				if changes != tc.wantChanges {
					t.Errorf("decode_sum_seq_lens changed %d times, want %d", changes, tc.wantChanges)
				}
				ctx, cancel := context.WithTimeout(t.Context(), time.Second)
				defer cancel()
				srv.Shutdown(ctx)
				ln.Close()
				client.CloseIdleConnections()
				if err := e.Stop(ctx); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}
