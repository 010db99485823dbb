package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
)

func kv(k string, v any) *commonpb.KeyValue {
	a := &commonpb.AnyValue{}
	switch x := v.(type) {
	case string:
		a.Value = &commonpb.AnyValue_StringValue{StringValue: x}
	case int:
		a.Value = &commonpb.AnyValue_IntValue{IntValue: int64(x)}
	case float64:
		a.Value = &commonpb.AnyValue_DoubleValue{DoubleValue: x}
	case bool:
		a.Value = &commonpb.AnyValue_BoolValue{BoolValue: x}
	case []string:
		arr := &commonpb.ArrayValue{}
		for _, s := range x {
			arr.Values = append(arr.Values, &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}})
		}
		a.Value = &commonpb.AnyValue_ArrayValue{ArrayValue: arr}
	}
	return &commonpb.KeyValue{Key: k, Value: a}
}

func id(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }

// export is an export of spans under service "vllm".
func export(spans ...*tracepb.Span) *coltracepb.ExportTraceServiceRequest {
	return &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource:   &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("service.name", "vllm")}},
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}},
	}}}
}

func goodSpan(b byte) *tracepb.Span {
	return &tracepb.Span{TraceId: id(16, b), SpanId: id(8, b), ParentSpanId: id(8, 0xee), Name: "llm_request",
		Kind: tracepb.Span_SPAN_KIND_SERVER, StartTimeUnixNano: 1_000, EndTimeUnixNano: 2_000,
		Attributes: []*commonpb.KeyValue{kv("gen_ai.request.id", "chatcmpl-x"), kv("gen_ai.latency.time_in_queue", 0.25),
			kv("gen_ai.usage.prompt_tokens", 12), kv("flag", true), kv("list", []string{"a"})}}
}

// TestFlatten checks what a span keeps and which spans are refused.
func TestFlatten(t *testing.T) {
	noTrace, shortSpan, backwards, longName := goodSpan(2), goodSpan(3), goodSpan(4), goodSpan(5)
	noTrace.TraceId = id(16, 0)
	shortSpan.SpanId = id(4, 1)
	backwards.EndTimeUnixNano = 10
	longName.Name = strings.Repeat("n", MaxNameLen+1)
	d := Flatten(export(goodSpan(1), noTrace, shortSpan, backwards, longName))
	if len(d.Spans) != 1 || d.Rejected != 4 || d.Reason != rejectNoTraceID {
		t.Fatalf("kept %d, rejected %d (%q)", len(d.Spans), d.Rejected, d.Reason)
	}
	s := d.Spans[0]
	if s.TraceID != strings.Repeat("01", 16) || s.SpanID != strings.Repeat("01", 8) || s.ParentSpanID != strings.Repeat("ee", 8) ||
		s.Name != "llm_request" || s.Kind != "server" || s.Service != "vllm" || s.Start != 1000 || s.End != 2000 {
		t.Errorf("span %+v", s)
	}
	if q, ok := s.Float("gen_ai.latency.time_in_queue"); !ok || q != 0.25 {
		t.Errorf("time_in_queue %v %v", q, ok)
	}
	if n, ok := s.Float("gen_ai.usage.prompt_tokens"); !ok || n != 12 || s.String("gen_ai.request.id") != "chatcmpl-x" || s.Attrs["flag"] != true {
		t.Errorf("attributes %v", s.Attrs)
	}
	if _, ok := s.Attrs["list"]; ok {
		t.Error("an array attribute was kept")
	}
	many := make([]*tracepb.Span, MaxSpansPerBody+3)
	for i := range many {
		many[i] = goodSpan(1)
	}
	if d := Flatten(export(many...)); len(d.Spans) != MaxSpansPerBody || d.Rejected != 3 {
		t.Errorf("an export of %d spans: kept %d, rejected %d", len(many), len(d.Spans), d.Rejected)
	}
}

