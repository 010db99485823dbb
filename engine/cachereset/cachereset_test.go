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
			res := Reset(t.Context(), nil, strings.TrimSuffix(ep.BaseURL, "/v1"), tt.dialect)
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
	res := Reset(t.Context(), nil, notFound.URL, engines.VLLM)
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
	res = Reset(t.Context(), nil, busy.URL+"/", engines.SGLang)
	if !res.OK || res.Calls != 3 || res.Took < 150*time.Millisecond {
		t.Errorf("busy SGLang: %+v", res)
	}
	res = Reset(t.Context(), nil, busy.URL, "")
	if res.OK || !strings.Contains(res.Error, "unknown family") {
		t.Errorf("no family: %+v", res)
	}
}
