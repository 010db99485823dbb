package scrape

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// serve answers every request with body and content type, and records the
// Accept header it was asked with.
func serve(t *testing.T, status int, contentType string, body []byte) (*httptest.Server, <-chan string) {
	t.Helper()
	accepts := make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case accepts <- r.Header.Get("Accept"):
		default:
		}
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, accepts
}

// TestTargetScrapeLive scrapes real loopback HTTP servers: a good one in
// each format, and the bad ones a run meets (garbage, 500, a dead port).
func TestTargetScrapeLive(t *testing.T) {
	t.Parallel()
	sglangText := fixture(t, "sglang.txt")
	tests := []struct {
		name        string
		status      int
		contentType string
		body        []byte
		dialect     string
		wantOK      bool
		wantFormat  string
		wantErr     []string
		check       func(t *testing.T, s *Snapshot)
	}{
		{
			name: "sglang text", status: 200, contentType: ctText, body: sglangText, dialect: "sglang",
			wantOK: true, wantFormat: FormatText,
			check: func(t *testing.T, s *Snapshot) {
				if s.Dialect != "sglang" || s.Counters[RequestsFinished] != 320 || s.Gauges[RequestsRunning] != 16 {
					t.Errorf("snapshot: dialect %q finished %v running %v", s.Dialect, s.Counters[RequestsFinished], s.Gauges[RequestsRunning])
				}
				if h := s.Histograms[TTFT]; h.Count != 320 {
					t.Errorf("ttft count = %v", h.Count)
				}
			},
		},
		{
			name: "auto-detected", status: 200, contentType: ctText, body: sglangText, dialect: Auto,
			wantOK: true, wantFormat: FormatText,
			check: func(t *testing.T, s *Snapshot) {
				if s.Dialect != "sglang" {
					t.Errorf("dialect = %q", s.Dialect)
				}
			},
		},
		{
			name: "openmetrics served anyway", status: 200, contentType: ctOpenMetrics, body: fixture(t, "sglang_openmetrics.txt"),
			wantOK: true, wantFormat: FormatOpenMetrics,
			check: func(t *testing.T, s *Snapshot) {
				if s.Counters[RequestsFinished] != 12 {
					t.Errorf("finished = %v", s.Counters[RequestsFinished])
				}
			},
		},
		{
			name: "garbage", status: 200, contentType: "text/html", body: fixture(t, "garbage.txt"),
			wantFormat: FormatText, wantErr: []string{"line 1"},
		},
		{
			name: "500", status: 500, contentType: "text/plain", body: []byte("engine overloaded\n"),
			wantErr: []string{"HTTP 500", "engine overloaded"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, accepts := serve(t, tt.status, tt.contentType, tt.body)
			start := time.Now()
			row := Target{URL: srv.URL + "/metrics", Dialect: tt.dialect, Timeout: 5 * time.Second}.Scrape(context.Background(), start)
			if row.OK != tt.wantOK {
				t.Fatalf("OK = %v, error %q", row.OK, row.Error)
			}
			if row.Target != srv.URL+"/metrics" || row.Status != tt.status || row.Bytes != len(tt.body) || row.Format != tt.wantFormat {
				t.Errorf("row target %q status %d bytes %d format %q; want status %d bytes %d format %q",
					row.Target, row.Status, row.Bytes, row.Format, tt.status, len(tt.body), tt.wantFormat)
			}
			if row.At < 0 || row.Duration <= 0 || row.Wall.IsZero() || row.Wall != row.Wall.Round(0) {
				t.Errorf("times: at %v dur %v wall %v", row.At, row.Duration, row.Wall)
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(row.Error, s) {
					t.Errorf("error %q does not contain %q", row.Error, s)
				}
			}
			if tt.wantOK != (row.Snapshot != nil) {
				t.Errorf("snapshot present = %v", row.Snapshot != nil)
			}
			if tt.check != nil && row.Snapshot != nil {
				tt.check(t, row.Snapshot)
			}
			if got := <-accepts; got != AcceptHeader {
				t.Errorf("Accept = %q, want %q", got, AcceptHeader)
			}
		})
	}
}

func TestTargetScrapeTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // stall until the client gives up (or the test ends)
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	row := Target{URL: srv.URL, Dialect: "sglang", Timeout: 50 * time.Millisecond}.Scrape(context.Background(), time.Now())
	if row.OK || !strings.Contains(row.Error, "timed out after 50ms") {
		t.Errorf("row OK %v error %q, want a timeout", row.OK, row.Error)
	}
	if row.Status != 0 {
		t.Errorf("status = %d, want 0 (no response)", row.Status)
	}
}

func TestTargetScrapeDeadPort(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	row := Target{URL: url, Timeout: time.Second}.Scrape(context.Background(), time.Now())
	if row.OK || !strings.Contains(row.Error, "scrape "+url) || !strings.Contains(row.Error, "refused") {
		t.Errorf("row OK %v error %q, want connection refused naming the URL", row.OK, row.Error)
	}
}

func TestTargetScrapeBadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		target  Target
		wantErr string
	}{
		{"unknown dialect", Target{URL: "http://127.0.0.1:1/metrics", Dialect: "nope"}, `unknown metrics dialect "nope"`},
		{"bad URL", Target{URL: "://"}, "missing protocol scheme"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			row := tt.target.Scrape(context.Background(), time.Now())
			if row.OK || !strings.Contains(row.Error, tt.wantErr) {
				t.Errorf("row OK %v error %q, want %q", row.OK, row.Error, tt.wantErr)
			}
		})
	}
}

// A /metrics that redirects is not followed (the scrape would read another
// host's page as the engine's): the row fails naming the target, its
// secrets removed.
func TestTargetScrapeRedirect(t *testing.T) {
	t.Parallel()
	hits := 0
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	t.Cleanup(other.Close)
	srv := httptest.NewServer(http.RedirectHandler(other.URL+"/metrics?token=s3cret", http.StatusTemporaryRedirect))
	t.Cleanup(srv.Close)
	row := Target{URL: srv.URL, Dialect: "sglang", Timeout: 5 * time.Second}.Scrape(context.Background(), time.Now())
	if row.OK || row.Status != http.StatusTemporaryRedirect || !strings.Contains(row.Error, "redirected to "+other.URL) || hits != 0 {
		t.Errorf("row OK %v status %d error %q, other host reached %d times; want the redirect named, not followed", row.OK, row.Status, row.Error, hits)
	}
	if strings.Contains(row.Error, "s3cret") {
		t.Errorf("the error keeps a secret: %q", row.Error)
	}
}

// A /metrics guarded by the engine's API key (llama.cpp --api-key) is read
// with the target's Bearer; without it, or with a wrong one, the row's
// error says which, and how to give the run the key.
func TestTargetScrapeBearer(t *testing.T) {
	t.Parallel()
	const key = "sk-bearer-test"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}`))
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte("# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 2\n"))
	}))
	t.Cleanup(srv.Close)
	for _, tt := range []struct {
		name, bearer, errHas string
	}{
		{"the engine's key", key, ""},
		{"no key", "", "engine.api_key_env"},
		{"a wrong key", "sk-wrong", "the engine's API key was sent and refused"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tgt := Target{URL: srv.URL + "/metrics", Bearer: tt.bearer, Timeout: 5 * time.Second}
			row := tgt.Scrape(context.Background(), time.Now())
			if tt.errHas == "" {
				if !row.OK || row.Snapshot == nil {
					t.Fatalf("row %+v: want the page read", row)
				}
				rep, err := InspectTarget(context.Background(), tgt, "")
				if err != nil || rep.Dialect != "llamacpp" {
					t.Fatalf("inspect: %v, dialect %q: want llamacpp read with the key", err, rep.Dialect)
				}
				return
			}
			if row.OK || row.Status != http.StatusUnauthorized || !strings.Contains(row.Error, tt.errHas) || !strings.Contains(row.Error, "Invalid API Key") {
				t.Fatalf("row OK %v, status %d, error %q: want a 401 saying %q", row.OK, row.Status, row.Error, tt.errHas)
			}
			if strings.Contains(row.Error, key) || tt.bearer != "" && strings.Contains(row.Error, tt.bearer) {
				t.Fatalf("the error names the key: %q", row.Error)
			}
		})
	}
}
