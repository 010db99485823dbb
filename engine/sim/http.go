package sim

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"

	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/engine/sim/batch"
)

// maxBody bounds a request body (the largest prompt a 128k-token context
// holds, with room for JSON).
const maxBody = 16 << 20

func (e *Engine) routes() http.Handler {
	mux := http.NewServeMux()
	// Every registered endpoint (package endpoints), answered as its kind.
	eps := endpoints.All()
	for _, ep := range eps {
		mux.HandleFunc(ep.ServerPath(), e.generateHandler(ep))
	}
	mux.HandleFunc("/v1/models", e.handleModels)
	mux.HandleFunc("/health", e.handleHealth)
	mux.HandleFunc("/metrics", e.handleMetrics)
	e.cacheRoutes(mux)
	switch e.cfg.Dialect {
	case DialectLlamaCpp:
		// llama.cpp serves the OpenAI routes without /v1 too.
		for _, ep := range eps {
			if !endpoints.IsServerPath(ep.Path) { // TEI's /rerank is one already
				mux.HandleFunc(ep.Path, e.generateHandler(ep))
			}
		}
		mux.HandleFunc("/tokenize", e.handleTokenizeLlama)
		mux.HandleFunc("/apply-template", e.handleApplyTemplate)
		mux.HandleFunc("/props", e.handleProps)
	case DialectVLLM:
		mux.HandleFunc("/tokenize", e.handleTokenize)
	case DialectSGLang:
		mux.HandleFunc("/tokenize", e.handleTokenize)
		mux.HandleFunc("/v1/tokenize", e.handleTokenize)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path))
	})
	return e.withKeepAlive(e.requireKey(mux)) // apikey.go
}

