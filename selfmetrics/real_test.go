package selfmetrics

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/quiet"
	"github.com/llmbench-org/llmbench/internal/realtest"
)

// sample is one series of an instant vector: its labels and value.
type sample struct {
	Labels map[string]string
	Value  float64
}

// promQuery asks a Prometheus's HTTP API (/api/v1/query) for an instant
// vector.
func promQuery(t *testing.T, base, q string) ([]sample, error) {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("%s: %v", q, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("%s: %s: %s", q, body.Status, body.Error)
	}
	if body.Data.ResultType != "vector" {
		return nil, fmt.Errorf("%s: result type %s", q, body.Data.ResultType)
	}
	var out []sample
	for _, r := range body.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: value %v", q, r.Value)
		}
		out = append(out, sample{r.Metric, v})
	}
	return out, nil
}

// scalar is the value of a query that must give one series.
func scalar(t *testing.T, base, q string) float64 {
	t.Helper()
	s, err := promQuery(t, base, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 1 {
		t.Fatalf("%s: %d series, want 1: %v", q, len(s), s)
	}
	return s[0].Value
}

// TestRealPrometheus: a real Prometheus scrapes the exporter on loopback
// while records are observed; what its HTTP API answers is what was
// observed, and every dashboard expression is valid PromQL that it answers.
func TestRealPrometheus(t *testing.T) {
	t.Parallel()
	quiet.Busy(t) // loads the machine: a timing-sensitive test elsewhere waits for it
	m := New()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := m.Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}

	// Before Prometheus comes: a warm-up with 3 successes, a timeout, 2
	// good scrapes and 2 requests in flight.
	m.SetPhase("warmup")
	for range 3 {
		m.Observe(okRecord())
	}
	m.Observe(&client.Record{Sent: ms, End: 5 * ms, OutputTokens: 3, ErrorClass: client.ErrTimeout})
	m.ObserveScrape(true)
	m.ObserveScrape(true)
	m.Begin()
	m.Begin()

	prom := realtest.StartPrometheus(t, addr)
	realtest.WaitFor(t, 20*time.Second, "Prometheus to scrape the warm-up", func() bool {
		s, err := promQuery(t, prom, `llmbench_requests_total{outcome="ok"}`)
		return err == nil && len(s) == 1 && s[0].Value == 3
	})

	// While Prometheus scrapes: the measured phase.
	m.SetPhase("measure")
	for range 5 {
		m.Observe(okRecord())
	}
	m.Observe(&client.Record{Sent: ms, End: 2 * ms, ErrorClass: client.ErrConnect})
	m.ObserveScrape(false)
	m.End()
	m.End()
	// Wait for a scrape that began after the last change, so every query
	// below reads one consistent scrape.
	done := float64(time.Now().UnixMilli()) / 1000
	realtest.WaitFor(t, 20*time.Second, "a scrape after the measured phase", func() bool {
		s, err := promQuery(t, prom, `timestamp(llmbench_requests_in_flight)`)
		return err == nil && len(s) == 1 && s[0].Value > done
	})

	byOutcome, err := promQuery(t, prom, `sum by (outcome) (llmbench_requests_total)`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, s := range byOutcome {
		got[s.Labels["outcome"]] = s.Value
	}
	want := map[string]float64{"ok": 8, "timeout": 1, "stalled": 0, "connect": 1, "http_status": 0, "redirect": 0, "stream_broken": 0, "malformed_chunk": 0, "content_encoding": 0, "canceled": 0}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("requests by outcome through Prometheus = %v, want %v", got, want)
	}
	for q, want := range map[string]float64{
		`llmbench_requests_in_flight`:         0,
		`llmbench_ttft_seconds_count`:         8,
		`llmbench_itl_seconds_count`:          24, // 3 per record
		`llmbench_e2e_seconds_count`:          8,
		`llmbench_schedule_lag_seconds_count`: 8, // the two records with no Intended are closed loop: no lag

		`llmbench_output_tokens_total`:                 8*4 + 3,
		`llmbench_scrapes_total{result="ok"}`:          2,
		`llmbench_scrapes_total{result="failed"}`:      1,
		`llmbench_ttft_seconds_bucket{le="0.08"}`:      0,
		`llmbench_ttft_seconds_bucket{le="0.1"}`:       8,
		`llmbench_itl_seconds_bucket{le="0.025"}`:      24,
		`round(llmbench_e2e_seconds_sum * 1000)`:       8 * 190,
		`count(llmbench_ttft_seconds_bucket)`:          float64(len(TTFTBuckets) + 1),
		`count(llmbench_e2e_seconds_bucket{le="0.3"})`: 1, // vLLM's request-latency layout
	} {
		if v := scalar(t, prom, q); v != want {
			t.Errorf("%s = %v, want %v", q, v, want)
		}
	}
	phases, err := promQuery(t, prom, `llmbench_phase`)
	if err != nil {
		t.Fatal(err)
	}
	if len(phases) != 1 || phases[0].Labels["phase"] != "measure" || phases[0].Value != 1 {
		t.Errorf("llmbench_phase = %v, want only phase=measure at 1 (the warm-up's series gone stale)", phases)
	}

	// Every expression of the dashboard, as Grafana would send it.
	nonEmpty := map[string]bool{"Requests/s by outcome/A": true, "Output tokens/s/A": true, "In flight/A": true,
		"TTFT (client)/A": true, "Phase/A": true, "Engine scrape failures/A": true}
	for where, expr := range dashboardExprs(t) {
		if strings.HasPrefix(where, "$") { // a template query (label_values), not PromQL
			continue
		}
		q := strings.NewReplacer("$__rate_interval", "1m", "$job", ".+").Replace(expr)
		s, err := promQuery(t, prom, q)
		if err != nil {
			t.Errorf("dashboard %s: %v", where, err)
			continue
		}
		if nonEmpty[where] && len(s) == 0 {
			t.Errorf("dashboard %s: %q gave no series", where, q)
		}
		if where == "TTFT (client)/A" && len(s) == 1 && (math.IsNaN(s[0].Value) || s[0].Value < 0.08 || s[0].Value > 0.1) {
			t.Errorf("dashboard TTFT p50 = %v, want inside the (0.08, 0.1] bucket that holds every TTFT", s[0].Value)
		}
		delete(nonEmpty, where)
	}
	if len(nonEmpty) > 0 {
		t.Errorf("dashboard lacks %v", nonEmpty)
	}
}
