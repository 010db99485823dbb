package otlp

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// otlpJSON is an export as OTLP/JSON writes it: the official protojson's
// output with each id turned from base64 into hex, as the OTLP
// specification's JSON encoding has it. It walks the protojson output with
// the field names the options chose.
func otlpJSON(t testing.TB, req *coltracepb.ExportTraceServiceRequest, opts protojson.MarshalOptions) []byte {
	t.Helper()
	b, err := opts.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	name := func(camel, snake string) string {
		if opts.UseProtoNames {
			return snake
		}
		return camel
	}
	toHex := func(obj map[string]any) {
		for _, k := range []string{name("traceId", "trace_id"), name("spanId", "span_id"), name("parentSpanId", "parent_span_id")} {
			if s, ok := obj[k].(string); ok {
				raw, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					t.Fatal(err)
				}
				obj[k] = hex.EncodeToString(raw)
			}
		}
	}
	for _, rs := range doc[name("resourceSpans", "resource_spans")].([]any) {
		for _, ss := range rs.(map[string]any)[name("scopeSpans", "scope_spans")].([]any) {
			for _, sp := range ss.(map[string]any)["spans"].([]any) {
				toHex(sp.(map[string]any))
				for _, l := range asList(sp.(map[string]any)["links"]) {
					toHex(l.(map[string]any))
				}
			}
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func asList(v any) []any { l, _ := v.([]any); return l }

// randomExport is an export of n spans with random ids, times and
// attributes of every kind, a link, some without a parent, under two
// resources.
func randomExport(rng *rand.Rand, n int) *coltracepb.ExportTraceServiceRequest {
	req := export()
	req.ResourceSpans = append(req.ResourceSpans, export().ResourceSpans...)
	req.ResourceSpans[1].Resource.Attributes = []*commonpb.KeyValue{kv("service.name", "sglang")}
	randID := func(k int) []byte {
		b := make([]byte, k)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		b[0] |= 1 // never all zero
		return b
	}
	for i := range n {
		start := uint64(1_760_000_000_000_000_000 + rng.Int64N(1e12))
		sp := &tracepb.Span{TraceId: randID(16), SpanId: randID(8), Name: "llm_request", Kind: tracepb.Span_SpanKind(1 + rng.IntN(5)),
			StartTimeUnixNano: start, EndTimeUnixNano: start + uint64(rng.Int64N(1e10)),
			Attributes: []*commonpb.KeyValue{kv("gen_ai.request.id", "chatcmpl-"+hex.EncodeToString(randID(6))),
				kv("gen_ai.latency.time_in_queue", rng.Float64()), kv("gen_ai.usage.prompt_tokens", rng.IntN(1<<20)),
				kv("gen_ai.usage.completion_tokens", -rng.IntN(5)), kv("stream", rng.IntN(2) == 1), kv("list", []string{"a", "b"})},
			Links: []*tracepb.Span_Link{{TraceId: randID(16), SpanId: randID(8)}}}
		if i%3 != 0 {
			sp.ParentSpanId = randID(8)
		}
		rs := req.ResourceSpans[i%2]
		rs.ScopeSpans[0].Spans = append(rs.ScopeSpans[0].Spans, sp)
	}
	return req
}

// TestDecodeJSONAgainstProto: an export written as OTLP/JSON (by the
// official protojson, ids in hex) decodes to exactly the spans its
// protobuf encoding does, with lowerCamelCase or the original field names,
// enums by name or by number, int64 as strings (protojson's way).
func TestDecodeJSONAgainstProto(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(24, 1))
	for _, opts := range []protojson.MarshalOptions{{}, {UseProtoNames: true}, {UseEnumNumbers: true}, {UseProtoNames: true, UseEnumNumbers: true}} {
		req := randomExport(rng, 50)
		want := Flatten(req)
		if len(want.Spans) != 50 || want.Rejected != 0 {
			t.Fatalf("the protobuf path: %d spans, %d rejected (%s)", len(want.Spans), want.Rejected, want.Reason)
		}
		got, err := DecodeJSON(otlpJSON(t, req, opts))
		if err != nil {
			t.Fatalf("%+v: %v", opts, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%+v: JSON decoding differs from protobuf's (-proto +json):\n%s", opts, diff)
		}
	}
}

// TestDecodeJSONSpecExample: the OTLP specification's example body
// (opentelemetry-proto examples/trace.json, as an SDK writes it: times as
// strings, kind as a number, an int attribute as a string), by hand.
func TestDecodeJSONSpecExample(t *testing.T) {
	t.Parallel()
	body := `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"my.service"}}]},
"scopeSpans":[{"scope":{"name":"my.library","version":"1.0.0","attributes":[{"key":"my.scope.attribute","value":{"stringValue":"some scope attribute"}}]},
"spans":[{"traceId":"5B8EFFF798038103D269B633813FC60C","spanId":"EEE19B7EC3C1B174","parentSpanId":"EEE19B7EC3C1B173","name":"I'm a server span",
"startTimeUnixNano":"1544712660000000000","endTimeUnixNano":"1544712661000000000","kind":2,
"attributes":[{"key":"my.span.attr","value":{"stringValue":"some value"}},{"key":"gen_ai.usage.prompt_tokens","value":{"intValue":"42"}},
{"key":"ratio","value":{"doubleValue":0.5}},{"key":"ok","value":{"boolValue":true}}],"unknownField":{"x":1}}]}]}]}`
	got, err := DecodeJSON([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := Decoded{Spans: []Span{{TraceID: "5b8efff798038103d269b633813fc60c", SpanID: "eee19b7ec3c1b174", ParentSpanID: "eee19b7ec3c1b173",
		Name: "I'm a server span", Kind: "server", Service: "my.service", Start: 1544712660000000000, End: 1544712661000000000,
		Attrs: map[string]any{"my.span.attr": "some value", "gen_ai.usage.prompt_tokens": int64(42), "ratio": 0.5, "ok": true}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestDecodeJSONBadIDs: an id that is not hex (the base64 the plain
// protobuf JSON mapping writes, a wrong length) rejects its span with the
// reason; a body that is not an export is an error.
func TestDecodeJSONBadIDs(t *testing.T) {
	t.Parallel()
	req := export(goodSpan(1), goodSpan(2), goodSpan(3))
	plain, _ := protojson.Marshal(req) // ids in base64: not OTLP/JSON
	d, err := DecodeJSON(plain)
	if err != nil || len(d.Spans) != 0 || d.Rejected != 3 || d.Reason != rejectNoTraceID {
		t.Errorf("base64 ids: %+v, %v", d, err)
	}
	short := strings.Replace(string(otlpJSON(t, export(goodSpan(1), goodSpan(2)), protojson.MarshalOptions{})), strings.Repeat("01", 8), strings.Repeat("01", 7), 1)
	if d, err := DecodeJSON([]byte(short)); err != nil || len(d.Spans) != 1 || d.Rejected != 1 || d.Reason != rejectBadSpanID {
		t.Errorf("a short span id: %+v, %v", d, err)
	}
	for _, body := range []string{`[1,2]`, `{"resourceSpans": 3}`, `{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":"soon"}]}]}]}`, `not json`} {
		if _, err := DecodeJSON([]byte(body)); err == nil {
			t.Errorf("%s: decoded", body)
		}
	}
	if d, err := DecodeJSON([]byte(`{}`)); err != nil || len(d.Spans) != 0 || d.Rejected != 0 {
		t.Errorf("an empty export: %+v, %v", d, err)
	}
}

// TestReceiverJSON: OTLP/JSON over HTTP, identity and gzip, is kept as
// its protobuf would be, answered in JSON (a partial success with the
// rejected count); a charset parameter is fine.
func TestReceiverJSON(t *testing.T) {
	t.Parallel()
	r, err := Start(Config{HTTP: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	a, b := randomExport(rng, 20), randomExport(rng, 20)
	bad := goodSpan(9)
	bad.SpanId = nil
	b.ResourceSpans[0].ScopeSpans[0].Spans = append(b.ResourceSpans[0].ScopeSpans[0].Spans, bad)
	resp, body := post(t, r.HTTPEndpoint(), "application/json", "", otlpJSON(t, a, protojson.MarshalOptions{}))
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" || strings.TrimSpace(string(body)) != "{}" {
		t.Fatalf("identity: %s %q %q", resp.Status, resp.Header.Get("Content-Type"), body)
	}
	resp, body = post(t, r.HTTPEndpoint(), "application/json; charset=utf-8", "gzip", gzipOf(otlpJSON(t, b, protojson.MarshalOptions{})))
	var er coltracepb.ExportTraceServiceResponse
	if resp.StatusCode != http.StatusOK || protojson.Unmarshal(body, &er) != nil || er.GetPartialSuccess().GetRejectedSpans() != 1 ||
		er.GetPartialSuccess().GetErrorMessage() != rejectBadSpanID {
		t.Fatalf("gzip: %s %q", resp.Status, body)
	}
	if resp, _ := post(t, r.HTTPEndpoint(), "application/json", "gzip", gzipOf(make([]byte, MaxBodyBytes+1))); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a JSON gzip bomb: %s", resp.Status)
	}
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := append(Flatten(a).Spans, Flatten(b).Spans...)
	if diff := cmp.Diff(want, r.Spans()); diff != "" {
		t.Errorf("spans kept (-protobuf's +received):\n%s", diff)
	}
	if st := r.Stats(); st.Exports != 2 || st.Spans != 40 || st.Rejected != 1 || st.Bad != 1 {
		t.Errorf("stats %+v", st)
	}
}
