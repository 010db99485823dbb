package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"math"
	"net/http"
	"strconv"

	"github.com/llmbench-org/llmbench/engine/sim/batch"
)

// PayloadFaults change what a stream's chunks say: shapes a client must read
// (content as parts arrays, errors in any shape) and violations it must flag
// rather than use (usage claims beyond the request, chunks after
// finish_reason). The zero value sends the dialect's own chunks. Every one
// applied is in RequestTruth (Faults, and the fields that say what was sent),
// so a test checks the client against it (docs/decisions/0213).
type PayloadFaults struct {
	// ContentParts is the fraction of chat requests whose content is sent
	// as an array of parts, [{"type":"text","text":"…"}], in every delta
	// (and in the message of a whole response).
	ContentParts float64 `yaml:"content_parts"`
	// ErrorShape is the shape of the error bodies of faults.error_rate and
	// of the error events of faults.stream_error_rate (ErrorShapes): ""
	// is the dialect's own.
	ErrorShape string `yaml:"error_shape"`
	// UsageClaim makes a fraction of streams claim a usage no request
	// allows, in a final usage chunk sent whatever stream_options asked.
	UsageClaim UsageClaim `yaml:"usage_claim"`
	// ChunksAfterFinish sends content chunks after a choice's
	// finish_reason (then the usage and [DONE]), on a fraction of streams.
	ChunksAfterFinish ChunksAfterFinish `yaml:"chunks_after_finish"`
	// Choices (2 to MaxChoices; 0 = off) answers every request with this
	// many choices, index 0 to Choices−1, whatever n it asked (and then
	// any n from 1 to MaxChoices is accepted; without it n must be 1). The
	// choices are one sequence sent Choices times in lockstep: each
	// choice's tokens come in the same chunks at the same times
	// (RequestTruth.TokenFlushes and ChunkTokens are each choice's), usage
	// counts all of them, and the engine's forward passes and /metrics
	// count one (the performance model has no notion of n).
	Choices int `yaml:"choices"`
}

// MaxChoices is the most choices the engine answers (faults.payload.choices,
// and a request's n).
const MaxChoices = 64

// UsageClaim is a usage that breaks the protocol: Kind "huge"
// (completion_tokens 10¹⁸), "negative" (completion_tokens below zero) or
// "backwards" (a running usage in every chunk, then a final usage below
// the last of them), on a Rate of streams.
type UsageClaim struct {
	Kind string  `yaml:"kind"`
	Rate float64 `yaml:"rate"`
}

// ChunksAfterFinish is Count content chunks after the finish chunk, on a
// Rate of streams.
type ChunksAfterFinish struct {
	Count int     `yaml:"count"`
	Rate  float64 `yaml:"rate"`
}

// Payload fault names, as they appear in RequestTruth.Faults.
const (
	FaultContentParts      = "content_parts"
	FaultUsageClaim        = "usage_claim"
	FaultChunksAfterFinish = "chunks_after_finish"
)

// Usage claim kinds.
const (
	ClaimHuge      = "huge"
	ClaimNegative  = "negative"
	ClaimBackwards = "backwards"
)

// HugeClaim is the completion_tokens a "huge" usage claim sends.
const HugeClaim = 1_000_000_000_000_000_000

// ErrorShapes are the error_shape values: OpenAI's {"error":{…}} ("openai"),
// vLLM's unwrapped {"object":"error","message":…} ("bare"), FastAPI's
// {"detail":"…"} ("detail"), TGI's {"error":"…"} ("string"), OpenAI's
// pretty-printed over several lines ("indented"; one line of spaces and tabs
// in a stream event, whose data is one line), plain text ("text") and a
// proxy's HTML page ("html").
func ErrorShapes() []string {
	return []string{"openai", "bare", "detail", "string", "indented", "text", "html"}
}

// maxChunksAfterFinish bounds chunks_after_finish.count.
const maxChunksAfterFinish = 1000

