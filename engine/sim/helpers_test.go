package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/llmbench-org/llmbench/engine"
)

// startEngine starts an engine on loopback and stops it when the test ends.
func startEngine(t *testing.T, cfg Config) (*Engine, engine.Endpoint) {
	t.Helper()
	if cfg.Params.MaxRunningRequests == 0 {
		p, err := Preset("tiny")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Params = p
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ep, err := e.Start(t.Context())
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return e, ep
}

// startEngineNoCleanup starts an engine the test stops itself.
func startEngineNoCleanup(t *testing.T, cfg Config) (*Engine, engine.Endpoint) {
	t.Helper()
	if cfg.Params.MaxRunningRequests == 0 {
		cfg.Params, _ = Preset("tiny")
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ep, err := e.Start(t.Context())
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return e, ep
}

// chunk is the part of a chat.completion.chunk the tests read.
type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

// streamResult is what a test client observed of one stream.
type streamResult struct {
	status   int
	chunks   []chunk
	arrivals []time.Duration // client clock, per chunk
	sent     time.Duration
	firstTok time.Duration
	end      time.Duration
	done     bool
	body     []byte // for non-2xx
}

// chatBody renders a request body.
func chatBody(fields map[string]any) []byte {
	b, err := json.Marshal(fields)
	if err != nil {
		panic(err)
	}
	return b
}

// words returns a prompt of n distinct words.
func words(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s%d", prefix, i)
	}
	return b.String()
}

// postStream sends one streaming request and reads it to the end.
func postStream(t *testing.T, client *http.Client, url string, clock func() time.Duration, hdr map[string]string, body []byte) streamResult {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	var res streamResult
	res.sent = clock()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	res.status = resp.StatusCode
	if resp.StatusCode != http.StatusOK {
		res.body, _ = io.ReadAll(resp.Body)
		res.end = clock()
		return res
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		at := clock()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line without data prefix: %q", line)
		}
		if data == "[DONE]" {
			res.done = true
			res.end = at
			continue
		}
		var c chunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		if res.firstTok == 0 && len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
			res.firstTok = at
		}
		res.chunks = append(res.chunks, c)
		res.arrivals = append(res.arrivals, at)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read stream: %v", err)
	}
	if !res.done {
		res.end = clock()
	}
	return res
}

// scrape fetches and parses /metrics.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

// value is the sum of a counter's or gauge's samples (all label sets).
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("metric %s missing", name)
	}
	v := 0.0
	for _, m := range f.GetMetric() {
		switch {
		case m.Counter != nil:
			v += m.GetCounter().GetValue()
		case m.Gauge != nil:
			v += m.GetGauge().GetValue()
		case m.Untyped != nil:
			v += m.GetUntyped().GetValue()
		default:
			t.Fatalf("metric %s is not a counter or gauge", name)
		}
	}
	return v
}

// histCount is a histogram's sample count (all label sets).
func histCount(t *testing.T, fams map[string]*dto.MetricFamily, name string) (count uint64, sum float64) {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("histogram %s missing", name)
	}
	for _, m := range f.GetMetric() {
		count += m.GetHistogram().GetSampleCount()
		sum += m.GetHistogram().GetSampleSum()
	}
	return count, sum
}

func newClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 0}}
}

// clockSince returns a test clock starting now.
func clockSince() func() time.Duration {
	start := time.Now()
	return func() time.Duration { return time.Since(start) }
}
