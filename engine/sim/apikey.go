package sim

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// requireKey makes the engine refuse requests without Config.APIKey, as
// each engine's --api-key does, on the paths each guards:
//   - vLLM: only paths under /v1 (its AuthenticationMiddleware), so its
//     /reset_prefix_cache, /tokenize and /metrics stay open;
//   - SGLang (and FastDeploy, modelled alike): every path but /health* and
//     /metrics*, so /flush_cache needs the key;
//   - llama.cpp: every path but /health, /v1/health, /models, /v1/models
//     and /api/tags, so /slots and /metrics need it (the run's scrapes send
//     the key to the engine's own origin); it takes X-Api-Key too.
//
// A refusal is 401 with the engine's body. The emulated DCGM exporter is
// another process on a real host: never guarded.
func (e *Engine) requireKey(h http.Handler) http.Handler {
	key := e.cfg.APIKey
	if key == "" {
		return h
	}
	want := []byte("Bearer " + key)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions || !e.guards(r.URL.Path) {
			h.ServeHTTP(w, r)
			return
		}
		ok := subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) == 1
		if !ok && e.cfg.Dialect == DialectLlamaCpp {
			ok = subtle.ConstantTimeCompare([]byte(r.Header.Get("X-Api-Key")), []byte(key)) == 1
		}
		if ok {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		if e.cfg.Dialect == DialectLlamaCpp {
			_, _ = w.Write([]byte(`{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"error":"Unauthorized"}`))
	})
}

// guards reports whether the engine's --api-key guards path.
func (e *Engine) guards(path string) bool {
	if path == DCGMPath {
		return false
	}
	switch e.cfg.Dialect {
	case DialectVLLM:
		return strings.HasPrefix(path, "/v1")
	case DialectLlamaCpp:
		switch path {
		case "/health", "/v1/health", "/models", "/v1/models", "/api/tags":
			return false
		}
		return true
	default:
		return !strings.HasPrefix(path, "/health") && !strings.HasPrefix(path, "/metrics")
	}
}
