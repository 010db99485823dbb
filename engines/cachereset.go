package engines

// CacheResetAPI is one way an engine empties its prefix cache on request
// (docs/decisions/1702); package engine/cachereset carries each out.
type CacheResetAPI string

// The cache resets llmbench knows.
const (
	// CacheResetVLLM: POST /reset_prefix_cache, 200 when done. vLLM serves
	// it only with VLLM_SERVER_DEV_MODE=1 (a 404 otherwise).
	CacheResetVLLM CacheResetAPI = "POST /reset_prefix_cache"
	// CacheResetSGLang: POST /flush_cache, 200 "Cache flushed."; 400 while
	// requests run or wait (SGLang then flushes nothing).
	CacheResetSGLang CacheResetAPI = "POST /flush_cache"
	// CacheResetLlamaCppSlots: GET /slots lists the slots, and POST
	// /slots/{id}?action=erase empties each one's cache.
	CacheResetLlamaCppSlots CacheResetAPI = "POST /slots/{id}?action=erase"
)
