package cachereset

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/engines"
)

// TestResetBuiltInEngine: each dialect's reset reaches the built-in
// engine's (its ground truth counts it); FastDeploy has none to call.
func TestResetBuiltInEngine(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		dialect string
		ok      bool
		resets  int // the engine's count afterwards
	}{
		{sim.DialectVLLM, true, 1}, {sim.DialectSGLang, true, 1}, {sim.DialectLlamaCpp, true, 64}, {sim.DialectFastDeploy, false, 0},
	} {
		t.Run(tt.dialect, func(t *testing.T) {
			t.Parallel()
			p, err := sim.Preset("tiny")
			if err != nil {
				t.Fatal(err)
			}
			e, err := sim.New(sim.Config{Dialect: tt.dialect, Params: p})
			if err != nil {
				t.Fatal(err)
			}
			ep, err := e.Start(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = e.Stop(context.Background()) }()
			res := Reset(t.Context(), nil, strings.TrimSuffix(ep.BaseURL, "/v1"), tt.dialect, "")
			if res.OK != tt.ok || e.CacheResets() != tt.resets {
				t.Errorf("Reset = %+v; engine counted %d resets, want %d", res, e.CacheResets(), tt.resets)
			}
			if !tt.ok && !strings.Contains(res.Error, "offers no prefix-cache reset") {
				t.Errorf("error %q", res.Error)
			}
		})
	}
}

// TestResetRefusals: a 404 (vLLM without its dev mode) fails at once and
// says so; SGLang's 400 while requests finish is retried until it flushes.
func TestResetRefusals(t *testing.T) {
	t.Parallel()
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	res := Reset(t.Context(), nil, notFound.URL, engines.VLLM, "")
	if res.OK || res.Calls != 1 || res.Status != 404 || !strings.Contains(res.Error, "POST /reset_prefix_cache: HTTP 404") {
		t.Errorf("404: %+v", res)
	}
	var calls atomic.Int32
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/flush_cache" {
			t.Errorf("%s %s", r.Method, r.URL.Path)
		}
		if calls.Add(1) < 3 {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte("Cache flushed."))
	}))
	defer busy.Close()
	res = Reset(t.Context(), nil, busy.URL+"/", engines.SGLang, "")
	if !res.OK || res.Calls != 3 || res.Took < 150*time.Millisecond {
		t.Errorf("busy SGLang: %+v", res)
	}
	res = Reset(t.Context(), nil, busy.URL, "", "")
	if res.OK || !strings.Contains(res.Error, "unknown family") {
		t.Errorf("no family: %+v", res)
	}
}

// TestResetWithKey: against the built-in engine requiring an API key, each
// dialect's reset carries the run's key and empties the cache; without it
// SGLang's /flush_cache and llama.cpp's /slots refuse, and the error names
// the endpoint, the status and what to do (vLLM's reset is not guarded by
// its --api-key); a wrong key says so.
func TestResetWithKey(t *testing.T) {
	t.Parallel()
	const key = "sk-reset-51c9"
	for _, tt := range []struct {
		dialect     string
		resets      int    // the engine's count after a reset with the key
		withoutKey  string // the error without it ("" = it works)
		wrongKeyErr string
	}{
		{sim.DialectVLLM, 1, "", ""},
		{sim.DialectSGLang, 1, `POST /flush_cache: HTTP 401 Unauthorized (the engine wants an API key: none was sent; set engine.api_key_env): {"error":"Unauthorized"}`,
			"POST /flush_cache: HTTP 401 Unauthorized (the engine refused the run's API key)"},
		{sim.DialectLlamaCpp, 64, "GET /slots: HTTP 401 Unauthorized (the engine wants an API key: none was sent; set engine.api_key_env): " +
			`{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}`, "GET /slots: HTTP 401 Unauthorized (the engine refused the run's API key)"},
	} {
		t.Run(tt.dialect, func(t *testing.T) {
			t.Parallel()
			p, err := sim.Preset("tiny")
			if err != nil {
				t.Fatal(err)
			}
			e, err := sim.New(sim.Config{Dialect: tt.dialect, Params: p, APIKey: key})
			if err != nil {
				t.Fatal(err)
			}
			ep, err := e.Start(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = e.Stop(context.Background()) }()
			root := strings.TrimSuffix(ep.BaseURL, "/v1")
			if res := Reset(t.Context(), nil, root, tt.dialect, key); !res.OK || e.CacheResets() != tt.resets {
				t.Fatalf("with the key: %+v; engine counted %d resets, want %d", res, e.CacheResets(), tt.resets)
			}
			res := Reset(t.Context(), nil, root, tt.dialect, "")
			if tt.withoutKey == "" {
				if !res.OK {
					t.Errorf("without a key: %+v", res)
				}
				return
			}
			if res.OK || res.Status != 401 || res.Error != tt.withoutKey {
				t.Errorf("without a key: %+v\nwant error %q", res, tt.withoutKey)
			}
			if res := Reset(t.Context(), nil, root, tt.dialect, "sk-wrong"); res.OK || !strings.HasPrefix(res.Error, tt.wrongKeyErr) {
				t.Errorf("a wrong key: %+v", res)
			}
		})
	}
}

// TestResetRefusalNotes: each refusal names the endpoint and the status
// with what it means, and a server that echoes the request's headers in
// its refusal never gets the key into the error.
func TestResetRefusalNotes(t *testing.T) {
	t.Parallel()
	const key = "sk-echo-90ab"
	for _, tt := range []struct {
		status int
		family string
		want   string
	}{
		{401, engines.SGLang, "POST /flush_cache: HTTP 401 Unauthorized (the engine refused the run's API key): Authorization: REDACTED"},
		{403, engines.VLLM, "POST /reset_prefix_cache: HTTP 403 Forbidden (the engine refused the run's API key)"},
		{404, engines.VLLM, "POST /reset_prefix_cache: HTTP 404 Not Found (vLLM serves it only when started with VLLM_SERVER_DEV_MODE=1)"},
		{404, engines.SGLang, "POST /flush_cache: HTTP 404 Not Found (the engine does not serve it: an older release, or a proxy in front)"},
		{405, engines.VLLM, "POST /reset_prefix_cache: HTTP 405 Method Not Allowed (the engine serves the path, not with this method: another release's API)"},
		{500, engines.LlamaCpp, "GET /slots: HTTP 500 Internal Server Error: Authorization: REDACTED"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tt.status)
			_, _ = w.Write([]byte("Authorization: " + r.Header.Get("Authorization")))
		}))
		res := Reset(t.Context(), nil, srv.URL, tt.family, key)
		srv.Close()
		if res.OK || res.Status != tt.status || !strings.HasPrefix(res.Error, tt.want) || strings.Contains(res.Error, key) {
			t.Errorf("%d %s: %+v\nwant %q", tt.status, tt.family, res, tt.want)
		}
	}
}
