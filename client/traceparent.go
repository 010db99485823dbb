package client

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"strings"
)

// TraceparentHeader is the W3C Trace Context header every request carries
// (decision 1900): an engine that traces (vLLM's --otlp-traces-endpoint,
// SGLang's tracing, the built-in engine) parents its request span on it, so
// the spans it exports join the client's records by trace id.
const TraceparentHeader = "traceparent"

// TraceIDs are the trace id and parent span id llmbench sends for the
// request id in the run whose clock started at startNanos (Config.Start,
// Unix nanoseconds): the first 16 and the next 8 bytes of SHA-256 over
// both, so a rerun of the same records derives the same ids and two runs
// never share one. W3C forbids an all-zero id; a hash that gives one (2^-128)
// gets its last bit set.
func TraceIDs(startNanos int64, id string) (traceID [16]byte, spanID [8]byte) {
	h := sha256.New()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(startNanos))
	h.Write(b[:])
	h.Write([]byte(id))
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	copy(traceID[:], sum[:16])
	copy(spanID[:], sum[16:24])
	if traceID == ([16]byte{}) {
		traceID[15] = 1
	}
	if spanID == ([8]byte{}) {
		spanID[7] = 1
	}
	return traceID, spanID
}

// Traceparent is the header value for those ids: version 00, sampled.
func Traceparent(traceID [16]byte, spanID [8]byte) string {
	b := make([]byte, 0, 55)
	b = append(b, "00-"...)
	b = hex.AppendEncode(b, traceID[:])
	b = append(b, '-')
	b = hex.AppendEncode(b, spanID[:])
	b = append(b, "-01"...)
	return string(b)
}

// setTraceparent puts the request's traceparent on h and its trace id (32
// lowercase hex digits, as OTLP/JSON and every trace viewer write it) on
// rec. Once per request, never per chunk. A traceparent in Config.Headers
// replaces this one on the wire (the sender sets those after), and then
// the record's trace id is the one that header carries.
func (c *Client) setTraceparent(h http.Header, rec *Record) {
	for k, v := range c.cfg.Headers {
		if strings.EqualFold(k, TraceparentHeader) {
			rec.TraceID = traceIDOf(v)
			return
		}
	}
	tid, sid := TraceIDs(c.cfg.Start.UnixNano(), rec.ID)
	h.Set(TraceparentHeader, Traceparent(tid, sid))
	rec.TraceID = hex.EncodeToString(tid[:])
}

// traceIDOf is the trace id field of a traceparent value, "" when it is not
// one (wrong length or separators, not lowercase hex).
func traceIDOf(v string) string {
	if len(v) < 55 || v[2] != '-' || v[35] != '-' || v[52] != '-' {
		return ""
	}
	id := v[3:35]
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return ""
		}
	}
	return id
}
