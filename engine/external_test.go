package engine

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// TestExternalDiscovers checks what an external engine's Start finds out on
// its own, against real HTTP servers: the model when /v1/models lists one,
// the metrics beside the API when they are a Prometheus exposition, and a
// clear error or note when they are not.
func TestExternalDiscovers(t *testing.T) {
	const metricsText = "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 0\n"
	tests := []struct {
		name       string
		models     string // /v1/models body; "" answers 404
		metrics    func(w http.ResponseWriter)
		basePath   string // default /v1
		model      string // configured
		metricsURL string // configured
		wantModel  string
		wantErr    string
		wantScrape bool
		wantNote   string
		guarded    bool // /metrics answers 401 without the API key (llama.cpp --api-key)
	}{
		{name: "one model, metrics beside the API", models: `{"object":"list","data":[{"id":"meta-llama/Llama-3.1-8B","object":"model"}]}`,
			metrics: textMetrics(metricsText), wantModel: "meta-llama/Llama-3.1-8B", wantScrape: true, wantNote: "metrics at "},
		{name: "OpenMetrics", model: "m", metrics: func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/openmetrics-text; version=1.0.0; charset=utf-8")
			w.Write([]byte(metricsText + "# EOF\n"))
		}, wantModel: "m", wantScrape: true},
		{name: "configured model is not asked for", model: "mine", metrics: textMetrics(metricsText), wantModel: "mine", wantScrape: true},
		{name: "several models", models: `{"data":[{"id":"a"},{"id":"b"}]}`, wantErr: "lists 2 models (a, b)"},
		{name: "no model", models: `{"data":[]}`, wantErr: "lists no model"},
		{name: "models not served", wantErr: "answered 404 Not Found"},
		{name: "models garbage", models: `<html>`, wantErr: "not a model list"},
		{name: "no /metrics", model: "m", wantModel: "m", wantNote: "answered 404 Not Found; set engine.metrics_url"},
		{name: "/metrics is JSON", model: "m", metrics: func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{}`))
		}, wantModel: "m", wantNote: `content type "application/json", not a Prometheus exposition`},
		{name: "behind a gateway path", model: "m", basePath: "/llm/v1", metrics: textMetrics(metricsText), wantModel: "m", wantNote: "a gateway?"},
		{name: "/metrics guarded by the API key", model: "m", metrics: textMetrics(metricsText), guarded: true, wantModel: "m", wantScrape: true},
		{name: "configured metrics URL is kept", model: "m", metricsURL: "http://elsewhere:9400/metrics", wantModel: "m"},
	}
	t.Run("nothing answers", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		base := srv.URL + "/v1"
		srv.Close()
		_, err := External{Endpoint: Endpoint{BaseURL: base}}.Start(t.Context())
		if err == nil || !strings.Contains(err.Error(), "is the engine running at "+base) || strings.Contains(err.Error(), "set model") {
			t.Errorf("error %v, want one asking whether the engine runs", err)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var auth []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case strings.HasSuffix(r.URL.Path, "/v1/models") && tt.models != "":
					auth = append(auth, r.Header.Get("Authorization"))
					w.Header().Set("Content-Type", "application/json")
					w.Write([]byte(tt.models))
				case r.URL.Path == "/metrics" && tt.guarded && r.Header.Get("Authorization") != "Bearer sk-test":
					http.Error(w, `{"error":{"code":401,"message":"Invalid API Key"}}`, http.StatusUnauthorized)
				case r.URL.Path == "/metrics" && tt.metrics != nil:
					tt.metrics(w)
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			base := srv.URL + "/v1"
			if tt.basePath != "" {
				base = srv.URL + tt.basePath
			}
			ext := External{Endpoint: Endpoint{BaseURL: base, Model: tt.model, MetricsURL: tt.metricsURL}, APIKey: "sk-test"}
			ep, err := ext.Start(t.Context())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), base+"/models") {
					t.Fatalf("error %v, want one naming %s/models and containing %q", err, base, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ep.Model != tt.wantModel {
				t.Errorf("model %q, want %q", ep.Model, tt.wantModel)
			}
			switch {
			case tt.metricsURL != "":
				if ep.MetricsURL != tt.metricsURL {
					t.Errorf("metrics URL %q, want the configured %q", ep.MetricsURL, tt.metricsURL)
				}
			case tt.wantScrape:
				if ep.MetricsURL != srv.URL+"/metrics" {
					t.Errorf("metrics URL %q, want %s/metrics", ep.MetricsURL, srv.URL)
				}
			default:
				if ep.MetricsURL != "" {
					t.Errorf("metrics URL %q, want none", ep.MetricsURL)
				}
			}
			if tt.wantNote != "" && !slices.ContainsFunc(ep.Notes, func(n string) bool { return strings.Contains(n, tt.wantNote) }) {
				t.Errorf("notes %q, want one containing %q", ep.Notes, tt.wantNote)
			}
			if tt.models != "" && !slices.Equal(auth, []string{"Bearer sk-test"}) {
				t.Errorf("/v1/models asked with Authorization %q, want the API key once", auth)
			}
			if ext.Endpoint.Notes != nil {
				t.Error("Start changed the configured endpoint")
			}
		})
	}
}

func textMetrics(body string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write([]byte(body))
	}
}