func (e *Engine) handleHealth(w http.ResponseWriter, r *http.Request) {
	select {
	case <-e.stopLoop:
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	default:
	}
	if e.down() {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// down reports whether a simulated restart keeps the engine down.
func (e *Engine) down() bool { return int64(e.now()) < e.downUntil.Load() }

// handleMetrics serves the current metric set, or a /metrics fault.
func (e *Engine) handleMetrics(w http.ResponseWriter, r *http.Request) {
	if e.down() {
		http.Error(w, "engine restarting", http.StatusServiceUnavailable)
		return
	}
	if e.restartHeld.Load() {
		// Faults.RestartAtFinished: this read restarts the engine and
		// gets the old process's final counts.
		reply := make(chan http.Handler, 1)
		select {
		case e.scrapeRestart <- reply:
			(<-reply).ServeHTTP(w, r)
		case <-r.Context().Done():
		}
		return
	}
	f := &e.cfg.Faults
	if f.metricsFault(e.cfg.Params.Seed, e.scrapes.Add(1)) {
		switch f.MetricsFailMode {
		case "timeout":
			delay := f.MetricsDelay
			if delay == 0 {
				delay = 30 * time.Second
			}
			t := time.NewTimer(delay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-r.Context().Done():
				return
			}
		case "malformed":
			w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
			_, _ = io.WriteString(w, "# TYPE broken counter\nbroken{le=\"0.1\" 1 2 3\n}}}\n")
			return
		default:
			status := f.MetricsFailStatus
			if status == 0 {
				status = http.StatusInternalServerError
			}
			http.Error(w, "metrics fault", status)
			return
		}
	}
	(*e.metricsHTTP.Load()).ServeHTTP(w, r)
}

func (e *Engine) handleModels(w http.ResponseWriter, r *http.Request) {
	type model struct {
		ID          string `json:"id"`
		Object      string `json:"object"`
		Created     int64  `json:"created"`
		OwnedBy     string `json:"owned_by"`
		Root        string `json:"root"`
		MaxModelLen int    `json:"max_model_len"`
	}
	body, _ := json.Marshal(struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{"list", []model{{e.cfg.Model, "model", e.epoch.Unix(), e.cfg.Dialect, e.cfg.Model, e.cfg.Params.MaxModelLen}}})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// handleProps answers llama.cpp's /props as far as llmbench reads it: the
// per-slot context (n_ctx: max_model_len, which the built-in engine applies
// to each request as llama.cpp applies a slot's context) and the slots.
func (e *Engine) handleProps(w http.ResponseWriter, r *http.Request) {
	body, _ := json.Marshal(map[string]any{
		"default_generation_settings": map[string]any{"n_ctx": e.cfg.Params.MaxModelLen},
		"total_slots":                 e.cfg.Params.MaxRunningRequests,
		"model_path":                  e.cfg.Model,
	})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(errorJSON(status, msg))
}

// reject answers with an error before any generation and records it.
func (e *Engine) reject(w http.ResponseWriter, t *RequestTruth, status int, msg string) {
	defer e.settle.exit(e.settle.enter())
	writeErrorFor(w, t.Endpoint, status, msg)
	t.Status = status
	t.Outcome = OutcomeRejected
	t.Error = msg
	t.Finish = e.now()
	e.truth.addRequest(*t)
}

// generateHandler answers ep: a chat or a completion, as its kind says.
func (e *Engine) generateHandler(ep endpoints.Endpoint) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { e.handleGenerate(w, r, ep) }
}

// The built-in endpoints, as RequestTruth.Endpoint names them (any
// registered endpoint's ServerPath).
const (
	EndpointChat        = endpoints.APIRoot + endpoints.ChatPath
	EndpointCompletions = endpoints.APIRoot + endpoints.CompletionsPath
	// EndpointMessages is in messages.go.
)

// respOpts is what a request asked of its response.
type respOpts struct {
	includeUsage, continuousUsage bool
}

func (e *Engine) handleGenerate(w http.ResponseWriter, r *http.Request, ep endpoints.Endpoint) {
	if e.closeIfIdle(w, r) {
		return
	}
	completions := ep.Kind == endpoints.KindCompletion
	t := RequestTruth{Arrival: e.now(), HeaderID: r.Header.Get("X-Request-Id"), Endpoint: ep.ServerPath()}
	t.Traceparent = r.Header.Get("traceparent")
	w, wire := e.wireFrame(w, r, &t) // Faults.Wire (wireframe.go)
	defer wire.finish()
	if c := connOf(r); c != nil {
		t.ConnRequest, t.ConnClosed = c.request, c.closed
		if c.closed {
			t.ConnClose = ConnCloseMax
		}
	}
	e.inflight.Add(1)
	defer e.inflight.Add(-1)
	if r.Method != http.MethodPost {
		e.reject(w, &t, http.StatusMethodNotAllowed, "use POST")
		return
	}
	select {
	case <-e.stopLoop:
		e.reject(w, &t, http.StatusServiceUnavailable, "engine is stopping")
		return
	default:
	}
	if e.down() {
		e.reject(w, &t, http.StatusServiceUnavailable, "engine is restarting")
		return
	}
	body, ok := e.readBody(w, r, &t)
	if !ok {
		return
	}
	if ep.Pooling() {
		e.servePooling(w, r, &t, body, ep) // pooling.go
		return
	}
	req, err := parseRequest(ep.Kind, body, completions)
	if err == nil {
		err = req.checkN(&e.cfg.Faults.Payload)
	}
	if err == nil {
		err = e.resolveIDs(&t, req, r.Header, completions)
	}
	if err != nil {
		e.reject(w, &t, http.StatusBadRequest, err.Error())
		return
	}
	t.Stream = req.Stream
	if req.Stream {
		e.closeAfterStream(r, &t)
	}
	faults := e.cfg.Faults.draw(e.cfg.Params.Seed, t.ID)
	if faults.errStatus != 0 {
		t.Faults = append(t.Faults, FaultError)
		if faults.errStatus == http.StatusTooManyRequests || faults.errStatus == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "1")
		}
		e.rejectFault(w, &t, faults.errStatus, fmt.Sprintf("injected fault: %d %s", faults.errStatus, http.StatusText(faults.errStatus)))
		return
	}
	pd := e.payloadDrawOf(ep.Kind, &t, req.Stream, completions)

	s := newStream()
	s.id, s.chunkID = t.ID, t.ChunkID
	s.arrival = t.Arrival
	s.streaming = req.Stream
	s.wordBase = batch.HashString(t.ID)
	s.ans.base = s.wordBase
	s.ans.parts, s.ans.choices = pd.parts, choicesOf(ep.Kind, e.cfg.Faults.Payload.Choices)
	p := e.cfg.Params
	h := batch.NewHasher(p.KVBlockSize)
	prompt := 0
	if completions {
		var text string
		_ = json.Unmarshal(req.Prompt, &text) // checked by parseChatRequest
		prompt = promptTokens("", text, h)
	} else {
		var img imageUse
		prompt, t.TemplateTokens, img, err = chatTokensImages(p, req.Messages, h)
		t.Images, t.ImageTokens = img.images, img.tokens
		if err != nil {
			e.reject(w, &t, http.StatusBadRequest, err.Error())
			return
		}
		s.ans.reasoning = p.ReasoningTokens
		if name := req.toolName(); name != "" && e.drawToolCall(t.ID) {
			s.ans.tool = name
			s.ans.toolID = "call_" + hex.EncodeToString(binary.LittleEndian.AppendUint64(nil, batch.Mix64(s.wordBase^0x746f6f6c)))
		}
		e.renderAs(ep.Kind, &t, s)
	}
	t.PromptTokens = prompt
	if prompt == 0 {
		e.reject(w, &t, http.StatusBadRequest, "the prompt is empty (the built-in tokenizer counts whitespace-separated words)")
		return
	}
	if prompt >= p.MaxModelLen {
		e.rejectContext(w, &t, prompt) // llamacpp_conform.go
		return
	}
	maxTokens := p.MaxModelLen - prompt
	switch {
	case req.MaxCompletionTokens != nil:
		s.maxParam = *req.MaxCompletionTokens
	case req.MaxTokens != nil:
		s.maxParam = *req.MaxTokens
	}
	if s.maxParam > 0 {
		maxTokens = min(maxTokens, s.maxParam)
	}
	t.MaxTokens = maxTokens
	if req.Stream {
		// One flush time per token: size it once instead of growing it.
		t.TokenFlushes = make([]time.Duration, 0, min(maxTokens, 256))
	}
	s.seq = batch.Seq{
		ID:           t.ID,
		PromptLen:    prompt,
		PrefixHashes: h.Hashes(),
		MaxTokens:    maxTokens,
		MinTokens:    req.MinTokens,
		IgnoreEOS:    req.IgnoreEOS,
		Owner:        s,
	}
	var opts respOpts
	if so := req.StreamOptions; so != nil {
		opts.includeUsage = so.IncludeUsage
		opts.continuousUsage = so.IncludeUsage && so.ContinuousUsageStats
	}
	e.trace.event(evPreprocessingStart, s.chunkID, t.Arrival)
	e.submit(s, &t, req) // otlp.go
	if faults.slowFirstByte > 0 {
		t.Faults = append(t.Faults, FaultSlowFirstByte)
		if !sleepCtx(r, faults.slowFirstByte) {
			e.abortAndWait(s)
			t.Outcome, t.Error = OutcomeAborted, "client went away"
			t.Finish = e.now()
			e.finishTruth(&t, s, 0, batch.FinishAbort)
			return
		}
	}
	if req.Stream {
		e.serveStream(w, r, s, &t, opts, faults, pd, completions)
	} else {
		e.serveWhole(w, r, s, &t, completions)
	}
}

