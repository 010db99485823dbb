package otlp

import (
	"errors"
	"fmt"
	"strings"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Bounds on what one export may bring (hostile input: the receiver listens
// on a socket another process writes to). The body bound is the gRPC
// default receive size, which the OTel SDKs' default batch of 512 spans
// stays far below (a vLLM llm_request span is about 600 bytes).
const (
	MaxBodyBytes     = 4 << 20 // one export's body, after decompression
	MaxSpansPerBody  = 20_000  // spans of one export kept; the rest rejected
	MaxAttrsPerSpan  = 128     // the OTel SDKs' default attribute count limit
	MaxAttrValueLen  = 4096    // a longer string attribute is dropped
	MaxNameLen       = 1024    // a longer span name or attribute key: the span is rejected
	maxSpanIDBytes   = 8
	maxTraceIDBytes  = 16
	serviceNameAttr  = "service.name"
	rejectNoTraceID  = "span without a trace id"
	rejectBadSpanID  = "span id of the wrong length"
	rejectLongName   = "span name or attribute key over 1024 bytes"
	rejectOverBodyN  = "more than 20000 spans in one export"
	rejectBadTimings = "span ends before it starts"
)

// ErrTooLarge is an export body over MaxBodyBytes.
var ErrTooLarge = errors.New("otlp: export body over 4 MiB")

// Decoded is what one export brought: the spans kept, and how many were
// rejected with the first reason.
type Decoded struct {
	Spans    []Span
	Rejected int
	Reason   string // the first rejection's reason, "" when none
}

func (d *Decoded) reject(reason string) {
	d.Rejected++
	if d.Reason == "" {
		d.Reason = reason
	}
}

// DecodeProto decodes an OTLP/HTTP protobuf body (an
// ExportTraceServiceRequest). An error means the body is not one.
func DecodeProto(body []byte) (Decoded, error) {
	if len(body) > MaxBodyBytes {
		return Decoded{}, ErrTooLarge
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		return Decoded{}, fmt.Errorf("otlp: not an ExportTraceServiceRequest: %w", err)
	}
	return Flatten(&req), nil
}

// Flatten turns a decoded export into Spans, rejecting spans whose ids or
// times are unusable and keeping at most MaxSpansPerBody.
func Flatten(req *coltracepb.ExportTraceServiceRequest) Decoded {
	var d Decoded
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == serviceNameAttr {
				service = clip(kv.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				if len(d.Spans) >= MaxSpansPerBody {
					d.reject(rejectOverBodyN)
					continue
				}
				s, reason := flatSpan(sp, service)
				if reason != "" {
					d.reject(reason)
					continue
				}
				d.Spans = append(d.Spans, s)
			}
		}
	}
	return d
}

// flatSpan is one span flattened, or why it is rejected.
func flatSpan(sp *tracepb.Span, service string) (Span, string) {
	switch {
	case len(sp.GetTraceId()) != maxTraceIDBytes || hexID(sp.GetTraceId()) == "":
		return Span{}, rejectNoTraceID
	case len(sp.GetSpanId()) != maxSpanIDBytes || hexID(sp.GetSpanId()) == "", len(sp.GetParentSpanId()) != 0 && len(sp.GetParentSpanId()) != maxSpanIDBytes:
		return Span{}, rejectBadSpanID
	case len(sp.GetName()) > MaxNameLen:
		return Span{}, rejectLongName
	case sp.GetEndTimeUnixNano() < sp.GetStartTimeUnixNano():
		return Span{}, rejectBadTimings
	}
	s := Span{
		TraceID: hexID(sp.GetTraceId()), SpanID: hexID(sp.GetSpanId()), ParentSpanID: hexID(sp.GetParentSpanId()),
		Name: sp.GetName(), Kind: kindName(sp.GetKind()), Service: service,
		// Unix nanoseconds fit an int64 until 2262.
		Start: int64(min(sp.GetStartTimeUnixNano(), 1<<63-1)), End: int64(min(sp.GetEndTimeUnixNano(), 1<<63-1)),
	}
	for i, kv := range sp.GetAttributes() {
		if i >= MaxAttrsPerSpan {
			break
		}
		if len(kv.GetKey()) > MaxNameLen {
			return Span{}, rejectLongName
		}
		if v, ok := scalar(kv.GetValue()); ok {
			if s.Attrs == nil {
				s.Attrs = make(map[string]any, min(len(sp.GetAttributes()), MaxAttrsPerSpan))
			}
			s.Attrs[kv.GetKey()] = v
		}
	}
	return s, ""
}

// scalar is an attribute value kept: a string up to MaxAttrValueLen, a
// bool, an int or a double.
func scalar(v *commonpb.AnyValue) (any, bool) {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		if len(x.StringValue) > MaxAttrValueLen {
			return nil, false
		}
		return x.StringValue, true
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue, true
	case *commonpb.AnyValue_IntValue:
		return x.IntValue, true
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue, true
	}
	return nil, false
}

func kindName(k tracepb.Span_SpanKind) string {
	switch k {
	case tracepb.Span_SPAN_KIND_INTERNAL:
		return "internal"
	case tracepb.Span_SPAN_KIND_SERVER:
		return "server"
	case tracepb.Span_SPAN_KIND_CLIENT:
		return "client"
	case tracepb.Span_SPAN_KIND_PRODUCER:
		return "producer"
	case tracepb.Span_SPAN_KIND_CONSUMER:
		return "consumer"
	}
	return ""
}

// clip bounds a resource attribute kept on every span.
func clip(s string) string {
	if len(s) > MaxNameLen {
		return strings.ToValidUTF8(s[:MaxNameLen], "")
	}
	return s
}