func post(t *testing.T, url, ctype, encoding string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// TestReceiverHTTPAndGRPC sends exports over both protocols to a receiver
// on loopback and reads spans.jsonl back.
func TestReceiverHTTPAndGRPC(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spans.jsonl")
	r, err := Start(Config{HTTP: "127.0.0.1:0", GRPC: "127.0.0.1:0", Path: path, MaxSpans: 4})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := proto.Marshal(export(goodSpan(1)))
	if resp, b := post(t, r.HTTPEndpoint(), "application/x-protobuf", "", body); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-protobuf" {
		t.Fatalf("plain export: %s %q", resp.Status, b)
	}
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zb2, _ := proto.Marshal(export(goodSpan(2)))
	_, _ = zw.Write(zb2)
	_ = zw.Close()
	if resp, b := post(t, r.HTTPEndpoint(), "application/x-protobuf", "gzip", zb.Bytes()); resp.StatusCode != 200 {
		t.Fatalf("gzip export: %s %q", resp.Status, b)
	}
	// A bad span is refused in a partial success.
	bad := goodSpan(3)
	bad.TraceId = nil
	badBody, _ := proto.Marshal(export(bad))
	resp, b := post(t, r.HTTPEndpoint(), "application/x-protobuf", "", badBody)
	var er coltracepb.ExportTraceServiceResponse
	if resp.StatusCode != 200 || proto.Unmarshal(b, &er) != nil || er.GetPartialSuccess().GetRejectedSpans() != 1 {
		t.Errorf("bad span: %s, response %v", resp.Status, &er)
	}
	for _, tc := range []struct {
		name, ctype, enc string
		body             []byte
		code             int
	}{
		{"text", "text/plain", "", []byte(`{}`), http.StatusUnsupportedMediaType},
		{"not protobuf", "application/x-protobuf", "", []byte{0xff, 0xff, 0xff}, http.StatusBadRequest},
		{"too large", "application/x-protobuf", "", make([]byte, MaxBodyBytes+1), http.StatusRequestEntityTooLarge},
		{"gzip bomb", "application/x-protobuf", "gzip", gzipOf(make([]byte, MaxBodyBytes+1)), http.StatusRequestEntityTooLarge},
		{"zstd", "application/x-protobuf", "zstd", body, http.StatusBadRequest},
	} {
		if resp, b := post(t, r.HTTPEndpoint(), tc.ctype, tc.enc, tc.body); resp.StatusCode != tc.code {
			t.Errorf("%s: %s %q, want %d", tc.name, resp.Status, b, tc.code)
		}
	}
	if resp, err := http.Get(r.HTTPEndpoint()); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %v %v", resp, err)
	}

	conn, err := grpc.NewClient(strings.TrimPrefix(r.GRPCEndpoint(), "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	gresp, err := coltracepb.NewTraceServiceClient(conn).Export(context.Background(), export(goodSpan(4), goodSpan(5), goodSpan(6)))
	if err != nil {
		t.Fatal(err)
	}
	// MaxSpans 4: the third gRPC span is past it.
	if gresp.GetPartialSuccess().GetRejectedSpans() != 1 {
		t.Errorf("gRPC response %v", gresp)
	}
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := r.Stats()
	if st.Spans != 4 || st.Dropped != 1 || st.Rejected != 1 || st.Bad != 5 || st.Exports != 4 {
		t.Errorf("stats %+v", st)
	}
	f, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(f)), "\n")
	var want []string
	for _, b := range []string{"01", "02", "04", "05"} {
		want = append(want, strings.Repeat(b, 16))
	}
	if len(lines) != 4 {
		t.Fatalf("%d lines:\n%s", len(lines), f)
	}
	for i, l := range lines {
		var s Span
		if err := json.Unmarshal([]byte(l), &s); err != nil || s.TraceID != want[i] {
			t.Errorf("line %d: %q (%v), want trace %s", i+1, l, err, want[i])
		}
	}
}

func gzipOf(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}
