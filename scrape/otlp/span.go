// Package otlp receives OpenTelemetry trace spans from an engine (OTLP over
// HTTP/protobuf and over gRPC, decoded with the official OTLP definitions)
// and keeps them as flat Spans, one JSON line each, so a report can join
// them to the client's records by trace id and request id (package
// report/timeline). It does not join or aggregate. Decision 1900.
package otlp

import (
	"encoding/hex"
	"math"
	"strconv"
)

// Span is one received span, flattened: the resource's service name, the
// span's ids as lowercase hex (as OTLP/JSON and trace viewers write them),
// its times in Unix nanoseconds (the exporter's wall clock), and its scalar
// attributes. Array and map attribute values are dropped (no engine span
// llmbench reads carries one).
type Span struct {
	TraceID      string         `json:"trace_id"`
	SpanID       string         `json:"span_id"`
	ParentSpanID string         `json:"parent_span_id,omitempty"`
	Name         string         `json:"name"`
	Kind         string         `json:"kind,omitempty"` // "server", "client", "internal", "producer", "consumer"
	Service      string         `json:"service,omitempty"`
	Start        int64          `json:"start_unix_ns"`
	End          int64          `json:"end_unix_ns"`
	Attrs        map[string]any `json:"attrs,omitempty"` // string, bool, int64 or float64 values (float64 after a JSON round trip)
}

// Float is the attribute key as a number (an int or double value, or a
// string holding one); ok is false when it is absent or not a finite number.
func (s *Span) Float(key string) (float64, bool) {
	var f float64
	switch v := s.Attrs[key].(type) {
	case float64:
		f = v
	case int64:
		f = float64(v)
	case string:
		p, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, false
		}
		f = p
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// String is the attribute key as a string ("" when absent or not a string).
func (s *Span) String(key string) string {
	v, _ := s.Attrs[key].(string)
	return v
}

// hexID is an id's bytes as lowercase hex; "" for an empty or all-zero id
// (OTLP's "no parent").
func hexID(b []byte) string {
	for _, c := range b {
		if c != 0 {
			return hex.EncodeToString(b)
		}
	}
	return ""
}
