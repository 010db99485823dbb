package otlp

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// OTLP/JSON (the OTLP specification's "JSON Protobuf Encoding") is the
// protobuf JSON mapping with one difference that matters: trace and span
// ids are hex strings, where the mapping reads bytes as base64. A hex id
// is made of base64's characters, so protojson alone would not refuse it:
// it would decode 32 hex characters into 24 wrong bytes. DecodeJSON
// therefore rewrites each id from hex to base64 first, then decodes with
// the official protojson, which reads both lowerCamelCase and the original
// field names, int64 values as strings or numbers, enums as integers or
// names, and (as the specification asks of receivers) ignores unknown
// fields.

// idFields are the fields of a span (and of its links) that hold ids, as
// OTLP/JSON and the original field names spell them.
var idFields = []string{"traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id"}

// DecodeJSON decodes an OTLP/HTTP JSON body (an ExportTraceServiceRequest).
// An id that is not hex becomes an empty one, so its span is rejected
// (counted with its reason) rather than the whole export refused; an error
// means the body is not an export at all.
func DecodeJSON(body []byte) (Decoded, error) {
	if len(body) > MaxBodyBytes {
		return Decoded{}, ErrTooLarge
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // int64 nanoseconds stay exact through the rewrite
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return Decoded{}, fmt.Errorf("otlp: not OTLP/JSON: %w", err)
	}
	for _, rs := range list(doc, "resourceSpans", "resource_spans") {
		for _, ss := range list(rs, "scopeSpans", "scope_spans") {
			for _, sp := range list(ss, "spans") {
				hexToBase64(sp)
				for _, l := range list(sp, "links") {
					hexToBase64(l)
				}
			}
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return Decoded{}, fmt.Errorf("otlp: not OTLP/JSON: %w", err)
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, &req); err != nil {
		return Decoded{}, fmt.Errorf("otlp: not an ExportTraceServiceRequest: %w", err)
	}
	return Flatten(&req), nil
}

// list is the array under the first of keys an object has, as objects;
// nil when it has none (protojson then says what is wrong with it).
func list(v any, keys ...string) []map[string]any {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	for _, k := range keys {
		arr, ok := obj[k].([]any)
		if !ok {
			continue
		}
		out := make([]map[string]any, 0, len(arr))
		for _, e := range arr {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

// hexToBase64 rewrites an object's hex ids as the protobuf JSON mapping
// reads bytes; an id that is not hex becomes empty.
func hexToBase64(obj map[string]any) {
	for _, k := range idFields {
		s, ok := obj[k].(string)
		if !ok {
			continue
		}
		b, err := hex.DecodeString(s)
		if err != nil {
			b = nil
		}
		obj[k] = base64.StdEncoding.EncodeToString(b)
	}
}

// encodeJSON is a response in OTLP/JSON. ExportTraceServiceResponse has
// no ids, so protojson writes it as the specification does.
func encodeJSON(resp *coltracepb.ExportTraceServiceResponse) []byte {
	b, _ := protojson.Marshal(resp)
	return b
}