func (p PayloadFaults) validate() error {
	var errs []error
	rate := func(name string, v float64) {
		if v < 0 || v > 1 || math.IsNaN(v) {
			errs = append(errs, fmt.Errorf("faults.payload.%s must be in [0, 1], got %g", name, v))
		}
	}
	rate("content_parts", p.ContentParts)
	rate("usage_claim.rate", p.UsageClaim.Rate)
	rate("chunks_after_finish.rate", p.ChunksAfterFinish.Rate)
	if p.ErrorShape != "" && !contains(ErrorShapes(), p.ErrorShape) {
		errs = append(errs, fmt.Errorf("faults.payload.error_shape %q: want one of %v", p.ErrorShape, ErrorShapes()))
	}
	switch k := p.UsageClaim.Kind; {
	case k == "" && p.UsageClaim.Rate > 0:
		errs = append(errs, errors.New("faults.payload.usage_claim.rate is set but kind is empty (huge, negative or backwards)"))
	case k != "" && k != ClaimHuge && k != ClaimNegative && k != ClaimBackwards:
		errs = append(errs, fmt.Errorf("faults.payload.usage_claim.kind %q: want huge, negative or backwards", k))
	}
	if p.Choices != 0 && (p.Choices < 2 || p.Choices > MaxChoices) {
		errs = append(errs, fmt.Errorf("faults.payload.choices must be 0 (off) or in [2, %d], got %d", MaxChoices, p.Choices))
	}
	switch c := p.ChunksAfterFinish; {
	case c.Count < 0 || c.Count > maxChunksAfterFinish:
		errs = append(errs, fmt.Errorf("faults.payload.chunks_after_finish.count must be in [0, %d], got %d", maxChunksAfterFinish, c.Count))
	case c.Count == 0 && c.Rate > 0:
		errs = append(errs, errors.New("faults.payload.chunks_after_finish.rate is set but count is 0"))
	}
	return errors.Join(errs...)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// payloadDraw is what the payload faults decided for one request.
type payloadDraw struct {
	parts       bool
	claim       string // "" = none
	afterFinish int
}

// draw decides the payload faults of one request, from the same (seed,
// id, fault) hash as Faults.draw.
func (p *PayloadFaults) draw(seed int64, id string) payloadDraw {
	hit := func(kind string, rate float64) bool {
		if rate <= 0 {
			return false
		}
		u := float64(batch.Mix64(uint64(seed)^batch.HashString(kind+"\x00"+id))>>11) / (1 << 53)
		return u < rate
	}
	var d payloadDraw
	d.parts = hit(FaultContentParts, p.ContentParts)
	if hit(FaultUsageClaim, p.UsageClaim.Rate) {
		d.claim = p.UsageClaim.Kind
	}
	if hit(FaultChunksAfterFinish, p.ChunksAfterFinish.Rate) {
		d.afterFinish = p.ChunksAfterFinish.Count
	}
	return d
}

// mark lists the drawn faults in the truth (the ones that change a stream;
// content parts change a whole response too).
func (d payloadDraw) mark(t *RequestTruth, stream bool) {
	if d.parts {
		t.Faults = append(t.Faults, FaultContentParts)
	}
	if !stream {
		return
	}
	if d.claim != "" {
		t.Faults = append(t.Faults, FaultUsageClaim)
		t.UsageClaim = d.claim
	}
	if d.afterFinish > 0 {
		t.Faults = append(t.Faults, FaultChunksAfterFinish)
		t.ChunksAfterFinish = d.afterFinish
	}
}

// claimedUsage is the usage a claim sends for a stream of written tokens
// (per choice, of choices), its prompt and cached tokens as they are.
func claimedUsage(kind string, u usage) usage {
	switch kind {
	case ClaimHuge:
		u.completion = HugeClaim
	case ClaimNegative:
		u.completion = -max(u.completion, 1)
	case ClaimBackwards:
		u.completion /= 2 // below the running usage of the last chunk
	}
	return u
}

// errorBody is an error answer's body in shape ("" = OpenAI's), with its
// content type.
func errorBody(shape string, status int, msg string) (contentType string, body []byte) {
	switch shape {
	case "bare":
		b, _ := json.Marshal(map[string]any{"object": "error", "message": msg, "type": errorType(status), "param": nil, "code": status})
		return "application/json", append(b, '\n')
	case "detail":
		b, _ := json.Marshal(map[string]any{"detail": msg})
		return "application/json", append(b, '\n')
	case "string":
		b, _ := json.Marshal(map[string]any{"error": msg, "error_type": errorType(status)})
		return "application/json", append(b, '\n')
	case "indented":
		b, _ := json.MarshalIndent(apiError{Error: apiErrorBody{Message: msg, Type: errorType(status), Code: status}}, "", "  ")
		return "application/json", append(b, '\n')
	case "text":
		return "text/plain; charset=utf-8", []byte(msg + "\n")
	case "html":
		title := strconv.Itoa(status) + " " + http.StatusText(status)
		return "text/html; charset=utf-8", []byte("<!DOCTYPE html>\n<html>\n<head><title>" + title + "</title></head>\n<body>\n<center><h1>" +
			title + "</h1></center>\n<p>" + html.EscapeString(msg) + "</p>\n<hr><center>nginx</center>\n</body>\n</html>\n")
	}
	return "application/json", errorJSON(status, msg)
}

// errorEvent is the data of an error event in shape (one line: an SSE data
// field holds no newline), "" being the dialect's own.
func errorEvent(shape string, llama bool, status int, msg string) []byte {
	switch shape {
	case "":
		if llama {
			b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": status, "message": msg, "type": "server_error"}})
			return b
		}
		b := errorJSON(status, msg)
		return b[:len(b)-1]
	case "indented":
		m, _ := json.Marshal(msg)
		return []byte("{ \"error\" :\t{ \"message\" : " + string(m) + " ,\t\"type\" : \"" + errorType(status) + "\" , \"code\" : " + strconv.Itoa(status) + " } }")
	case "html":
		title := strconv.Itoa(status) + " " + http.StatusText(status)
		return []byte("<html><head><title>" + title + "</title></head><body><h1>" + title + "</h1><p>" + html.EscapeString(msg) + "</p></body></html>")
	}
	_, b := errorBody(shape, status, msg)
	return b[:len(b)-1]
}

// rejectFault answers an error_rate fault in the payload's error shape and
// records it, as reject does.
func (e *Engine) rejectFault(w http.ResponseWriter, t *RequestTruth, status int, msg string) {
	defer e.settle.exit(e.settle.enter())
	shape := e.cfg.Faults.Payload.ErrorShape
	ct, body := errorBody(shape, status, msg)
	if shape == "" && t.Endpoint == EndpointMessages {
		body = messagesErrorJSON(status, msg)
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	_, _ = w.Write(body)
	t.Status = status
	t.Outcome = OutcomeRejected
	t.Error = msg
	t.ErrorShape = shape
	t.Finish = e.now()
	e.truth.addRequest(*t)
}

// payloadDraw decides a request's payload faults and lists them in its
// truth: content parts are for chat only, usage claims and chunks after the
// finish for streams only.
func (e *Engine) payloadDraw(t *RequestTruth, stream, completions bool) payloadDraw {
	seed := e.cfg.Params.Seed
	if e.cfg.Faults.Seed != 0 {
		seed = e.cfg.Faults.Seed
	}
	d := e.cfg.Faults.Payload.draw(seed, t.ID)
	d.parts = d.parts && !completions
	if t.Endpoint == EndpointMessages {
		d.parts, d.claim = false, "" // OpenAI's shapes: the Messages API has no content parts and no usage chunk
	}
	if !stream {
		d.claim, d.afterFinish = "", 0
	}
	d.mark(t, stream)
	return d
}

// appendEnd appends the end of a stream after its last tokens: each
// choice's finish chunk, the chunks after the finish
// (faults.payload.chunks_after_finish), and the usage chunk when the
// request asked for usage or a usage claim is made. llama.cpp ends a
// completion with the usage and timings in the finish chunk.
func (sw *sseWriter) appendEnd(buf []byte, reason string, written int, timings []byte) []byte {
	if sw.s.ans.events != nil {
		return sw.respEnd(buf, reason, written)
	}
	e, s, pd := sw.e, sw.s, sw.pd
	final := e.usageOf(s, written)
	if pd.claim != "" {
		final = claimedUsage(pd.claim, final)
	}
	usageChunk := sw.opts.includeUsage || pd.claim != ""
	n := s.ans.choiceCount()
	for i := range n {
		var u, tm []byte
		switch last := i == n-1; {
		case sw.llama && sw.completions:
			if last {
				u, tm = final.appendJSON(nil), timings
			}
		case usageChunk:
			u = sw.usageNow(written)
		case last:
			tm = timings
		}
		if i > 0 {
			buf = sw.ping(buf)
		}
		buf = sw.enc.finish(buf, i, reason, u, tm)
	}
	for k := range pd.afterFinish {
		buf = sw.ping(buf)
		buf = sw.enc.tokens(buf, &s.ans, 0, written+k, written+k+1, false, nil)
	}
	if usageChunk && !(sw.llama && sw.completions) {
		buf = sw.ping(buf)
		buf = sw.enc.usage(buf, final.appendJSON(sw.ubuf[:0]), timings)
	}
	return buf
}
