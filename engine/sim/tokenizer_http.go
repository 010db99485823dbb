package sim

import (
	"encoding/json"
	"io"
	"net/http"
)

// The tokenizer endpoints count with the built-in tokenizer (one token per
// whitespace-separated word) and the chat template of Params, so that what
// they say equals what usage.prompt_tokens reports:
//   - llama.cpp: POST /tokenize {"content": text} → {"tokens": [ids]};
//     POST /apply-template {"messages": [...]} → {"prompt": templated text},
//     whose /tokenize count is the chat request's prompt_tokens.
//   - vLLM (/tokenize) and SGLang (/tokenize, /v1/tokenize):
//     {"model", "prompt": text} or {"model", "messages": [...]} →
//     {"count", "max_model_len", "tokens", "token_strs": null}; messages go
//     through the chat template. The real engines add a BOS token to a
//     prompt (add_special_tokens); the built-in tokenizer has none.

type tokenizeRequest struct {
	Content  *string       `json:"content"`
	Prompt   *string       `json:"prompt"`
	Messages []chatMessage `json:"messages"`
}

// readTokenize decodes a tokenizer request body, or answers an error.
func readTokenize(w http.ResponseWriter, r *http.Request) (*tokenizeRequest, bool) {
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "use POST")
		return nil, false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		writeError(w, http.StatusBadRequest, "cannot read the body")
		return nil, false
	}
	var req tokenizeRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return nil, false
	}
	return &req, true
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}

func (e *Engine) handleTokenizeLlama(w http.ResponseWriter, r *http.Request) {
	req, ok := readTokenize(w, r)
	if !ok {
		return
	}
	text := ""
	if req.Content != nil {
		text = *req.Content
	}
	writeJSON(w, map[string]any{"tokens": tokenIDs(text)})
}

func (e *Engine) handleApplyTemplate(w http.ResponseWriter, r *http.Request) {
	req, ok := readTokenize(w, r)
	if !ok {
		return
	}
	if len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, "messages must be a non-empty list")
		return
	}
	text, err := applyTemplate(e.cfg.Params, req.Messages)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, map[string]any{"prompt": text})
}

func (e *Engine) handleTokenize(w http.ResponseWriter, r *http.Request) {
	req, ok := readTokenize(w, r)
	if !ok {
		return
	}
	var text string
	switch {
	case req.Prompt != nil:
		text = *req.Prompt
	case len(req.Messages) > 0:
		var err error
		if text, err = applyTemplate(e.cfg.Params, req.Messages); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
	default:
		writeError(w, http.StatusBadRequest, "give prompt or messages")
		return
	}
	ids := tokenIDs(text)
	writeJSON(w, map[string]any{"count": len(ids), "max_model_len": e.cfg.Params.MaxModelLen, "tokens": ids, "token_strs": nil})
}
