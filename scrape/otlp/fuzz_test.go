package otlp

import (
	"testing"

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
		if len(d.Spans) > MaxSpansPerBody || d.Rejected < 0 {
			t.Fatalf("%d spans, %d rejected", len(d.Spans), d.Rejected)
		}
		for _, s := range d.Spans {
			if len(s.TraceID) != 32 || len(s.SpanID) != 16 || (s.ParentSpanID != "" && len(s.ParentSpanID) != 16) ||
				s.End < s.Start || len(s.Name) > MaxNameLen || len(s.Attrs) > MaxAttrsPerSpan {
				t.Fatalf("span out of bounds: %+v", s)
			}
		}
	})
}
