package vllm

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	llmclient "github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/realtest"
	"github.com/llmbench-org/llmbench/report/timeline"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape/otlp"
)

// spanRequests is the load each traced run sends: small, since every
// protocol costs a vLLM start of its own (--otlp-traces-endpoint and the
// exporter's protocol are fixed when vLLM starts).
const spanRequests = 12

// TestSpansJoinRecords is issue 24's acceptance against a real engine: a
// real vLLM launched by llmbench's run path (engine kind launch, kind vllm,
// scrape.otlp) exports its llm_request spans to llmbench's receiver, over
// gRPC (vLLM's default) and over HTTP/protobuf
// (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, which llmbench sets when gRPC is
// off), and every request's span joins its record by the trace id of the
// traceparent llmbench sent and by gen_ai.request.id = chatcmpl-<X-Request-Id>;
// every part of the timeline is non-negative and they add up to the TTFT.
// The same load against the built-in engine's vLLM dialect must export
// spans of the same name, kind, attribute set and units, timed by the same
// relations (decision 2420).
func TestSpansJoinRecords(t *testing.T) {
	both(t)
	py, model := os.Getenv("LLMBENCH_VLLM_PYTHON"), os.Getenv("LLMBENCH_VLLM_MODEL")
	if py == "" || model == "" {
		// LLMBENCH_VLLM_URL alone: a vLLM already running cannot be given
		// the run's receiver.
		realtest.Missing(t, "the traced runs launch vLLM themselves: set LLMBENCH_VLLM_PYTHON and LLMBENCH_VLLM_MODEL ("+installHint+")")
	}
	<-built
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	// The built-in engine exports over OTLP/HTTP only (engine/sim/otlp.go):
	// its run keeps both receivers on, and its spans are compared with the
	// real ones whichever protocol carried those.
	simSpans := checkJoin(t, "built-in engine", tracedRun(t, "  kind: sim\n  dialect: vllm\n  preset: tiny\n", "{}"))
	for _, proto := range []struct{ name, otlp string }{
		{"grpc", "{http: off}"},
		{"http-protobuf", "{grpc: off}"},
	} {
		t.Run(proto.name, func(t *testing.T) {
			realSpans := checkJoin(t, "real vLLM", tracedRun(t, launchedVLLM(py, model), proto.otlp))
			compareSpans(t, realSpans, simSpans)
		})
	}
}

// launchedVLLM is the scenario's engine section that has llmbench start the
// real vLLM with the flags TestMain's has (decision 1800).
func launchedVLLM(py, model string) string {
	return fmt.Sprintf(`  kind: launch
  launch:
    kind: vllm
    model: %q
    command: [%q, -m, vllm.entrypoints.openai.api_server, --model, "{model}", --served-model-name, tiny,
      --host, "{host}", --port, "{port}", --max-model-len, "%d", --dtype, float32,
      --gpu-memory-utilization, "0.08", --enforce-eager]
    env: [VLLM_TARGET_DEVICE=cpu, VLLM_CPU_KVCACHE_SPACE=1, HF_HUB_OFFLINE=1, TRANSFORMERS_OFFLINE=1]
    ready_timeout: %s
`, model, py, maxModelLen, startLimit)
}

// tracedRun runs llmbench (the CLI, the whole run path) with engine as the
// scenario's engine section and scrape.otlp as given, and returns the run
// directory.
func tracedRun(t *testing.T, engine, otlpCfg string) string {
	t.Helper()
	scenario := filepath.Join(t.TempDir(), "traced.yaml")
	body := fmt.Sprintf(`name: vllm-traced
seed: 11
model: tiny
engine:
%sworkload:
  concurrency: 3
  requests: %d
  prompt_tokens: {dist: uniform, min: 8, max: 48}
  output_tokens: {dist: uniform, min: 4, max: 24}
scrape:
  interval: 500ms
  otlp: %s
`, engine, spanRequests, otlpCfg)
	if err := os.WriteFile(scenario, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	// Two vLLM starts on top of TestMain's can outlast go test's own limit
	// on a loaded machine (403 s for both here at load 17-25): the run is
	// interrupted well before it, as a user would (llmbench then stops the
	// vLLM it launched), instead of go test's panic leaving vLLM running.
	ctx := context.Background()
	if dl, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-90*time.Second))
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, llmbenchBin, "run", "--view", "plain", "--output-dir", out, scenario)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 60 * time.Second
	log, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("llmbench run interrupted: go test's time limit is near (%v)\n%s", ctx.Err(), log)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*", "run.json"))
	if err != nil || len(dirs) != 1 {
		t.Fatalf("llmbench run: %v (%d run directories)\n%s", err, len(dirs), log)
	}
	return filepath.Dir(dirs[0])
}

