package sim

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// Prefix-cache resets as each engine offers them, answered by the loop that
// owns the scheduler (docs/decisions/1702):
//   - vLLM: POST /reset_prefix_cache, 200 with an empty body (vLLM serves it
//     only with VLLM_SERVER_DEV_MODE=1);
//   - SGLang: GET or POST /flush_cache, 200 "Cache flushed." or 400 when
//     requests are running or waiting, as SGLang refuses then;
//   - llama.cpp: GET /slots lists the slots, POST /slots/{id}?action=erase
//     erases one ({"id_slot", "n_erased"}). The built-in engine's prefix
//     cache is shared by all slots, so erasing any slot empties it.
//
// FastDeploy offers none.

// cacheReset is one reset asked of the loop; it answers on reply.
type cacheReset struct {
	idleOnly bool // refuse while requests run or wait (SGLang)
	reply    chan cacheResetResult
}

type cacheResetResult struct {
	done    bool // false: refused (requests in the engine)
	dropped int  // cached tokens dropped
}

// CacheResets is the number of prefix-cache resets the engine carried out
// (ground truth).
func (e *Engine) CacheResets() int { return int(e.cacheResetsDone.Load()) }

// cacheRoutes registers the dialect's reset endpoint and the emulated DCGM
// exporter.
func (e *Engine) cacheRoutes(mux *http.ServeMux) {
	mux.HandleFunc(DCGMPath, e.handleDCGM)
	switch e.cfg.Dialect {
	case DialectVLLM:
		mux.HandleFunc("POST /reset_prefix_cache", func(w http.ResponseWriter, r *http.Request) {
			if _, ok := e.resetCache(r.Context(), w, false); ok {
				w.WriteHeader(http.StatusOK)
			}
		})
	case DialectSGLang:
		mux.HandleFunc("/flush_cache", func(w http.ResponseWriter, r *http.Request) {
			res, ok := e.resetCache(r.Context(), w, true)
			if !ok {
				return
			}
			if !res.done {
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte("Cache not flushed. Please check backend logs for more details. (When there are running or waiting requests, the operation will not be performed.)\n"))
				return
			}
			_, _ = w.Write([]byte("Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting requests, the operation will not be performed.)\n"))
		})
	case DialectLlamaCpp:
		mux.HandleFunc("GET /slots", e.handleSlots)
		mux.HandleFunc("POST /slots/{id}", func(w http.ResponseWriter, r *http.Request) {
			id, err := strconv.Atoi(r.PathValue("id"))
			if err != nil || id < 0 || id >= e.cfg.Params.MaxRunningRequests {
				writeError(w, http.StatusBadRequest, "Invalid slot ID")
				return
			}
			if r.URL.Query().Get("action") != "erase" {
				writeError(w, http.StatusBadRequest, "Invalid action")
				return
			}
			if res, ok := e.resetCache(r.Context(), w, false); ok {
				writeJSON(w, map[string]any{"id_slot": id, "n_erased": res.dropped})
			}
		})
	}
}

// handleSlots lists llama.cpp's slots (the fields a reset needs).
func (e *Engine) handleSlots(w http.ResponseWriter, r *http.Request) {
	slots := make([]map[string]any, e.cfg.Params.MaxRunningRequests)
	for i := range slots {
		slots[i] = map[string]any{"id": i, "n_ctx": e.cfg.Params.MaxModelLen}
	}
	writeJSON(w, slots)
}

// resetCache asks the loop for a reset and waits for its answer; ok is
// false when the engine is stopping or the caller left (an answer was
// written then).
func (e *Engine) resetCache(ctx context.Context, w http.ResponseWriter, idleOnly bool) (cacheResetResult, bool) {
	req := cacheReset{idleOnly: idleOnly, reply: make(chan cacheResetResult, 1)}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case e.cacheResetC <- req:
	case <-e.stopLoop:
		w.WriteHeader(http.StatusServiceUnavailable)
		return cacheResetResult{}, false
	case <-ctx.Done():
		w.WriteHeader(http.StatusServiceUnavailable)
		return cacheResetResult{}, false
	}
	select {
	case e.kick <- struct{}{}:
	default:
	}
	select {
	case res := <-req.reply:
		return res, true
	case <-e.stopLoop:
	case <-ctx.Done():
	}
	w.WriteHeader(http.StatusServiceUnavailable)
	return cacheResetResult{}, false
}

// serveCacheResets carries out the resets asked for since the last pass.
// Called by the loop, between passes.
func (e *Engine) serveCacheResets() {
	for {
		select {
		case req := <-e.cacheResetC:
			if req.idleOnly && (e.sched.Running() > 0 || e.sched.Waiting() > 0 || len(e.active) > 0) {
				req.reply <- cacheResetResult{}
				continue
			}
			dropped := e.sched.ResetPrefixCache()
			e.cacheResetsDone.Add(1)
			req.reply <- cacheResetResult{done: true, dropped: dropped}
		default:
			return
		}
	}
}

// cacheResetCounter is the ground-truth count of resets (atomic: read by tests).
type cacheResetCounter = atomic.Int64