// readBody reads a request's body, at most maxBody bytes; false when it
// could not (the request is then rejected and recorded).
func (e *Engine) readBody(w http.ResponseWriter, r *http.Request, t *RequestTruth) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		e.reject(w, t, http.StatusBadRequest, fmt.Sprintf("read body: %v", err))
		return nil, false
	}
	if len(body) > maxBody {
		e.reject(w, t, http.StatusRequestEntityTooLarge, errBodyTooLarge.Error())
		return nil, false
	}
	t.BodyRead = e.now()
	return body, true
}

// drawToolCall decides whether a request offering tools gets a tool call.
func (e *Engine) drawToolCall(id string) bool {
	rate := e.cfg.Params.ToolCallRate
	if rate <= 0 {
		return false
	}
	u := float64(batch.Mix64(uint64(e.cfg.Params.Seed)^batch.HashString("tool_call\x00"+id))>>11) / (1 << 53)
	return u < rate
}

// sleepCtx waits d unless the client goes away first; false if it did.
func sleepCtx(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// resolveIDs picks the request id the way the dialect's engine does.
func (e *Engine) resolveIDs(t *RequestTruth, req *chatRequest, hdr http.Header, completions bool) error {
	prefix := "chatcmpl-"
	if completions {
		prefix = "cmpl-"
	}
	switch e.cfg.Dialect {
	case DialectSGLang:
		rid, err := ridString(req.RID)
		if err != nil {
			return err
		}
		if rid == "" {
			rid = e.ids.hex32()
		}
		t.ID, t.ChunkID = rid, rid
	case DialectVLLM:
		id := hdr.Get("X-Request-Id")
		if id == "" {
			id = req.RequestID
		}
		if id == "" {
			id = e.ids.hex16()
		}
		t.ID, t.ChunkID = id, prefix+id
	case DialectFastDeploy:
		id := req.RequestID
		if id == "" {
			t.ID = e.ids.uuid4()
			t.ChunkID = prefix + t.ID
			break
		}
		t.ID, t.ChunkID = id, id
		if !strings.HasPrefix(id, "chatcmpl-") && !strings.HasPrefix(id, "cmpl-") {
			t.ChunkID = prefix + id
		}
	case DialectLlamaCpp:
		// llama.cpp takes no request id: chatcmpl- and 32 random
		// alphanumerics, on /v1/completions too.
		t.ID = e.ids.alnum32()
		t.ChunkID = "chatcmpl-" + t.ID
	}
	return nil
}

// waitEvent blocks until the loop delivers, the client goes away, or the
// loop is gone. It reports whether the client went away.
func (e *Engine) waitEvent(r *http.Request, s *stream) (clientGone bool) {
	select {
	case <-s.notify:
		return false
	case <-r.Context().Done():
		return true
	case <-e.loopDone:
		return false
	}
}

// abortAndWait tells the loop to drop the request and waits until it has,
// so the loop-owned fields are safe to read.
func (e *Engine) abortAndWait(s *stream) {
	e.post(opAbort, s)
	e.waitFinal(s)
}

// waitFinal waits until the loop is done with the request (the loop-owned
// fields are then safe to read) and returns its final outcome.
func (e *Engine) waitFinal(s *stream) string {
	for {
		if _, final := s.take(nil); final != "" {
			return final
		}
		select {
		case <-s.notify:
		case <-e.loopDone:
			// The loop ended every request before it closed loopDone.
			if _, final := s.take(nil); final != "" {
				return final
			}
			return batch.FinishAbort
		}
	}
}

func (e *Engine) finishTruth(t *RequestTruth, s *stream, written int, reason string) {
	t.QueueEnter, t.QueueLeave = s.queueEnter, s.queueLeave
	t.PrefillStart, t.PrefillEnd = s.prefillStart, s.prefillEnd
	if s.delivered > 0 {
		t.DecodeEnd = s.lastDelivery
	}
	t.OutputTokens = written * s.ans.choiceCount()
	t.GeneratedTokens = s.seq.Output
	t.CachedTokens = s.seq.CachedTokens
	t.Preemptions = s.seq.Preemptions
	t.FinishReason = reason
	if t.FinishReason != batch.FinishAbort && t.FinishReason != "" && !slices.Contains(t.Faults, FaultStreamError) {
		t.FinishReason = s.ans.finishReason(reason, written)
	}
	if s.ans.reasoning > 0 {
		t.ReasoningTokens = s.ans.reasoningOf(written) * s.ans.choiceCount()
	}
	if c := s.ans.choiceCount(); c > 1 {
		t.Choices = c
	}
	if s.ans.calls(written) {
		t.ToolCall = s.ans.tool
	}
	e.spans.export(t, s.sampling) // otlp.go
	e.reqExport.write(t)
	e.truth.addRequest(*t)
}

// usageOf is the usage of a response after written tokens (in each of its
// choices).
func (e *Engine) usageOf(s *stream, written int) usage {
	return usage{
		prompt: s.seq.PromptLen, completion: written, cached: s.seq.CachedTokens,
		reasoning: s.ans.reasoningOf(written), details: s.ans.reasoning > 0,
	}.times(s.ans.choiceCount())
}

// timingsOf renders llama.cpp's timings of a finished request in whole
// microseconds, as its clock counts: prompt processing from the start of
// its prefill to its first token, generation from the first token to the
// last (at least 1 µs once a token came).
func timingsOf(s *stream) []byte {
	var promptMS, predictedMS float64
	if s.prefillEnd > 0 {
		promptMS = float64(wholeUS(s.prefillEnd-s.prefillStart)) / 1e3
	}
	if s.delivered > 0 {
		predictedMS = float64(max(wholeUS(s.lastDelivery-s.firstDelivery), 1)) / 1e3
	}
	return appendTimings(nil, s.seq.CachedTokens, s.seq.PromptLen-s.seq.CachedTokens, promptMS, s.seq.Output, predictedMS)
}

func (e *Engine) serveStream(w http.ResponseWriter, r *http.Request, s *stream, t *RequestTruth, opts respOpts, faults requestFaults, pd payloadDraw, completions bool) {
	rc := http.NewResponseController(w)
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	t.Status = http.StatusOK
	llama := e.cfg.Dialect == DialectLlamaCpp
	if pd.claim == ClaimBackwards {
		opts.continuousUsage = true // the running usage the final one goes below
	}
	sw := &sseWriter{e: e, w: w, rc: rc, r: r, s: s, t: t, opts: opts, faults: faults, pd: pd, completions: completions, llama: llama,
		enc: newEncoder(s.chunkID, e.cfg.Model, time.Now().Unix(), llama, completions, true),
		buf: make([]byte, 0, 1024), interval: max(e.cfg.Params.StreamInterval, 1)}
	sw.enc.msgs = e.newMessagesEncoder(t, s)
	if err := rc.Flush(); err != nil {
		sw.fail(OutcomeAborted, fmt.Sprintf("flush headers: %v", err))
		return
	}
	if final, ok := sw.relay(); ok {
		sw.end(final)
	}
}

// sseWriter is one streamed response in flight: serveStream's state, which
// its steps share. It is made once per request; nothing per token allocates
// beyond the truth's own slices.
type sseWriter struct {
	e           *Engine
	w           http.ResponseWriter
	rc          *http.ResponseController
	r           *http.Request
	s           *stream
	t           *RequestTruth
	opts        respOpts
	faults      requestFaults
	pd          payloadDraw
	completions bool
	llama       bool
	enc         encoder
	buf, ubuf   []byte
	interval    int // tokens per chunk (Params.StreamInterval)
	written     int // tokens sent
	held        int // tokens generated, not yet sent
	stalled     bool
	malformed   bool
}

// relay sends the tokens as the engine generates them, interval at a time,
// until the stream's final event: ok is false when the handler is done
// (the client left, a write failed, a fault ended the stream).
func (sw *sseWriter) relay() (final string, ok bool) {
	e, s := sw.e, sw.s
	var spare []int32
	for {
		if e.waitEvent(sw.r, s) {
			sw.fail(OutcomeAborted, "client went away")
			return "", false
		}
		pending, final := s.take(spare)
		for i, n := range pending {
			sw.held += int(n)
			last := final != "" && i == len(pending)-1
			if sw.written == 0 || sw.held >= sw.interval || last {
				if !sw.emit(last && final != batch.FinishAbort && final != finishRestart) {
					return "", false
				}
			}
		}
		spare = pending
		if final != "" {
			return final, true
		}
		select {
		case <-e.loopDone:
			if _, final = s.take(nil); final == "" {
				final = batch.FinishAbort
			}
			return final, true
		default:
		}
	}
}

// emit writes the held tokens as one chunk; false when the handler is done.
func (sw *sseWriter) emit(last bool) bool {
	e, s, t, faults := sw.e, sw.s, sw.t, &sw.faults
	n := sw.held
	if faults.stall > 0 && !sw.stalled && sw.written >= faults.after {
		sw.stalled = true
		t.Faults = append(t.Faults, FaultStall)
		if !sleepCtx(sw.r, faults.stall) {
			sw.fail(OutcomeAborted, "client went away during a stall")
			return false
		}
	}
	buf := sw.buf[:0]
	if sw.written == 0 && !sw.completions && s.ans.events == nil {
		buf = sw.ping(buf)
		for i := range s.ans.choiceCount() {
			buf = sw.enc.role(buf, i, sw.usageNow(0))
		}
	}
	if faults.malformed && !sw.malformed && sw.written >= faults.after {
		sw.malformed = true
		t.Faults = append(t.Faults, FaultMalformed)
		buf = append(buf, "data: {\"id\": \"broken\", \"choices\": [\n\n"...)
	}
	buf = sw.ping(buf)
	for i := range s.ans.choiceCount() {
		buf = sw.enc.tokens(buf, &s.ans, i, sw.written, sw.written+n, last, sw.usageNow(sw.written+n))
	}
	sw.buf = buf
	if _, err := sw.w.Write(buf); err != nil {
		sw.fail(OutcomeAborted, fmt.Sprintf("write: %v", err))
		return false
	}
	if err := sw.rc.Flush(); err != nil {
		sw.fail(OutcomeAborted, fmt.Sprintf("flush: %v", err))
		return false
	}
	sw.flushed(e.now(), n)
	sw.written += n
	sw.held = 0
	if faults.reset && sw.written >= faults.after {
		e.abortAndWait(s)
		sw.cut(OutcomeBroken, FaultReset, "injected fault: connection reset mid-stream")
	}
	if faults.streamError && sw.written >= faults.after {
		e.streamError(sw.w, sw.rc, s, t, sw.written, sw.ping)
		return false
	}
	return true
}

// flushed records in the truth that n more tokens reached the wire at at:
// the first token's, reasoning's, content's or tool call's flush, and each
// token's.
func (sw *sseWriter) flushed(at time.Duration, n int) {
	t, ans, written := sw.t, &sw.s.ans, sw.written
	if written == 0 {
		t.FirstTokenFlushed = at
	}
	if written < ans.reasoning && t.FirstReasoningFlushed == 0 {
		t.FirstReasoningFlushed = at
	}
	if written+n > ans.reasoning {
		switch {
		case sw.completions || ans.tool == "":
			if t.FirstContentFlushed == 0 {
				t.FirstContentFlushed = at
			}
		case t.FirstToolCallFlushed == 0:
			t.FirstToolCallFlushed = at
		}
	}
	for range n {
		t.TokenFlushes = append(t.TokenFlushes, at)
	}
	t.ChunkTokens = append(t.ChunkTokens, n)
}

// end finishes the stream after its final event: cut without [DONE] when
// the engine stopped or restarted, else the last tokens, the finish chunk
// (with usage and timings as the dialect and request ask), and [DONE].
func (sw *sseWriter) end(final string) {
	e, s, t, written := sw.e, sw.s, sw.t, sw.written
	switch final {
	case batch.FinishAbort:
		// The engine is stopping: cut the stream without [DONE].
		t.Outcome, t.Error = OutcomeAborted, "engine stopped"
		t.Finish = e.now()
		e.finishTruth(t, s, written, final)
		return
	case finishRestart:
		sw.cut(OutcomeBroken, FaultRestart, "engine restarted")
	}
	if sw.held > 0 && !sw.emit(true) {
		return
	}
	written = sw.written
	defer e.settle.exit(e.settle.enter())
	e.trace.event(evPostprocessingStart, s.chunkID, e.now())
	var timings []byte
	if sw.llama {
		timings = timingsOf(s)
	}
	reason := s.ans.finishReason(final, written)
	buf := sw.appendEnd(sw.ping(sw.buf[:0]), reason, written, timings)
	switch {
	case sw.faults.missingDone:
		t.Faults = append(t.Faults, FaultMissingDone)
	case e.cfg.Params.NoDone, s.ans.events != nil: // the Responses API has no [DONE]
	default:
		buf = sw.ping(buf)
		buf = append(buf, sw.enc.done()...)
		t.Done = true
	}
	_, werr := sw.w.Write(buf)
	if werr == nil {
		werr = sw.rc.Flush()
	}
	t.Finish = e.now()
	e.trace.event(evPostprocessingEnd, s.chunkID, t.Finish)
	t.Outcome = OutcomeOK
	if sw.faults.missingDone {
		t.Outcome = OutcomeBroken
	}
	if werr != nil {
		t.Outcome, t.Error = OutcomeAborted, fmt.Sprintf("write end of stream: %v", werr)
	}
	e.finishTruth(t, s, written, final)
}

// ping adds an SSE comment before an event when the engine sends them.
func (sw *sseWriter) ping(dst []byte) []byte {
	if !sw.e.cfg.Params.SSEPing {
		return dst
	}
	sw.t.Comments++
	return append(dst, ssePing...)
}

// usageNow is the usage of a chunk: continuous usage stats after n tokens.
func (sw *sseWriter) usageNow(n int) []byte {
	if !sw.opts.continuousUsage {
		return nil
	}
	sw.ubuf = sw.e.usageOf(sw.s, n).appendJSON(sw.ubuf[:0])
	return sw.ubuf
}

// fail ends the request, aborted: the engine stops generating it.
func (sw *sseWriter) fail(outcome, msg string) {
	sw.e.abortAndWait(sw.s)
	sw.t.Outcome, sw.t.Error = outcome, msg
	sw.t.Finish = sw.e.now()
	sw.e.finishTruth(sw.t, sw.s, sw.written, batch.FinishAbort)
}

// cut records the truth and closes the connection without ending the
// HTTP response, as a crash or a reset would.
func (sw *sseWriter) cut(outcome, fault, msg string) {
	t := sw.t
	if fault != "" {
		t.Faults = append(t.Faults, fault)
	}
	t.Outcome, t.Error = outcome, msg
	t.Finish = sw.e.now()
	sw.e.finishTruth(t, sw.s, sw.written, batch.FinishAbort)
	panic(http.ErrAbortHandler)
}

// streamError ends a stream with an error event after written tokens, as
// llama.cpp does when its output parser fails: the engine goes on generating
// the request to its end, unseen, and its truth is recorded then.
func (e *Engine) streamError(w http.ResponseWriter, rc *http.ResponseController, s *stream, t *RequestTruth, written int, ping func([]byte) []byte) {
	ep := e.settle.enter()
	msg := "injected fault: error event mid-stream"
	buf := ping(nil)
	switch {
	case s.ans.events != nil:
		buf = s.ans.events.errorEvent(buf, msg) // responses.go: the API's own shape
	case t.Endpoint == EndpointMessages && e.cfg.Faults.Payload.ErrorShape == "":
		buf = appendMessagesError(buf, msg) // the API's error event (messages.go)
	default:
		buf = append(buf, "data: "...)
		buf = append(buf, errorEvent(e.cfg.Faults.Payload.ErrorShape, e.cfg.Dialect == DialectLlamaCpp, http.StatusInternalServerError, msg)...)
		buf = append(buf, "\n\n"...)
		t.ErrorShape = e.cfg.Faults.Payload.ErrorShape
	}
	_, werr := w.Write(buf)
	if werr == nil {
		werr = rc.Flush()
	}
	t.Finish = e.now()
	t.Faults = append(t.Faults, FaultStreamError)
	t.Outcome, t.Error = OutcomeBroken, msg
	if werr != nil {
		t.Outcome, t.Error = OutcomeAborted, fmt.Sprintf("write error event: %v", werr)
	}
	e.inflight.Add(1)
	go func() {
		defer e.inflight.Add(-1)
		defer e.settle.exit(ep)
		final := e.waitFinal(s)
		e.finishTruth(t, s, written, final)
	}()
}

func (e *Engine) serveWhole(w http.ResponseWriter, r *http.Request, s *stream, t *RequestTruth, completions bool) {
	var final string
	for final == "" {
		if e.waitEvent(r, s) {
			e.abortAndWait(s)
			t.Outcome, t.Error = OutcomeAborted, "client went away"
			t.Finish = e.now()
			e.finishTruth(t, s, 0, batch.FinishAbort)
			return
		}
		_, final = s.take(nil)
		if final == "" {
			select {
			case <-e.loopDone:
				final = batch.FinishAbort
			default:
			}
		}
	}
	if final == batch.FinishAbort || final == finishRestart {
		if final == finishRestart {
			t.Faults = append(t.Faults, FaultRestart)
		}
		e.reject(w, t, http.StatusServiceUnavailable, "engine stopped")
		return
	}
	defer e.settle.exit(e.settle.enter())
	e.trace.event(evPostprocessingStart, s.chunkID, e.now())
	n := s.seq.Output
	llama := e.cfg.Dialect == DialectLlamaCpp
	var timings []byte
	if llama {
		timings = timingsOf(s)
	}
	enc := newEncoder(s.chunkID, e.cfg.Model, time.Now().Unix(), llama, completions, false)
	enc.msgs = e.newMessagesEncoder(t, s)
	body := enc.whole(nil, &s.ans, n, s.ans.choiceCount(), s.ans.finishReason(final, n), e.usageOf(s, n).appendJSON(nil), timings)
	if s.ans.events != nil {
		body = s.ans.events.whole(nil, &s.ans, s.ans.finishReason(final, n), n, e.usageOf(s, n).responsesJSON(nil))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, werr := w.Write(body)
	if werr == nil {
		werr = http.NewResponseController(w).Flush()
	}
	t.Status = http.StatusOK
	t.Finish = e.now()
	e.trace.event(evPostprocessingEnd, s.chunkID, t.Finish)
	t.FirstTokenFlushed = t.Finish
	if s.ans.reasoningOf(n) > 0 {
		t.FirstReasoningFlushed = t.Finish
	}
	if n > s.ans.reasoning {
		if s.ans.calls(n) {
			t.FirstToolCallFlushed = t.Finish
		} else {
			t.FirstContentFlushed = t.Finish
		}
	}
	t.TokenFlushes = make([]time.Duration, n)
	for i := range t.TokenFlushes {
		t.TokenFlushes[i] = t.Finish
	}
	t.Outcome = OutcomeOK
	if werr != nil {
		t.Outcome, t.Error = OutcomeAborted, fmt.Sprintf("write response: %v", werr)
	}
	e.finishTruth(t, s, n, final)
}

// idSource makes request ids when the client sent none: unique within the
// process, reproducible for a seed.
type idSource struct {
	seed uint64
	n    atomic.Uint64
}

func newIDSource(seed int64) idSource { return idSource{seed: uint64(seed)} }

func (g *idSource) next128() [16]byte {
	n := g.n.Add(1)
	var b [16]byte
	a, c := batch.Mix64(g.seed^n), batch.Mix64(g.seed+n*0x9e3779b97f4a7c15)
	for i := range 8 {
		b[i] = byte(a >> (8 * i))
		b[8+i] = byte(c >> (8 * i))
	}
	return b
}

// hex32 is 32 hex digits, like Python's uuid4().hex.
func (g *idSource) hex32() string {
	b := g.next128()
	return hex.EncodeToString(b[:])
}

// alnum32 is 32 random alphanumerics, as llama.cpp's completion ids.
func (g *idSource) alnum32() string {
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	a, b := g.next128(), g.next128()
	out := make([]byte, 32)
	for i := range 16 {
		out[i] = chars[int(a[i])%len(chars)]
		out[16+i] = chars[int(b[i])%len(chars)]
	}
	return string(out)
}

// uuid4 is a dashed version-4 UUID, like Python's str(uuid4()).
func (g *idSource) uuid4() string {
	b := g.next128()
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
