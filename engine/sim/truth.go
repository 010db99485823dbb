package sim

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// RequestTruth is what the engine knows happened to one request. Every time
// is an offset on the engine's own monotonic clock (time.Since(engine
// start)); compare differences, never absolute values, with a client's clock.
// A zero time means "did not happen".
type RequestTruth struct {
	ID       string `json:"id"`                  // the id the client sent (dialect body field or header, see Config), or a generated one
	ChunkID  string `json:"chunk_id"`            // the id the engine put in the chunks' "id"
	HeaderID string `json:"header_id,omitempty"` // the X-Request-Id header, when sent
	Stream   bool   `json:"stream"`
	Endpoint string `json:"endpoint"` // the endpoint's ServerPath: EndpointChat, EndpointCompletions, EndpointResponses, EndpointMessages…
	// ConnRequest is the request's rank on its connection (1 = the
	// connection's first), and ConnClosed says the engine closed the
	// connection after this response, ConnClose why: ConnCloseMax
	// (Params.KeepAliveMax reached, the response said Connection: close) or
	// ConnCloseAfterStream (Params.CloseAfterStream: closed without a word).
	// Known only when the engine serves its own socket (Start).
	ConnRequest int    `json:"conn_request,omitempty"`
	ConnClosed  bool   `json:"conn_closed,omitempty"`
	ConnClose   string `json:"conn_close,omitempty"`

	Arrival time.Duration `json:"arrival_ns"` // the handler started on the request
	// BodyRead is when its body had been read whole: a large body (images)
	// takes the engine measurable time to receive after Arrival, time the
	// client counts before its TTFT starts (it starts at the body's last
	// byte written).
	BodyRead          time.Duration   `json:"body_read_ns,omitempty"`
	Submitted         time.Duration   `json:"submitted_ns"`           // parsed and tokenized, handed to the scheduler: vLLM's arrival_time, its span's start (otlp.go)
	QueueEnter        time.Duration   `json:"queue_enter_ns"`         // the scheduler put it in the waiting queue
	QueueLeave        time.Duration   `json:"queue_leave_ns"`         // it first entered a forward pass
	PrefillStart      time.Duration   `json:"prefill_start_ns"`       // start of its first prefill pass
	PrefillEnd        time.Duration   `json:"prefill_end_ns"`         // end of the pass that finished its first prefill (and made the first token)
	FirstTokenFlushed time.Duration   `json:"first_token_flushed_ns"` // the chunk with the first content token was written and flushed
	Finish            time.Duration   `json:"finish_ns"`              // the last bytes (data: [DONE], or the JSON body) were flushed
	TokenFlushes      []time.Duration `json:"token_flushes_ns"`       // flush time of every generated token's chunk, first included
	// ChunkTokens is the number of tokens each streamed chunk carried, in
	// order: one per forward pass, 1 + accepted drafts with speculative
	// decoding, at least Params.StreamInterval when that coalesces them.
	ChunkTokens []int `json:"chunk_tokens,omitempty"`
	// The first chunk carrying reasoning (delta.reasoning_content), a tool
	// call (delta.tool_calls) or content (delta.content, or a completion's
	// text) was flushed; FirstTokenFlushed is the earliest of them.
	FirstReasoningFlushed time.Duration `json:"first_reasoning_flushed_ns,omitempty"`
	FirstToolCallFlushed  time.Duration `json:"first_tool_call_flushed_ns,omitempty"`
	FirstContentFlushed   time.Duration `json:"first_content_flushed_ns,omitempty"`
	// DecodeEnd is the end of the pass that made the request's last token
	// (llama.cpp's timings.predicted_ms = DecodeEnd − PrefillEnd).
	DecodeEnd time.Duration `json:"decode_end_ns,omitempty"`

	PromptTokens int `json:"prompt_tokens"`
	// Inputs is how many inputs an embeddings or rerank request carried
	// (each one engine request, pooling.go), Results how many the answer
	// gave back; 0 for generation.
	Inputs       int `json:"inputs,omitempty"`
	Results      int `json:"results,omitempty"`
	OutputTokens int `json:"output_tokens"` // tokens sent to the client
	// GeneratedTokens is the tokens the engine generated for the request:
	// OutputTokens, unless the stream ended early (an error event mid-stream
	// leaves the engine generating to the end).
	GeneratedTokens int `json:"generated_tokens"`
	// TemplateTokens is the part of PromptTokens the chat template added.
	TemplateTokens int `json:"template_tokens,omitempty"`
	// Images is how many images the request carried, and ImageTokens the
	// part of PromptTokens they were charged (images.go's model).
	Images      int `json:"images,omitempty"`
	ImageTokens int `json:"image_tokens,omitempty"`
	// ReasoningTokens is the part of OutputTokens sent as reasoning.
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
	// ToolCall is the function the answer called ("" = none); its arguments
	// carry the tokens after the reasoning.
	ToolCall     string `json:"tool_call,omitempty"`
	CachedTokens int    `json:"cached_tokens"`
	MaxTokens    int    `json:"max_tokens"`
	Preemptions  int    `json:"preemptions"`

	FinishReason string `json:"finish_reason,omitempty"` // stop | length | tool_calls | abort: what the client was told (the engine's reason after a mid-stream error)
	// Done says a stream ended with "data: [DONE]".
	Done bool `json:"done,omitempty"`
	// Comments is the number of SSE comment lines (": ping") written.
	Comments int    `json:"comments,omitempty"`
	Status   int    `json:"status"`  // HTTP status sent
	Outcome  string `json:"outcome"` // see the Outcome constants
	Error    string `json:"error,omitempty"`
	// Faults lists the faults applied to this request (see Faults).
	Faults []string `json:"faults,omitempty"`

	// Traceparent is the W3C traceparent header, when sent: the parent of
	// the request's llm_request span (otlp.go).
	Traceparent string `json:"traceparent,omitempty"`

	// What the payload faults sent (PayloadFaults). Choices is how many
	// choices the response carried when more than one
	// (faults.payload.choices): OutputTokens is then their sum,
	// TokenFlushes and ChunkTokens each choice's (the choices go in
	// lockstep).
	Choices int `json:"choices,omitempty"`
	// ErrorShape is the shape of the error body or event sent ("" =
	// the dialect's own).
	ErrorShape string `json:"error_shape,omitempty"`
	// UsageClaim is the kind of usage claim the stream made ("" = a true
	// usage).
	UsageClaim string `json:"usage_claim,omitempty"`
	// ChunksAfterFinish is how many content chunks followed the finish
	// chunk; they are not counted in OutputTokens, TokenFlushes or
	// ChunkTokens.
	ChunksAfterFinish int `json:"chunks_after_finish,omitempty"`
}

