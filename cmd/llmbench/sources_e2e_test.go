package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/engine"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/internal/realtest"
	"github.com/llmbench-org/llmbench/scrape/promapi"
)

// roundRobin is a load balancer in front of several engines: each request
// goes to the next one, streamed through as it comes.
func roundRobin(t *testing.T, backends ...engine.Endpoint) string {
	t.Helper()
	var next atomic.Int64
	proxies := make([]*httputil.ReverseProxy, len(backends))
	for i, b := range backends {
		u, err := url.Parse(strings.TrimSuffix(b.BaseURL, "/v1"))
		if err != nil {
			t.Fatal(err)
		}
		proxies[i] = httputil.NewSingleHostReverseProxy(u)
		proxies[i].FlushInterval = -1 // stream every chunk at once
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxies[int(next.Add(1))%len(proxies)].ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestSeveralTargetsSummedAndKeptApart: two replicas behind a load balancer,
// each scraped on its own; the server view sums them exactly and keeps each
// one's share.
func TestSeveralTargetsSummedAndKeptApart(t *testing.T) {
	t.Parallel()
	_, a := startSim(t, sim.Config{})
	_, b := startSim(t, sim.Config{})
	s := runForSummary(t, `
name: replicas
model: llmbench-sim
engine:
  kind: external
  base_url: `+roundRobin(t, a, b)+`
  dialect: sglang
workload:
  concurrency: 4
  requests: 40
  prompt_tokens: 32
  output_tokens: 16
scrape:
  interval: 250ms
  targets: [`+a.MetricsURL+`, `+b.MetricsURL+`]
`)
	if s.Server == nil {
		t.Fatal("no server view")
	}
	if got := s.Server.Counters["requests_finished"]; got != float64(s.Client.Requests.OK) || got != 40 {
		t.Errorf("the replicas' summed Δfinished = %v, the client's successes = %d: want both 40", got, s.Client.Requests.OK)
	}
	if len(s.Server.Replicas) != 2 {
		t.Fatalf("replicas kept apart: %v, want the two targets", s.Server.Replicas)
	}
	for _, target := range []string{a.MetricsURL, b.MetricsURL} {
		if n := s.Server.Replicas[target]["requests_finished"]; n != 20 {
			t.Errorf("%s finished %v requests, want its round-robin half, 20", target, n)
		}
	}
}

// TestPrometheusAPISource: the run reads the engine's metrics from a real
// Prometheus server scraping the built-in engine, and they agree with the
// client exactly once settled.
func TestPrometheusAPISource(t *testing.T) {
	t.Parallel()
	_, ep := startSim(t, sim.Config{})
	promURL := realtest.StartPrometheus(t, strings.TrimPrefix(strings.TrimSuffix(ep.MetricsURL, "/metrics"), "http://"))
	src := promapi.Source{URL: promURL, Selector: `job="engine"`, Dialect: "sglang"}
	realtest.WaitFor(t, 20*time.Second, "the engine's series in Prometheus", func() bool {
		smp, err := src.Instant(context.Background(), time.Time{})
		return err == nil && len(smp.Replicas) == 1
	})
	s := runForSummary(t, `
name: via-prometheus
model: llmbench-sim
engine:
  kind: external
  base_url: `+ep.BaseURL+`
  dialect: sglang
workload:
  concurrency: 4
  requests: 40
  prompt_tokens: 32
  output_tokens: 16
scrape:
  interval: 1s
  prometheus: {url: "`+promURL+`", selector: 'job="engine"'}
`)
	if s.Server == nil {
		t.Fatalf("no server view through Prometheus; health %+v", s.Health)
	}
	for _, c := range []struct {
		name string
		want int
	}{{"requests_finished", s.Client.Requests.OK}, {"prompt_tokens", s.Client.Tokens.Prompt}, {"generation_tokens", s.Client.Tokens.Output}} {
		if got := s.Server.Counters[c.name]; got != float64(c.want) {
			t.Errorf("Δ%s through Prometheus = %v, the client's = %d", c.name, got, c.want)
		}
	}
	if s.Health.ScrapeOK == 0 {
		t.Errorf("no successful rounds from Prometheus: %+v", s.Health)
	}
}
