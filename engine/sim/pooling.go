package sim

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/engine/sim/batch"
)

// The pooling endpoints (embeddings, rerank; decision 1401). As vLLM does,
// each input is its own engine request: an embeddings request of n inputs
// is n sequences, a rerank request of n documents n query–document pairs
// (a cross-encoder reads the query and the document together). Every
// sequence is prefill only: it leaves the scheduler after the pass that
// reads its prompt (max_tokens 1, the token never sent), so the request
// costs the prefill of all its inputs, batched as the scheduler batches
// them, and its answer is written once the last is done. Pooling models
// run without prefix caching (vLLM turns it off for them by default): the
// sequences carry no prefix hashes. Of the faults only injected error
// statuses apply.

const (
	// defaultEmbeddingDimensions is a vector's length when neither the
	// request nor Params.EmbeddingDimensions says.
	defaultEmbeddingDimensions = 16
	// maxEmbeddingDimensions bounds a request's "dimensions".
	maxEmbeddingDimensions = 8192
)

// poolingRequest is what the engine reads of an embeddings or rerank body.
type poolingRequest struct {
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     *int            `json:"dimensions"`
	Query          *string         `json:"query"`
	TopN           int             `json:"top_n"`
	ReturnText     bool            `json:"return_text"` // TEI
	RID            json.RawMessage `json:"rid"`
	RequestID      string          `json:"request_id"`

	texts []string // embeddings' inputs, or rerank's documents
}

// parsePooling reads body as ep's request: embeddings' input (a string or
// an array of strings), rerank's query and documents (under ep.Reserved).
func parsePooling(body []byte, ep endpoints.Endpoint) (*poolingRequest, error) {
	var req poolingRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("invalid JSON body: %v", err)
	}
	if ep.Kind == endpoints.KindEmbeddings {
		if err := req.readInput(); err != nil {
			return nil, err
		}
	} else {
		var members map[string]json.RawMessage
		_ = json.Unmarshal(body, &members) // parsed above
		if req.Query == nil {
			return nil, errors.New(`"query" is missing: want the text the documents are ranked against`)
		}
		if err := json.Unmarshal(members[ep.Reserved], &req.texts); err != nil || len(req.texts) == 0 {
			return nil, fmt.Errorf("%q: want a non-empty array of strings", ep.Reserved)
		}
	}
	switch f := req.EncodingFormat; {
	case f != "" && f != "float" && f != "base64":
		return nil, fmt.Errorf("encoding_format %q: want float or base64", f)
	case req.Dimensions != nil && (*req.Dimensions < 1 || *req.Dimensions > maxEmbeddingDimensions):
		return nil, fmt.Errorf("dimensions %d: want 1 to %d", *req.Dimensions, maxEmbeddingDimensions)
	case req.TopN < 0:
		return nil, fmt.Errorf("top_n %d: want 0 (all) or more", req.TopN)
	}
	return &req, nil
}

// readInput reads embeddings' input: one string, or an array of them.
func (req *poolingRequest) readInput() error {
	in := bytes.TrimSpace(req.Input)
	if len(in) > 0 && in[0] == '"' {
		var s string
		if err := json.Unmarshal(in, &s); err != nil {
			return fmt.Errorf("input: %v", err)
		}
		req.texts = []string{s}
		return nil
	}
	if err := json.Unmarshal(in, &req.texts); err != nil || len(req.texts) == 0 {
		return errors.New("input: want a string or a non-empty array of strings (the built-in engine reads text, not token ids)")
	}
	return nil
}

// poolingIDPrefix is what vLLM puts before a pooling answer's id.
func poolingIDPrefix(kind endpoints.Kind) string {
	if kind == endpoints.KindEmbeddings {
		return "embd-"
	}
	return "rerank-"
}

