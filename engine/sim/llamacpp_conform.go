package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// What the llama.cpp dialect learned from a real llama-server (decision
// 2200; conformance/llamacpp holds both to it).

// rejectContext answers a prompt that does not fit the context: in the
// llama.cpp dialect as llama-server does (HTTP 400, error type
// exceed_context_size_error with the prompt's and the slot's token counts,
// streamed or not: the error comes before any event), in the others with
// contextError's message.
func (e *Engine) rejectContext(w http.ResponseWriter, t *RequestTruth, prompt int) {
	nctx := e.cfg.Params.MaxModelLen
	if e.cfg.Dialect != DialectLlamaCpp {
		e.reject(w, t, http.StatusBadRequest, contextError(e.cfg.Dialect, nctx, prompt))
		return
	}
	defer e.settle.exit(e.settle.enter())
	msg := fmt.Sprintf("request (%d tokens) exceeds the available context size (%d tokens), try increasing it", prompt, nctx)
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code": http.StatusBadRequest, "message": msg, "type": "exceed_context_size_error",
		"n_prompt_tokens": prompt, "n_ctx": nctx,
	}})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(body)
	t.Status = http.StatusBadRequest
	t.Outcome = OutcomeRejected
	t.Error = msg
	t.Finish = e.now()
	e.truth.addRequest(*t)
}

// errorCloser is llama-server's HTTP layer (cpp-httplib) on an error: an
// answer of status 400 or more says Connection: close instead of the
// Keep-Alive promise, and the connection closes after it.
type errorCloser struct{ http.ResponseWriter }

func (c errorCloser) WriteHeader(code int) {
	if code >= http.StatusBadRequest {
		h := c.Header()
		h.Del("Keep-Alive")
		h.Set("Connection", "close")
	}
	c.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (c errorCloser) Unwrap() http.ResponseWriter { return c.ResponseWriter }
