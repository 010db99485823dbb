package sim

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestLLMRequestSpans checks the spans the engine exports against its own
// truth and vLLM's shape: one SERVER span named llm_request per finished
// request, in the trace of the request's traceparent and parented on its
// span id (a fresh root trace without one), started once it is templated
// and tokenized (vLLM's arrival_time), its
// latencies in seconds as vLLM computes them, its usage counts and its
// gen_ai.request.id the chunks' id, its temperature and top_p as vLLM's
// SamplingParams hold them (temperature left out when 0, as vLLM's "if
// req_state.temperature:" does), no gen_ai.response.model (vLLM 0.32 does
// not send it), scope vllm.tracing.otel and vLLM's resource attributes, sent
// over OTLP/HTTP protobuf.
func TestLLMRequestSpans(t *testing.T) {
	var mu sync.Mutex
	var got []*tracepb.Span
	var ctypes []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil || r.URL.Path != "/v1/traces" {
			t.Errorf("export %s: %v", r.URL.Path, err)
		}
		mu.Lock()
		defer mu.Unlock()
		ctypes = append(ctypes, r.Header.Get("Content-Type"))
		for _, rs := range req.GetResourceSpans() {
			res := map[string]string{}
			for _, kv := range rs.GetResource().GetAttributes() {
				res[kv.GetKey()] = kv.GetValue().GetStringValue()
			}
			if res["vllm.instrumenting_module_name"] != "vllm.llm_engine" || res["vllm.process_id"] == "" || res["service.name"] != "llmbench-sim" {
				t.Errorf("resource %v", res)
			}
			for _, ss := range rs.GetScopeSpans() {
				if ss.GetScope().GetName() != "vllm.tracing.otel" {
					t.Errorf("scope %q", ss.GetScope().GetName())
				}
				got = append(got, ss.GetSpans()...)
			}
		}
	}))
	defer srv.Close()
	p, _ := Preset("tiny")
	p.MaxRunningRequests = 1 // the second request queues behind the first
	e, ep := startEngineNoCleanup(t, Config{Dialect: DialectVLLM, Params: p, OTLPTracesEndpoint: srv.URL + "/v1/traces"})
	const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	var wg sync.WaitGroup
	for _, tp := range []string{parent, ""} {
		wg.Go(func() {
			// Greedy without a traceparent, sampled with one.
			sampling := `"temperature":0`
			if tp != "" {
				sampling = `"temperature":0.7,"top_p":0.9`
			}
			body := `{"model":"llmbench-sim","messages":[{"role":"user","content":"one two three four"}],"max_tokens":20,"stream":true,` + sampling + `}`
			req, _ := http.NewRequest(http.MethodPost, ep.BaseURL+"/chat/completions", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if tp != "" {
				req.Header.Set("traceparent", tp)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	truth := e.Truth()
	if len(got) != 2 || len(truth) != 2 || ctypes[0] != "application/x-protobuf" {
		t.Fatalf("%d spans for %d requests (content types %q)", len(got), len(truth), ctypes)
	}
	byChunk := map[string]RequestTruth{}
	for _, tr := range truth {
		byChunk[tr.ChunkID] = tr
	}
	queued := false
	for _, sp := range got {
		id := kv0(sp, AttrRequestID).GetStringValue()
		tr, ok := byChunk[id]
		if !ok || sp.GetName() != "llm_request" || sp.GetKind() != tracepb.Span_SPAN_KIND_SERVER || len(sp.GetSpanId()) != 8 {
			t.Fatalf("span %v: request id %q", sp, id)
		}
		if tr.Traceparent == parent {
			if hex.EncodeToString(sp.GetTraceId()) != "0af7651916cd43dd8448eb211c80319c" || hex.EncodeToString(sp.GetParentSpanId()) != "b7ad6b7169203331" {
				t.Errorf("span not in the traceparent's trace: %x parent %x", sp.GetTraceId(), sp.GetParentSpanId())
			}
		} else if len(sp.GetTraceId()) != 16 || len(sp.GetParentSpanId()) != 0 {
			t.Errorf("no traceparent: trace %x, parent %x; want a root span", sp.GetTraceId(), sp.GetParentSpanId())
		}
		// vLLM's arrival_time: stamped once templated and tokenized.
		if tr.Submitted < tr.Arrival || tr.Submitted > tr.QueueEnter {
			t.Errorf("truth: submitted %v outside arrival %v .. queue entry %v", tr.Submitted, tr.Arrival, tr.QueueEnter)
		}
		if want := e.Epoch().Add(tr.Submitted).UnixNano(); int64(sp.GetStartTimeUnixNano()) != want ||
			int64(sp.GetEndTimeUnixNano()) != want+int64(tr.DecodeEnd-tr.Submitted) {
			t.Errorf("span %d..%d, truth submitted %d, decode end %v later", sp.GetStartTimeUnixNano(), sp.GetEndTimeUnixNano(), want, tr.DecodeEnd-tr.Submitted)
		}
		for key, want := range map[string]time.Duration{
			AttrTimeInQueue: tr.QueueLeave - tr.QueueEnter, AttrTimeInPrefill: tr.PrefillEnd - tr.QueueLeave,
			AttrTimeInDecode: tr.DecodeEnd - tr.PrefillEnd, AttrTimeInInference: tr.DecodeEnd - tr.QueueLeave,
			AttrTimeToFirstToken: tr.PrefillEnd - tr.Submitted, AttrE2E: tr.DecodeEnd - tr.Submitted,
		} {
			if v := kv0(sp, key).GetDoubleValue(); v != want.Seconds() {
				t.Errorf("%s %v, truth %v", key, v, want.Seconds())
			}
		}
		if kv0(sp, AttrUsagePromptTokens).GetIntValue() != int64(tr.PromptTokens) || kv0(sp, AttrUsageCompletionToks).GetIntValue() != 20 ||
			kv0(sp, AttrRequestMaxTokens).GetIntValue() != 20 || kv0(sp, AttrRequestN).GetIntValue() != 1 {
			t.Errorf("usage and request attributes %v", sp.GetAttributes())
		}
		wantTemp, wantTopP := -1.0, 1.0 // -1: absent
		if tr.Traceparent == parent {
			wantTemp, wantTopP = 0.7, 0.9
		}
		if kv0(sp, AttrRequestTemperature).GetDoubleValue() != wantTemp || kv0(sp, AttrRequestTopP).GetDoubleValue() != wantTopP ||
			kv0(sp, "gen_ai.response.model").GetStringValue() != "" {
			t.Errorf("sampling attributes %v, want temperature %v top_p %v and no gen_ai.response.model", sp.GetAttributes(), wantTemp, wantTopP)
		}
		if tr.QueueLeave-tr.QueueEnter > time.Millisecond {
			queued = true
		}
	}
	if !queued {
		t.Error("neither request queued: the test no longer shows time_in_queue")
	}
}

func kv0(sp *tracepb.Span, key string) interface {
	GetStringValue() string
	GetIntValue() int64
	GetDoubleValue() float64
} {
	for _, kv := range sp.GetAttributes() {
		if kv.GetKey() == key {
			return kv.GetValue()
		}
	}
	return nilValue{}
}

type nilValue struct{}

func (nilValue) GetStringValue() string  { return "" }
func (nilValue) GetIntValue() int64      { return -1 }
func (nilValue) GetDoubleValue() float64 { return -1 }

// TestSamplingOf: vLLM's SamplingParams defaults (1.0 each) and its greedy
// rule (temperature < 1e-5 sets top_p to 1).
func TestSamplingOf(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		temp, topP *float64
		want       spanSampling
	}{
		{nil, nil, spanSampling{1, 1}},
		{f(0.5), f(0.2), spanSampling{0.5, 0.2}},
		{f(0), f(0.3), spanSampling{0, 1}},
		{f(1e-6), f(0.3), spanSampling{1e-6, 1}},
		{f(1e-5), f(0.3), spanSampling{1e-5, 0.3}},
		{nil, f(0.95), spanSampling{1, 0.95}},
	} {
		if got := samplingOf(&chatRequest{Temperature: tc.temp, TopP: tc.topP}); got != tc.want {
			t.Errorf("temperature %v top_p %v: %+v, want %+v", tc.temp, tc.topP, got, tc.want)
		}
	}
}

func TestParseTraceparent(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", true},
		{"00-00000000000000000000000000000000-b7ad6b7169203331-01", false},
		{"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", false},
		{"ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", false},
		{"00-0af7651916cd43dd8448eb211c80319x-b7ad6b7169203331-01", false},
		{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331", false},
		{"", false},
	} {
		tid, sid := parseTraceparent(tc.in)
		if (tid != nil && sid != nil) != tc.ok {
			t.Errorf("parseTraceparent(%q) = %x %x, want ok %v", tc.in, tid, sid, tc.ok)
		}
	}
}
