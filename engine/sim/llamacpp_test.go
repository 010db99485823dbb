package sim

import (
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// llamaParams is the tiny preset shaped like the captured llama.cpp server:
// a prompt cache at token granularity (kv_block_size 1), and a chat
// template adding 30 tokens to a one-message chat (the fixture's 9 words
// made 39 prompt tokens).
func llamaParams(t *testing.T) Params {
	t.Helper()
	p, err := Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	p.KVBlockSize = 1
	p.KVBlocks = 16384
	p.ChatTemplateTokens = 4
	p.ChatTemplateMessageTokens = 26
	return p
}

const fixtureMessage = "the quick brown fox jumps over the lazy dog" // 9 words

func parseExposition(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return fams
}

// TestLlamaCppMetricsMatchCapture holds the dialect's /metrics to the bytes
// a real llama.cpp server sent: the same families, types and order, and
// values that follow the captured requests' rules.
func TestLlamaCppMetricsMatchCapture(t *testing.T) {
	t.Parallel()
	e, ep := startEngine(t, Config{Dialect: DialectLlamaCpp, Params: llamaParams(t)})
	base := strings.TrimSuffix(ep.BaseURL, "/v1")

	// Before any request: the exact text of the fresh server.
	resp, err := http.Get(ep.MetricsURL)
	if err != nil {
		t.Fatal(err)
	}
	fresh := readAll(t, resp)
	want, err := os.ReadFile("testdata/llamacpp/metrics-before.txt")
	if err != nil {
		t.Fatal(err)
	}
	if fresh != string(want) {
		t.Errorf("fresh /metrics differs from the captured one:\n%s\nwant:\n%s", fresh, want)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/plain; version=0.0.4" {
		t.Errorf("Content-Type %q", ct)
	}
	if _, err := strconv.ParseInt(resp.Header.Get("Process-Start-Time-Unix"), 10, 64); err != nil {
		t.Errorf("Process-Start-Time-Unix %q: %v", resp.Header.Get("Process-Start-Time-Unix"), err)
	}

	// The captured requests: a streamed chat, the same chat not streamed
	// (a prompt-cache hit), a streamed completion.
	client := newClient()
	chat := map[string]any{
		"messages":   []map[string]any{{"role": "user", "content": fixtureMessage}},
		"max_tokens": 12, "stream": true, "stream_options": map[string]any{"include_usage": true},
	}
	evs := dataEvents(t, readEvents(t, rawPost(t, client, base+"/v1/chat/completions", chat).Body))
	if u := usageOfChunk(evs[len(evs)-1]); num(u["prompt_tokens"]) != 39 || num(u["completion_tokens"]) != 12 {
		t.Fatalf("streamed usage %v, want 39 prompt (9 words + 30 template) and 12 completion", u)
	}
	chat["stream"] = false
	delete(chat, "stream_options")
	whole := decodeJSON(t, readAll(t, rawPost(t, client, base+"/v1/chat/completions", chat)))
	if u := whole["usage"].(map[string]any); num(u["prompt_tokens_details"].(map[string]any)["cached_tokens"]) != 38 {
		t.Errorf("repeated prompt: usage %v, want 38 cached tokens of 39 (llama.cpp keeps all but the last)", u)
	}
	readEvents(t, rawPost(t, client, base+"/v1/completions", map[string]any{"prompt": "one two three four five six", "max_tokens": 8, "stream": true}).Body)

	got := scrapeText(t, ep.MetricsURL)
	capture, err := os.ReadFile("testdata/llamacpp/metrics-after.txt")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := metricNames(got), metricNames(string(capture)); a != b {
		t.Errorf("metric lines differ from the capture:\n%s\nwant:\n%s", a, b)
	}
	fams := parseExposition(t, got)
	for name, f := range parseExposition(t, string(capture)) {
		g, ok := fams[name]
		if !ok || g.GetType() != f.GetType() || len(g.GetMetric()[0].GetLabel()) != 0 {
			t.Errorf("%s: got %v, want an unlabelled %v", name, g, f.GetType())
		}
	}
	for _, f := range fams {
		if f.GetType() == dto.MetricType_HISTOGRAM {
			t.Errorf("%s: llama.cpp has no histograms", f.GetName())
		}
	}

	// Every value from the ground truth.
	truth := e.Truth()
	if len(truth) != 3 {
		t.Fatalf("%d truth records, want 3", len(truth))
	}
	var promptN, cachedN, generated, genSteps, tokenMax int
	var promptUS, predictedUS uint64
	for _, tr := range truth {
		promptN += tr.PromptTokens - tr.CachedTokens
		cachedN += tr.CachedTokens
		generated += tr.GeneratedTokens
		genSteps += tr.GeneratedTokens - 1 // the first token comes from the prompt's pass
		promptUS += uint64((tr.PrefillEnd - tr.PrefillStart) / time.Microsecond)
		predictedUS += max(uint64((tr.DecodeEnd-tr.PrefillEnd)/time.Microsecond), 1)
		tokenMax = max(tokenMax, tr.PromptTokens+tr.GeneratedTokens-1)
	}
	if promptN != 39+1+6 {
		t.Errorf("processed prompt tokens %d, want 46: the cache hit counts 1 of 39", promptN)
	}
	steps := len(e.Steps())
	busy := 0
	for _, s := range e.Steps() {
		busy += s.Running + s.Finished // busy slots during the pass
	}
	for name, want := range map[string]float64{
		"llamacpp:prompt_tokens_total":            float64(promptN),
		"llamacpp:prompt_tokens_cached_total":     float64(cachedN),
		"llamacpp:prompt_seconds_total":           float64(promptUS) / 1e6,
		"llamacpp:tokens_predicted_total":         float64(generated),
		"llamacpp:tokens_predicted_seconds_total": float64(predictedUS) / 1e6,
		"llamacpp:n_decode_total":                 float64(steps),
		"llamacpp:n_tokens_max":                   float64(tokenMax),
		"llamacpp:requests_processing":            0,
		"llamacpp:requests_deferred":              0,
		"llamacpp:n_busy_slots_per_decode":        float64(busy) / float64(steps),
		// Rates over the window since the last read (the fresh one).
		"llamacpp:prompt_tokens_seconds":    ratePerS(promptN, promptUS),
		"llamacpp:predicted_tokens_seconds": ratePerS(genSteps, predictedUS),
	} {
		g := value(t, fams, name)
		if want != g && math.Abs(want-g) > 1e-5*math.Abs(want) { // six significant digits
			t.Errorf("%s = %v, want %v", name, g, want)
		}
	}
}

func ratePerS(n int, us uint64) float64 {
	if us == 0 {
		return 0
	}
	return float64(n) / float64(us) * 1e6
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

func scrapeText(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	return readAll(t, resp)
}

// metricNames is an exposition without its values: comment lines and names.
func metricNames(text string) string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if !strings.HasPrefix(line, "#") {
			line, _, _ = strings.Cut(line, " ")
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

func TestCppDouble(t *testing.T) {
	t.Parallel()
	for v, want := range map[float64]string{
		0: "0", 45: "45", 0.003: "0.003", 15000: "15000", 32 / 0.007: "4571.43",
		999999: "999999", 1234567: "1.23457e+06", 1e6: "1e+06", 0.0001: "0.0001", 0.00001: "1e-05",
		math.Inf(1): "inf",
	} {
		if got := cppDouble(v); got != want {
			t.Errorf("cppDouble(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestLlamaCppWire holds the dialect's responses to the captured ones:
// headers, the shape of every kind of chunk and body, and the timings
// object against the ground truth.
func TestLlamaCppWire(t *testing.T) {
	t.Parallel()
	e, ep := startEngine(t, Config{Dialect: DialectLlamaCpp, Params: llamaParams(t)})
	base := strings.TrimSuffix(ep.BaseURL, "/v1")
	client := newClient()
	chat := func(stream bool) map[string]any {
		m := map[string]any{"messages": []map[string]any{{"role": "user", "content": fixtureMessage}}, "max_tokens": 12, "stream": stream}
		if stream {
			m["stream_options"] = map[string]any{"include_usage": true}
		}
		return m
	}

	// Streamed chat.
	capHdr, capEvs := fixtureEvents(t, "testdata/llamacpp/chat-stream.http")
	resp := rawPost(t, client, base+"/v1/chat/completions", chat(true))
	for _, h := range []string{"Keep-Alive", "Content-Type"} {
		if got, want := resp.Header.Get(h), capHdr.Get(h); got != want {
			t.Errorf("header %s = %q, want %q as captured", h, got, want)
		}
	}
	evs := dataEvents(t, readEvents(t, resp.Body))
	if len(evs) != len(capEvs) {
		t.Fatalf("%d events, the capture has %d", len(evs), len(capEvs))
	}
	for i := range evs {
		if a, b := shape(evs[i]), shape(capEvs[i]); a != b {
			t.Errorf("event %d shape\n got %s\nwant %s", i, a, b)
		}
	}
	id := str(evs[0]["id"])
	if !strings.HasPrefix(id, "chatcmpl-") || len(id) != len("chatcmpl-")+32 {
		t.Errorf("id %q, want chatcmpl- and 32 alphanumerics", id)
	}
	tr := truthByID(t, e, func(tr RequestTruth) bool { return tr.ChunkID == id })
	checkTimings(t, evs[len(evs)-1]["timings"].(map[string]any), tr)

	// The same request not streamed: a cache hit.
	raw, err := os.ReadFile("testdata/llamacpp/chat-nonstream.json")
	if err != nil {
		t.Fatal(err)
	}
	wholeResp := rawPost(t, client, base+"/v1/chat/completions", chat(false))
	if got := wholeResp.Header.Get("Keep-Alive"); got != "timeout=5, max=100" {
		t.Errorf("non-streamed Keep-Alive %q", got)
	}
	whole := decodeJSON(t, readAll(t, wholeResp))
	if a, b := shape(whole), shape(decodeJSON(t, string(raw))); a != b {
		t.Errorf("non-streamed shape\n got %s\nwant %s", a, b)
	}
	tr = truthByID(t, e, func(tr RequestTruth) bool { return tr.ChunkID == str(whole["id"]) })
	if tr.CachedTokens != 38 || tr.Stream || tr.FirstTokenFlushed != tr.Finish {
		t.Errorf("non-streamed truth cached %d stream %v", tr.CachedTokens, tr.Stream)
	}
	checkTimings(t, whole["timings"].(map[string]any), tr)

	// Streamed completion.
	_, capEvs = fixtureEvents(t, "testdata/llamacpp/completions-stream.http")
	evs = dataEvents(t, readEvents(t, rawPost(t, client, base+"/completions",
		map[string]any{"prompt": "one two three four five six", "max_tokens": 8, "stream": true}).Body))
	if len(evs) != len(capEvs) {
		t.Fatalf("completion: %d events, the capture has %d", len(evs), len(capEvs))
	}
	for i := range evs {
		if a, b := shape(evs[i]), shape(capEvs[i]); a != b {
			t.Errorf("completion event %d shape\n got %s\nwant %s", i, a, b)
		}
	}
	tr = truthByID(t, e, func(tr RequestTruth) bool { return tr.ChunkID == str(evs[0]["id"]) })
	if tr.Endpoint != EndpointCompletions || tr.PromptTokens != 6 || tr.TemplateTokens != 0 {
		t.Errorf("completion truth endpoint %q prompt %d template %d", tr.Endpoint, tr.PromptTokens, tr.TemplateTokens)
	}
	checkTimings(t, evs[len(evs)-1]["timings"].(map[string]any), tr)

	// Tokenizer endpoints: the shapes captured, and counts that agree with usage.
	for _, c := range []struct{ path, file string }{{"/tokenize", "tokenize.json"}, {"/apply-template", "apply-template.json"}} {
		raw, err := os.ReadFile("testdata/llamacpp/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		body := map[string]any{"content": fixtureMessage}
		if c.path == "/apply-template" {
			body = map[string]any{"messages": []map[string]any{{"role": "user", "content": fixtureMessage}}}
		}
		got := decodeJSON(t, readAll(t, rawPost(t, client, base+c.path, body)))
		if a, b := shape(got), shape(decodeJSON(t, string(raw))); a != b {
			t.Errorf("%s shape %s, want %s", c.path, a, b)
		}
	}
}

// checkTimings compares a timings object with the truth it must come from.
func checkTimings(t *testing.T, tm map[string]any, tr RequestTruth) {
	t.Helper()
	// Whole microseconds, as llama.cpp's clock counts; the generation rates
	// count steps, each token but the first.
	promptMS := float64((tr.PrefillEnd-tr.PrefillStart)/time.Microsecond) / 1e3
	predictedMS := float64(max((tr.DecodeEnd-tr.PrefillEnd)/time.Microsecond, 1)) / 1e3
	promptN, steps := float64(tr.PromptTokens-tr.CachedTokens), float64(tr.GeneratedTokens-1)
	want := map[string]float64{
		"cache_n": float64(tr.CachedTokens), "prompt_n": promptN,
		"prompt_ms": promptMS, "predicted_n": float64(tr.GeneratedTokens), "predicted_ms": predictedMS,
		"prompt_per_token_ms":    promptMS / promptN,
		"predicted_per_token_ms": predictedMS / steps,
		"prompt_per_second":      1e3 * promptN / promptMS,
		"predicted_per_second":   1e3 * steps / predictedMS,
	}
	for k, w := range want {
		if g := num(tm[k]); g != w {
			t.Errorf("timings.%s = %v, want %v from the truth", k, tm[k], w)
		}
	}
}

// TestLlamaCppStreamErrorMidStream: the stream ends with an error event as
// the captured one does, and the engine generates the request to its end.
func TestLlamaCppStreamErrorMidStream(t *testing.T) {
	t.Parallel()
	p := llamaParams(t)
	p.SSEPing = true
	e, ep := startEngine(t, Config{Dialect: DialectLlamaCpp, Params: p, Faults: Faults{StreamErrorRate: 1, AfterTokens: 5}})
	_, capEvs := fixtureEvents(t, "testdata/llamacpp/chat-stream-error-midstream.sse")
	raw := readEvents(t, rawPost(t, newClient(), ep.BaseURL+"/chat/completions", map[string]any{
		"messages": []map[string]any{{"role": "user", "content": fixtureMessage}}, "max_tokens": 24, "stream": true,
	}).Body)
	if n := len(raw); n < 2 || !raw[n-2].comment || raw[n-1].comment {
		t.Fatalf("want a comment before the last event, got %v", raw)
	}
	evs := dataEvents(t, raw)
	last := evs[len(evs)-1]
	if a, b := shape(last), shape(capEvs[len(capEvs)-1]); a != b {
		t.Errorf("error event shape %s, want %s", a, b)
	}
	if len(evs) != 1+5+1 {
		t.Errorf("%d events, want role, 5 tokens, error", len(evs))
	}
	tr := e.Truth()[0]
	if tr.Outcome != OutcomeBroken || tr.OutputTokens != 5 || tr.GeneratedTokens != 24 || tr.Done ||
		len(tr.Faults) != 1 || tr.Faults[0] != FaultStreamError || tr.Comments != 1+5+1 {
		t.Errorf("truth outcome %s output %d generated %d done %v faults %v comments %d",
			tr.Outcome, tr.OutputTokens, tr.GeneratedTokens, tr.Done, tr.Faults, tr.Comments)
	}
	if got := value(t, scrape(t, ep.MetricsURL), "llamacpp:tokens_predicted_total"); got != 24 {
		t.Errorf("tokens_predicted_total %v, want the 24 generated", got)
	}
}

// TestLlamaCppGaugesCountHeldRequests: as a real llama.cpp server computes
// them when /metrics is asked, requests_processing counts the busy slots
// (-np caps them) and requests_deferred the requests waiting for one, so
// together they count every request the engine holds at the scrape; when
// the clients go away, the server cancels their tasks and both return to 0.
func TestLlamaCppGaugesCountHeldRequests(t *testing.T) {
	t.Parallel()
	p := llamaParams(t)
	p.MaxRunningRequests = 2 // llama-server -np 2
	_, ep := startEngine(t, Config{Dialect: DialectLlamaCpp, Params: p})
	client := newClient()
	const sent = 5
	var bodies []io.Closer
	for range sent {
		resp := rawPost(t, client, ep.BaseURL+"/chat/completions", map[string]any{
			"messages": []map[string]any{{"role": "user", "content": fixtureMessage}}, "max_tokens": 3000, "stream": true})
		bodies = append(bodies, resp.Body)
	}
	gauges := func() (processing, deferred float64) {
		fams := parseExposition(t, scrapeText(t, ep.MetricsURL))
		return value(t, fams, "llamacpp:requests_processing"), value(t, fams, "llamacpp:requests_deferred")
	}
	// The requests reach the engine in their own time: wait for them all.
	var processing, deferred float64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if processing, deferred = gauges(); processing+deferred == sent {
			break
		}
	}
	if processing != 2 || deferred != sent-2 {
		t.Errorf("requests_processing %v, requests_deferred %v with %d requests held by 2 slots: want 2 and %d", processing, deferred, sent, sent-2)
	}
	for _, b := range bodies {
		b.Close()
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if processing, deferred = gauges(); processing+deferred == 0 {
			break
		}
	}
	if processing != 0 || deferred != 0 {
		t.Errorf("after the clients left: requests_processing %v, requests_deferred %v, want 0 and 0", processing, deferred)
	}
}

// TestLlamaCppGaugesCountArrivals: the real server answers /metrics after
// the pass under way and after the tasks posted before the scrape, so a
// request that arrived during the pass already holds a free slot, or is
// deferred, in the answer.
func TestLlamaCppGaugesCountArrivals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		slots, processing, deferred, arrived int
		wantProcessing, wantDeferred         int
	}{
		{slots: 4, processing: 2, arrived: 2, wantProcessing: 4},
		{slots: 2, processing: 1, arrived: 3, wantProcessing: 2, wantDeferred: 2},
		{slots: 2, processing: 2, deferred: 1, arrived: 1, wantProcessing: 2, wantDeferred: 2},
		{slots: 4, processing: 3, wantProcessing: 3},
	} {
		m := newLlamaCppMetrics(time.Now(), tc.slots, func() int { return tc.arrived })
		m.processing, m.deferred = tc.processing, tc.deferred
		if p, d := m.gauges(); p != tc.wantProcessing || d != tc.wantDeferred {
			t.Errorf("%+v: requests_processing %d, requests_deferred %d, want %d and %d", tc, p, d, tc.wantProcessing, tc.wantDeferred)
		}
	}
}