// joined is one record with its llm_request span.
type joined struct {
	rec  llmclient.Record
	span otlp.Span
}

// checkJoin holds one traced run to the join: every record finished with a
// first token, has exactly one llm_request span in its trace, parented on
// the span id llmbench sent, naming the record's id; report/timeline joins
// all of them by trace id, and each timeline's parts are non-negative and
// add up to the client's TTFT exactly.
func checkJoin(t *testing.T, who, dir string) []joined {
	t.Helper()
	meta, err := rundir.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := rundir.ReadRequests(filepath.Join(dir, rundir.RequestsFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	spans, _, err := rundir.ReadSpans(dir)
	if err != nil {
		t.Fatal(err)
	}
	var recs []llmclient.Record
	for _, r := range reqs.Records {
		if r.Phase == "main" {
			recs = append(recs, r)
		}
	}
	if len(recs) != spanRequests {
		t.Fatalf("%s: %d records in the main phase, want %d", who, len(recs), spanRequests)
	}
	byTrace := map[string][]otlp.Span{}
	for _, sp := range spans {
		if sp.Name == "llm_request" {
			byTrace[sp.TraceID] = append(byTrace[sp.TraceID], sp)
		}
	}
	var out []joined
	for _, r := range recs {
		if r.Status != 200 || r.FirstToken == 0 || r.Error != "" {
			t.Errorf("%s: %s: status %d, first token %v, error %q", who, r.ID, r.Status, r.FirstToken, r.Error)
			continue
		}
		traceID, parent := llmclient.TraceIDs(meta.StartedAt.UnixNano(), r.ID)
		if r.TraceID != hex.EncodeToString(traceID[:]) {
			t.Errorf("%s: %s: record's trace id %s, the traceparent's %x", who, r.ID, r.TraceID, traceID)
		}
		got := byTrace[r.TraceID]
		if len(got) != 1 {
			t.Errorf("%s: %s: %d llm_request spans in trace %s, want 1", who, r.ID, len(got), r.TraceID)
			continue
		}
		sp := got[0]
		if sp.ParentSpanID != hex.EncodeToString(parent[:]) || sp.Kind != "server" {
			t.Errorf("%s: %s: span's parent %s kind %q, want the traceparent's %x and server", who, r.ID, sp.ParentSpanID, sp.Kind, parent)
		}
		if id := sp.String(timeline.AttrRequestID); id != "chatcmpl-"+r.ID || id != r.ServerID {
			t.Errorf("%s: %s: gen_ai.request.id %q, want chatcmpl-%s, the chunks' id %q", who, r.ID, id, r.ID, r.ServerID)
		}
		out = append(out, joined{rec: r, span: sp})
	}
	res := timeline.Join(recs, spans, meta.StartedAt)
	if res.Records != spanRequests || res.Joined != spanRequests || res.ByTraceID != spanRequests {
		t.Errorf("%s: timeline joined %d of %d records (%d by trace id); spans unjoined %v, records %v",
			who, res.Joined, res.Records, res.ByTraceID, res.SpansUnjoined, res.RecordsUnjoined)
	}
	var sum [6]time.Duration
	for _, p := range res.Requests {
		parts := []time.Duration{p.Send, p.Preprocess, p.Queue, p.Prefill, p.Remainder, p.Decode}
		for i, d := range parts {
			sum[i] += d
			if d < 0 {
				t.Errorf("%s: %s: part %d of %v is negative (send, preprocess, queue, prefill, remainder, decode)", who, p.ID, i, parts)
			}
		}
		if s := p.Send + p.Preprocess + p.Queue + p.Prefill + p.Remainder; s != p.TTFT || p.TTFT <= 0 {
			t.Errorf("%s: %s: parts add up to %v, TTFT %v", who, p.ID, s, p.TTFT)
		}
	}
	n := time.Duration(max(len(res.Requests), 1))
	t.Logf("%s: %d spans, %d joined; mean send %v preprocess %v queue %v prefill %v remainder %v decode %v",
		who, len(spans), res.Joined, sum[0]/n, sum[1]/n, sum[2]/n, sum[3]/n, sum[4]/n, sum[5]/n)
	return out
}

// vLLM's llm_request attributes (vllm/v1/engine/output_processor.py
// do_tracing), their latencies in seconds. temperature, top_p and n are
// sent when non-zero, max_tokens when set: the runs leave temperature and
// top_p to vLLM's defaults (1.0) and set max_tokens.
var latencyAttrs = []string{
	"gen_ai.latency.time_in_queue", "gen_ai.latency.time_in_model_prefill",
	"gen_ai.latency.time_in_model_decode", "gen_ai.latency.time_in_model_inference",
	"gen_ai.latency.time_to_first_token", "gen_ai.latency.e2e",
}

// compareSpans holds both engines' spans to what vLLM's do_tracing makes
// them: the same attribute names; token counts equal to the record's;
// latencies in seconds, each within the client's own measure of it;
// inference = prefill + decode; queue + prefill ≤ time to first token ≤
// e2e; and the span ending once e2e after its start has passed.
func compareSpans(t *testing.T, real, emulated []joined) {
	t.Helper()
	if len(real) == 0 || len(emulated) == 0 {
		t.Fatalf("nothing to compare: %d real, %d emulated spans joined", len(real), len(emulated))
	}
	keys := func(sp otlp.Span) []string {
		var k []string
		for a := range sp.Attrs {
			k = append(k, a)
		}
		slices.Sort(k)
		return k
	}
	realKeys := keys(real[0].span)
	for _, j := range emulated {
		if k := keys(j.span); !slices.Equal(k, realKeys) {
			t.Errorf("built-in engine: %s: attributes\n  %s\nreal vLLM's\n  %s", j.rec.ID, strings.Join(k, " "), strings.Join(realKeys, " "))
		}
	}
	for _, side := range []struct {
		who string
		js  []joined
	}{{"real vLLM", real}, {"built-in engine", emulated}} {
		for _, j := range side.js {
			checkSpanTiming(t, side.who, j)
		}
	}
}

// checkSpanTiming holds one span's attributes to its record.
func checkSpanTiming(t *testing.T, who string, j joined) {
	t.Helper()
	sp, r := j.span, j.rec
	num := func(k string) float64 {
		v, ok := sp.Float(k)
		if !ok {
			t.Errorf("%s: %s: %s missing or not a number: %v", who, r.ID, k, sp.Attrs[k])
		}
		return v
	}
	if s := sp.String(timeline.AttrRequestID); s == "" {
		t.Errorf("%s: %s: gen_ai.request.id is not a string: %v", who, r.ID, sp.Attrs[timeline.AttrRequestID])
	}
	for k, want := range map[string]float64{
		"gen_ai.usage.prompt_tokens": float64(r.PromptTokens), "gen_ai.usage.completion_tokens": float64(r.OutputTokens),
		"gen_ai.request.max_tokens": float64(r.MaxTokens), "gen_ai.request.n": 1,
		"gen_ai.request.temperature": 1, "gen_ai.request.top_p": 1,
	} {
		if got := num(k); got != want {
			t.Errorf("%s: %s: %s = %v, want %v", who, r.ID, k, got, want)
		}
	}
	lat := map[string]float64{}
	for _, k := range latencyAttrs {
		lat[k] = num(k)
		if lat[k] < 0 {
			t.Errorf("%s: %s: %s = %v s is negative", who, r.ID, k, lat[k])
		}
	}
	queue, prefill, decode, inference := lat[latencyAttrs[0]], lat[latencyAttrs[1]], lat[latencyAttrs[2]], lat[latencyAttrs[3]]
	ttft, e2e := lat[latencyAttrs[4]], lat[latencyAttrs[5]]
	const eps = 1e-6 // seconds: float rounding of differences of Unix times
	if math.Abs(inference-(prefill+decode)) > eps {
		t.Errorf("%s: %s: inference %v s ≠ prefill %v + decode %v", who, r.ID, inference, prefill, decode)
	}
	if queue+prefill > ttft+eps || ttft > e2e+eps {
		t.Errorf("%s: %s: queue %v + prefill %v ≤ ttft %v ≤ e2e %v does not hold", who, r.ID, queue, prefill, ttft, e2e)
	}
	// Seconds, and measured inside the client's own interval: the engine's
	// TTFT and e2e start at its arrival (after the client sent) and end
	// before the client reads the token (or the stream's end).
	if ttft > (r.FirstToken-r.Sent).Seconds() || e2e > (r.End-r.Sent).Seconds() || e2e <= 0 {
		t.Errorf("%s: %s: engine ttft %v s, e2e %v s against the client's %v and %v", who, r.ID, ttft, e2e, r.FirstToken-r.Sent, r.End-r.Sent)
	}
	// The span starts at the arrival and ends when vLLM processes the
	// finished output, e2e after it (the built-in engine: exactly then).
	if d := time.Duration(sp.End-sp.Start).Seconds() - e2e; d < -eps || d > 1 {
		t.Errorf("%s: %s: span lasts %v, e2e %v s", who, r.ID, time.Duration(sp.End-sp.Start), e2e)
	}
}