// servePooling answers an embeddings or rerank request whose body handleGenerate
// has read: one prefill-only sequence per input, the answer written once
// every one is done, and the request's truth.
func (e *Engine) servePooling(w http.ResponseWriter, r *http.Request, t *RequestTruth, body []byte, ep endpoints.Endpoint) {
	req, err := parsePooling(body, ep)
	if err == nil {
		err = e.resolveIDs(t, &chatRequest{RID: req.RID, RequestID: req.RequestID}, r.Header, false)
	}
	if err != nil {
		e.reject(w, t, http.StatusBadRequest, err.Error())
		return
	}
	t.ChunkID = poolingIDPrefix(ep.Kind) + t.ID
	if f := e.cfg.Faults.draw(e.cfg.Params.Seed, t.ID); f.errStatus != 0 {
		t.Faults = append(t.Faults, FaultError)
		e.rejectFault(w, t, f.errStatus, fmt.Sprintf("injected fault: %d %s", f.errStatus, http.StatusText(f.errStatus)))
		return
	}
	streams, err := e.poolingStreams(t, req)
	if err != nil {
		e.reject(w, t, http.StatusBadRequest, err.Error())
		return
	}
	for _, s := range streams {
		e.post(opAdd, s)
	}
	final := e.waitPooling(r, streams)
	t.Finish = e.now()
	poolingTimes(t, streams)
	switch final {
	case "":
		t.Outcome, t.Error = OutcomeAborted, "client went away"
		e.truth.addRequest(*t)
		return
	case batch.FinishAbort, finishRestart:
		if final == finishRestart {
			t.Faults = append(t.Faults, FaultRestart)
		}
		e.reject(w, t, http.StatusServiceUnavailable, "engine stopped")
		return
	}
	defer e.settle.exit(e.settle.enter())
	answer := e.poolingAnswer(ep, t, req)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, werr := w.Write(answer)
	if werr == nil {
		werr = http.NewResponseController(w).Flush()
	}
	t.Status, t.Outcome, t.Finish = http.StatusOK, OutcomeOK, e.now()
	if werr != nil {
		t.Outcome, t.Error = OutcomeAborted, fmt.Sprintf("write response: %v", werr)
	}
	e.truth.addRequest(*t)
}

// poolingStreams makes one prefill-only sequence per input (rerank: per
// query–document pair), counting the request's prompt tokens into t.
func (e *Engine) poolingStreams(t *RequestTruth, req *poolingRequest) ([]*stream, error) {
	p := e.cfg.Params
	query := 0
	if req.Query != nil {
		query = promptTokens("", *req.Query, nil)
		if query == 0 {
			return nil, errors.New("the query is empty (the built-in tokenizer counts whitespace-separated words)")
		}
	}
	streams := make([]*stream, len(req.texts))
	for i, text := range req.texts {
		n := query + promptTokens("", text, nil)
		switch {
		case n == query:
			return nil, fmt.Errorf("input %d is empty (the built-in tokenizer counts whitespace-separated words)", i)
		case n >= p.MaxModelLen:
			return nil, fmt.Errorf("input %d: this model's maximum context length is %d tokens, the input has %d", i, p.MaxModelLen, n)
		}
		s := newStream()
		s.id = t.ID + "-" + strconv.Itoa(i) // vLLM's id of each input's engine request
		s.chunkID, s.arrival, s.pooling = t.ChunkID+"-"+strconv.Itoa(i), t.Arrival, true
		s.seq = batch.Seq{ID: s.id, PromptLen: n, MaxTokens: 1, IgnoreEOS: true, Owner: s}
		streams[i] = s
		t.PromptTokens += n
	}
	t.Inputs = len(streams)
	return streams, nil
}

// waitPooling waits until the engine is done with every sequence and
// returns the worst end: "" when the client went away (every sequence
// then aborted), the abort or restart that ended one, else the finish
// reason.
func (e *Engine) waitPooling(r *http.Request, streams []*stream) string {
	final := batch.FinishLength
	for i, s := range streams {
		var f string
		for f == "" {
			if e.waitEvent(r, s) {
				for _, o := range streams[i:] {
					e.abortAndWait(o)
				}
				return ""
			}
			_, f = s.take(nil)
			if f == "" {
				select {
				case <-e.loopDone:
					f = batch.FinishAbort
				default:
				}
			}
		}
		if f == batch.FinishAbort || f == finishRestart {
			final = f
		}
	}
	return final
}

// poolingTimes puts the sequences' times into the request's truth: the
// first entered the queue, the last left it, the first prefill began, the
// last ended.
func poolingTimes(t *RequestTruth, streams []*stream) {
	for i, s := range streams {
		if i == 0 || s.queueEnter < t.QueueEnter {
			t.QueueEnter = s.queueEnter
		}
		if i == 0 || (s.prefillStart > 0 && s.prefillStart < t.PrefillStart) {
			t.PrefillStart = s.prefillStart
		}
		t.QueueLeave = max(t.QueueLeave, s.queueLeave)
		t.PrefillEnd = max(t.PrefillEnd, s.prefillEnd)
		t.Preemptions += s.seq.Preemptions
	}
}