// Outcomes of a request.
const (
	OutcomeOK       = "ok"       // answered in full
	OutcomeRejected = "rejected" // answered with an error status before any generation
	OutcomeAborted  = "aborted"  // the client went away, or the engine stopped, before the end
	OutcomeBroken   = "broken"   // a fault broke the response on purpose
)

// StepTruth is one forward pass of the scheduler.
type StepTruth struct {
	Index         int           `json:"index"`
	Start         time.Duration `json:"start_ns"`
	End           time.Duration `json:"end_ns"`
	Modeled       time.Duration `json:"modeled_ns"` // the duration the performance model asked for
	BatchSize     int           `json:"batch_size"` // sequences in the pass
	DecodeSeqs    int           `json:"decode_seqs"`
	PrefillTokens int           `json:"prefill_tokens"`
	DecodeTokens  int           `json:"decode_tokens"`
	PrefillDone   int           `json:"prefill_done"`
	Admitted      int           `json:"admitted"`
	Preempted     int           `json:"preempted"`
	Finished      int           `json:"finished"`
	Running       int           `json:"running"` // after the pass
	Waiting       int           `json:"waiting"` // after the pass
	KVUsedBlocks  int           `json:"kv_used_blocks"`
	KVUsage       float64       `json:"kv_usage"`
}

// truthLog keeps the ground truth in memory and appends it to JSONL files.
type truthLog struct {
	mu       sync.Mutex
	requests []RequestTruth
	steps    []StepTruth
	reqFile  *os.File
	stepFile *os.File
	// Set at open and never changed, so writers may read them unlocked to
	// encode outside the lock.
	reqJSON, stepJSON bool
	maxSteps          int
	maxReqs           int
	dropped           int
	err               error // first write error, reported by close
}

func openTruthLog(reqPath, stepPath string, maxSteps, maxReqs int) (*truthLog, error) {
	t := &truthLog{maxSteps: maxSteps, maxReqs: maxReqs}
	open := func(p string) (*os.File, error) {
		if p == "" {
			return nil, nil
		}
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("open ground-truth file: %w", err)
		}
		return f, nil
	}
	var err error
	if t.reqFile, err = open(reqPath); err != nil {
		return nil, err
	}
	if t.stepFile, err = open(stepPath); err != nil {
		t.reqFile.Close()
		return nil, err
	}
	t.reqJSON, t.stepJSON = t.reqFile != nil, t.stepFile != nil
	return t, nil
}

func (t *truthLog) addRequest(r RequestTruth) {
	var line []byte
	if t.reqJSON {
		line, _ = json.Marshal(r)
		line = append(line, '\n')
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.requests) < t.maxReqs {
		t.requests = append(t.requests, r)
	} else {
		t.dropped++
	}
	if line != nil && t.reqFile != nil && t.err == nil {
		// One write per line: a crash loses nothing already finished.
		if _, err := t.reqFile.Write(line); err != nil {
			t.err = fmt.Errorf("write ground truth %s: %w", t.reqFile.Name(), err)
		}
	}
}

func (t *truthLog) addStep(s StepTruth) {
	var line []byte
	if t.stepJSON {
		line, _ = json.Marshal(s)
		line = append(line, '\n')
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.steps) < t.maxSteps {
		t.steps = append(t.steps, s)
	}
	if line != nil && t.stepFile != nil && t.err == nil {
		if _, err := t.stepFile.Write(line); err != nil {
			t.err = fmt.Errorf("write step truth %s: %w", t.stepFile.Name(), err)
		}
	}
}

func (t *truthLog) snapshot() []RequestTruth {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]RequestTruth, len(t.requests))
	copy(out, t.requests)
	return out
}

func (t *truthLog) droppedCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dropped
}

func (t *truthLog) stepSnapshot() []StepTruth {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]StepTruth, len(t.steps))
	copy(out, t.steps)
	return out
}

func (t *truthLog) close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	err := t.err
	for _, f := range []*os.File{t.reqFile, t.stepFile} {
		if f == nil {
			continue
		}
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close ground truth: %w", cerr)
		}
	}
	t.reqFile, t.stepFile = nil, nil
	return err
}
