package otlp

import (
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// FuzzDecodeProto: any body either fails to decode or gives spans within
// the bounds, with well-formed ids and times.
func FuzzDecodeProto(f *testing.F) {
	good, _ := proto.Marshal(export(goodSpan(1), goodSpan(2)))
	f.Add(good)
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0x02, 0x12, 0x00})
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := DecodeProto(body)
		if err != nil {
			return
		}
		checkBounds(t, d)
	})
}

// FuzzDecodeJSON: the same of OTLP/JSON bodies.
func FuzzDecodeJSON(f *testing.F) {
	f.Add(otlpJSON(f, export(goodSpan(1), goodSpan(2)), protojson.MarshalOptions{}))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz","spanId":"0102030405060708"}]}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := DecodeJSON(body)
		if err != nil {
			return
		}
		checkBounds(t, d)
	})
}

// checkBounds fails t when a decoded export breaks the receiver's bounds.
func checkBounds(t *testing.T, d Decoded) {
	t.Helper()
	if len(d.Spans) > MaxSpansPerBody || d.Rejected < 0 {
		t.Fatalf("%d spans, %d rejected", len(d.Spans), d.Rejected)
	}
	for _, s := range d.Spans {
		if len(s.TraceID) != 32 || len(s.SpanID) != 16 || (s.ParentSpanID != "" && len(s.ParentSpanID) != 16) ||
			s.End < s.Start || len(s.Name) > MaxNameLen || len(s.Attrs) > MaxAttrsPerSpan {
			t.Fatalf("span out of bounds: %+v", s)
		}
	}
}