// poolingAnswer renders the answer: embeddings' data of vectors, rerank's
// results by falling score (top_n of them), TEI's bare array of ranks.
func (e *Engine) poolingAnswer(ep endpoints.Endpoint, t *RequestTruth, req *poolingRequest) []byte {
	id, _ := json.Marshal(t.ChunkID)
	model, _ := json.Marshal(e.cfg.Model)
	usage := fmt.Sprintf(`{"prompt_tokens":%d,"total_tokens":%d,"completion_tokens":0}`, t.PromptTokens, t.PromptTokens)
	if ep.Kind == endpoints.KindEmbeddings {
		b := fmt.Appendf(nil, `{"id":%s,"object":"list","created":%d,"model":%s,"data":[`, id, time.Now().Unix(), model)
		dims := e.embeddingDimensions(req)
		t.Results = len(req.texts)
		for i, text := range req.texts {
			if i > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, `{"index":%d,"object":"embedding","embedding":`, i)
			b = appendVector(b, embedding(e.cfg.Params.Seed, text, dims), req.EncodingFormat == "base64")
			b = append(b, '}')
		}
		return fmt.Appendf(b, `],"usage":%s}`, usage)
	}
	order := rankOrder(e.cfg.Params.Seed, *req.Query, req.texts, req.TopN)
	t.Results = len(order)
	tei := ep.AtServerRoot
	b := []byte{'['}
	if !tei {
		b = fmt.Appendf(nil, `{"id":%s,"model":%s,"usage":%s,"results":[`, id, model, usage)
	}
	for k, i := range order {
		if k > 0 {
			b = append(b, ',')
		}
		score := strconv.FormatFloat(relevance(e.cfg.Params.Seed, *req.Query, req.texts[i]), 'g', -1, 64)
		text, _ := json.Marshal(req.texts[i])
		switch {
		case !tei:
			b = fmt.Appendf(b, `{"index":%d,"document":{"text":%s},"relevance_score":%s}`, i, text, score)
		case req.ReturnText:
			b = fmt.Appendf(b, `{"index":%d,"score":%s,"text":%s}`, i, score, text)
		default:
			b = fmt.Appendf(b, `{"index":%d,"score":%s}`, i, score)
		}
	}
	if tei {
		return append(b, ']')
	}
	return append(b, "]}"...)
}

// embeddingDimensions is the vectors' length: the request's, the engine's,
// or the default.
func (e *Engine) embeddingDimensions(req *poolingRequest) int {
	switch {
	case req.Dimensions != nil:
		return *req.Dimensions
	case e.cfg.Params.EmbeddingDimensions > 0:
		return e.cfg.Params.EmbeddingDimensions
	}
	return defaultEmbeddingDimensions
}

// embedding is text's vector: unit length, the same for the same seed and
// text.
func embedding(seed int64, text string, dims int) []float32 {
	v := make([]float32, dims)
	h := batch.HashString(text) ^ uint64(seed)
	var norm float64
	for i := range v {
		x := float64(batch.Mix64(h+uint64(i)*0x9e3779b97f4a7c15)>>11)/(1<<53)*2 - 1
		v[i] = float32(x)
		norm += x * x
	}
	if norm = math.Sqrt(norm); norm > 0 {
		for i := range v {
			v[i] = float32(float64(v[i]) / norm)
		}
	}
	return v
}

// appendVector writes v as a JSON array of numbers, or as OpenAI's base64
// of its little-endian float32s.
func appendVector(b []byte, v []float32, b64 bool) []byte {
	if b64 {
		raw := make([]byte, 0, 4*len(v))
		for _, x := range v {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(x))
		}
		return append(append(append(b, '"'), base64.StdEncoding.EncodeToString(raw)...), '"')
	}
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, float64(x), 'g', -1, 32)
	}
	return append(b, ']')
}

// relevance is a document's score against the query, in [0, 1): the same
// for the same seed, query and document.
func relevance(seed int64, query, doc string) float64 {
	return float64(batch.Mix64(uint64(seed)^batch.HashString("rerank\x00"+query+"\x00"+doc))>>11) / (1 << 53)
}

// rankOrder is the documents' indexes by falling score, ties by index,
// the first topN of them (0: all).
func rankOrder(seed int64, query string, docs []string, topN int) []int {
	order := make([]int, len(docs))
	score := make([]float64, len(docs))
	for i, d := range docs {
		order[i], score[i] = i, relevance(seed, query, d)
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case score[a] > score[b]:
			return -1
		case score[a] < score[b]:
			return 1
		}
		return 0
	})
	if topN > 0 && topN < len(order) {
		order = order[:topN]
	}
	return order
}

// finishedReason is a finished sequence's reason as the dialects count it:
// a pooling one ends with "stop" (vLLM's pooling output), not with the
// length its one-token budget reached.
func finishedReason(s *stream) string {
	if s.pooling {
		return batch.FinishStop
	}
	return s.seq.FinishReason
}

// generated is how many tokens a finished sequence generated as the
// dialects count them: none for a pooling one.
func generated(s *stream) int {
	if s.pooling {
		return 0
	}
	return s.seq.Output
}
