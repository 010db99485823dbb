package sim

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAPIKey: with an API key the built-in engine guards the paths each
// engine's --api-key guards, takes the bearer token (and llama.cpp's
// X-Api-Key), and answers 401 with the engine's body otherwise.
func TestAPIKey(t *testing.T) {
	t.Parallel()
	const key = "sk-test-7f3a"
	for _, tt := range []struct {
		dialect string
		path    string
		guarded bool
	}{
		{DialectVLLM, "/v1/models", true},
		{DialectVLLM, "/reset_prefix_cache", false},
		{DialectVLLM, "/metrics", false},
		{DialectSGLang, "/flush_cache", true},
		{DialectSGLang, "/v1/models", true},
		{DialectSGLang, "/health", false},
		{DialectSGLang, "/metrics", false},
		{DialectLlamaCpp, "/slots", true},
		{DialectLlamaCpp, "/metrics", true},
		{DialectLlamaCpp, "/v1/models", false},
		{DialectLlamaCpp, "/health", false},
		{DialectSGLang, DCGMPath, false},
	} {
		p, _ := Preset("tiny")
		_, ep := startEngine(t, Config{Dialect: tt.dialect, Params: p, APIKey: key})
		root := strings.TrimSuffix(ep.BaseURL, "/v1")
		do := func(header, value string) *httptest.ResponseRecorder {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, root+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if header != "" {
				req.Header.Set(header, value)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			rec := httptest.NewRecorder()
			rec.Code = resp.StatusCode
			_, _ = rec.Body.ReadFrom(resp.Body)
			return rec
		}
		none, wrong, bearer := do("", ""), do("Authorization", "Bearer nope"), do("Authorization", "Bearer "+key)
		if got := none.Code == http.StatusUnauthorized; got != tt.guarded {
			t.Errorf("%s %s without a key: %d, guarded %v", tt.dialect, tt.path, none.Code, tt.guarded)
		}
		if tt.guarded && (wrong.Code != http.StatusUnauthorized || bearer.Code == http.StatusUnauthorized) {
			t.Errorf("%s %s: wrong key %d, right key %d", tt.dialect, tt.path, wrong.Code, bearer.Code)
		}
		if tt.guarded {
			want := `{"error":"Unauthorized"}`
			if tt.dialect == DialectLlamaCpp {
				want = `"message":"Invalid API Key"`
				if c := do("X-Api-Key", key).Code; c == http.StatusUnauthorized {
					t.Errorf("llama.cpp refused X-Api-Key")
				}
			}
			if !strings.Contains(none.Body.String(), want) || strings.Contains(none.Body.String(), key) {
				t.Errorf("%s 401 body %q", tt.dialect, none.Body.String())
			}
		}
	}
}

// TestServeAPIKeyEnv: `llmbench serve --api-key-env NAME` requires the
// key the variable holds; a variable not set is refused.
func TestServeAPIKeyEnv(t *testing.T) {
	t.Setenv("LLMBENCH_SIM_TEST_KEY", "sk-serve-1")
	o := ServeOptions{Dialect: DialectSGLang, APIKeyEnv: "LLMBENCH_SIM_TEST_KEY"}
	if cfg, err := o.Config(); err != nil || cfg.APIKey != "sk-serve-1" {
		t.Errorf("Config = %+v, %v", cfg.APIKey, err)
	}
	o.APIKeyEnv = "LLMBENCH_SIM_TEST_KEY_UNSET"
	if _, err := o.Config(); err == nil || !strings.Contains(err.Error(), "--api-key-env LLMBENCH_SIM_TEST_KEY_UNSET: the variable is not set") {
		t.Errorf("unset variable: %v", err)
	}
}
