package scrape

import (
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// histShape is what a dialect test checks of a mapped histogram: the full
// bucket lists are in the fixtures, their ends and totals are enough here.
type histShape struct {
	Count, Sum    float64
	NBounds       int
	Bottom, Top   float64
	TopCumulative float64
}

func shapeOf(h Histogram) histShape {
	s := histShape{Count: h.Count, Sum: h.Sum, NBounds: len(h.Bounds)}
	if n := len(h.Bounds); n > 0 {
		s.Bottom, s.Top, s.TopCumulative = h.Bounds[0], h.Bounds[n-1], h.Cumulative[n-1]
	}
	return s
}

type dialectCase struct {
	name        string
	fixture     string
	contentType string
	dialect     string // "" = auto
	wantDialect string
	gauges      map[Concept]float64
	counters    map[Concept]float64
	histograms  map[Concept]histShape
}

func runDialectCases(t *testing.T, tests []dialectCase) {
	t.Helper()
	approx := cmpopts.EquateApprox(1e-12, 1e-9)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fams, err := Parse(fixture(t, tt.fixture), tt.contentType)
			if err != nil {
				t.Fatal(err)
			}
			d, err := DialectFor(tt.dialect)
			if err != nil {
				t.Fatal(err)
			}
			s := d.Map(fams)
			if s.Dialect != tt.wantDialect {
				t.Errorf("dialect = %q, want %q", s.Dialect, tt.wantDialect)
			}
			if diff := cmp.Diff(tt.gauges, s.Gauges, approx, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("gauges (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.counters, s.Counters, approx, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("counters (-want +got):\n%s", diff)
			}
			got := map[Concept]histShape{}
			for c, h := range s.Histograms {
				got[c] = shapeOf(h)
				if len(h.Bounds) != len(h.Cumulative) {
					t.Errorf("%s: %d bounds, %d cumulative counts", c, len(h.Bounds), len(h.Cumulative))
				}
			}
			if diff := cmp.Diff(tt.histograms, got, approx, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("histograms (-want +got):\n%s", diff)
			}
			if _, err := json.Marshal(s); err != nil {
				t.Errorf("snapshot does not encode: %v", err)
			}
		})
	}
}

func TestSGLangDialect(t *testing.T) {
	t.Parallel()
	stageTop := 0.001 * math.Pow(1.62, 29)
	runDialectCases(t, []dialectCase{
		{
			name: "current layout", fixture: "sglang.txt", contentType: ctText, dialect: "sglang", wantDialect: "sglang",
			gauges: map[Concept]float64{RequestsRunning: 16, RequestsWaiting: 3, KVCacheUsage: 0.42, GenThroughput: 812.5},
			counters: map[Concept]float64{PromptTokens: 40960, GenerationTokens: 40960, CachedTokens: 2048 + 512,
				RequestsFinished: 320, RequestsAborted: 2, Preemptions: 1},
			histograms: map[Concept]histShape{
				TTFT:    {Count: 320, Sum: 30.5, NBounds: 18, Bottom: 0.1, Top: 400, TopCumulative: 320},
				ITL:     {Count: 40640, Sum: 955.04, NBounds: 23, Bottom: 0.002, Top: 8, TopCumulative: 40640},
				E2E:     {Count: 320, Sum: 1024, NBounds: 22, Bottom: 0.1, Top: 2400, TopCumulative: 320},
				Queue:   {Count: 320, Sum: 1.75, NBounds: 36, Bottom: 0, Top: 3000, TopCumulative: 320},
				Prefill: {Count: 320, Sum: 1.6, NBounds: 30, Bottom: 0.001, Top: stageTop, TopCumulative: 320},
			},
		},
		{
			name: "auto-detected", fixture: "sglang.txt", contentType: ctText, wantDialect: "sglang",
			gauges: map[Concept]float64{RequestsRunning: 16, RequestsWaiting: 3, KVCacheUsage: 0.42, GenThroughput: 812.5},
			counters: map[Concept]float64{PromptTokens: 40960, GenerationTokens: 40960, CachedTokens: 2560,
				RequestsFinished: 320, RequestsAborted: 2, Preemptions: 1},
			histograms: map[Concept]histShape{
				TTFT:    {Count: 320, Sum: 30.5, NBounds: 18, Bottom: 0.1, Top: 400, TopCumulative: 320},
				ITL:     {Count: 40640, Sum: 955.04, NBounds: 23, Bottom: 0.002, Top: 8, TopCumulative: 40640},
				E2E:     {Count: 320, Sum: 1024, NBounds: 22, Bottom: 0.1, Top: 2400, TopCumulative: 320},
				Queue:   {Count: 320, Sum: 1.75, NBounds: 36, Bottom: 0, Top: 3000, TopCumulative: 320},
				Prefill: {Count: 320, Sum: 1.6, NBounds: 30, Bottom: 0.001, Top: stageTop, TopCumulative: 320},
			},
		},
		{
			// Two DP ranks add up; their two TP ranks repeat the same batch and
			// count once; the tokenizer's priority series add up.
			name: "dp ranks sum, tp ranks are mirrors", fixture: "sglang_dp2_tp2.txt", contentType: ctText, wantDialect: "sglang",
			gauges:   map[Concept]float64{RequestsRunning: 15, RequestsWaiting: 2, KVCacheUsage: 0.4, GenThroughput: 780},
			counters: map[Concept]float64{PromptTokens: 24320, GenerationTokens: 48640, RequestsFinished: 190, Preemptions: 4},
			histograms: map[Concept]histShape{
				TTFT:  {Count: 190, Sum: 29, NBounds: 18, Bottom: 0.1, Top: 400, TopCumulative: 190},
				Queue: {Count: 190, Sum: 4.2, NBounds: 36, Bottom: 0, Top: 3000, TopCumulative: 190},
			},
		},
		{
			name: "gateway underscore prefix", fixture: "sglang_gateway.txt", contentType: ctText, wantDialect: "sglang",
			gauges:     map[Concept]float64{RequestsRunning: 5},
			counters:   map[Concept]float64{RequestsFinished: 77},
			histograms: map[Concept]histShape{TTFT: {Count: 77, Sum: 50, NBounds: 18, Bottom: 0.1, Top: 400, TopCumulative: 77}},
		},
		{
			// The old per-chunk TPOT running average is not mapped to anything.
			name: "old release", fixture: "sglang_old.txt", contentType: ctText, wantDialect: "sglang",
			gauges:   map[Concept]float64{RequestsRunning: 150, RequestsWaiting: 2500, KVCacheUsage: 0.31, GenThroughput: 90.25},
			counters: map[Concept]float64{PromptTokens: 6.5e6, GenerationTokens: 6.1e6},
			histograms: map[Concept]histShape{
				TTFT: {Count: 9000, Sum: 1.9e6, NBounds: 20, Bottom: 0.001, Top: 30, TopCumulative: 2000},
				E2E:  {Count: 9100, Sum: 2.6e6, NBounds: 15, Bottom: 0.3, Top: 60, TopCumulative: 2110},
			},
		},
		{
			name: "openmetrics", fixture: "sglang_openmetrics.txt", contentType: ctOpenMetrics, wantDialect: "sglang",
			gauges:     map[Concept]float64{RequestsRunning: 4, KVCacheUsage: 0.125},
			counters:   map[Concept]float64{RequestsFinished: 12, PromptTokens: 1536},
			histograms: map[Concept]histShape{TTFT: {Count: 12, Sum: 1.125, NBounds: 3, Bottom: 0.1, Top: 0.4, TopCumulative: 12}},
		},
		{
			// _created gauges are ignored and a NaN gauge is absent, not zero.
			name: "_created series and NaN", fixture: "sglang_created.txt", contentType: ctText, wantDialect: "sglang",
			counters:   map[Concept]float64{RequestsFinished: 12},
			histograms: map[Concept]histShape{E2E: {Count: 12, Sum: 7.5, NBounds: 3, Bottom: 0.1, Top: 0.4, TopCumulative: 3}},
		},
		{
			name: "no engine names", fixture: "not_an_engine.txt", contentType: ctText, wantDialect: "",
		},
	})
}

func TestDialectFor(t *testing.T) {
	t.Parallel()
	for _, name := range append(DialectNames(), "", Auto) {
		d, err := DialectFor(name)
		if err != nil {
			t.Errorf("DialectFor(%q): %v", name, err)
			continue
		}
		if want := name; want != "" && d.Name() != want {
			t.Errorf("DialectFor(%q).Name() = %q", name, d.Name())
		}
	}
	if _, err := DialectFor("ollama"); err == nil {
		t.Error("DialectFor(ollama): no error")
	}
}

func TestDetect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fixture string
		want    string // "" = nil
	}{
		{"sglang.txt", "sglang"},
		{"sglang_gateway.txt", "sglang"},
		{"sglang_old.txt", "sglang"},
		{"vllm_v1.txt", "vllm"},
		{"vllm_v08.txt", "vllm"},
		{"vllm_v0.txt", "vllm"},
		{"fastdeploy.txt", "fastdeploy"},
		{"tgi.txt", "tgi"},
		{"llamacpp.txt", "llamacpp"},
		{"triton_trtllm.txt", "triton"},
		{"trtllm_serve.txt", "trtllm"},
		{"not_an_engine.txt", ""},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			t.Parallel()
			fams, err := Parse(fixture(t, tt.fixture), ctText)
			if err != nil {
				t.Fatal(err)
			}
			d := Detect(fams)
			got := ""
			if d != nil {
				got = d.Name()
			}
			if got != tt.want {
				t.Errorf("Detect = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	for _, name := range DialectNames() {
		d, _ := DialectFor(name)
		desc, ok := d.(Describer)
		if !ok {
			t.Errorf("%s: not a Describer", name)
			continue
		}
		seen := map[Concept]bool{}
		for _, m := range desc.Describe() {
			if seen[m.Concept] {
				t.Errorf("%s: %s described twice", name, m.Concept)
			}
			seen[m.Concept] = true
			if len(m.Metrics) == 0 {
				t.Errorf("%s: %s names no metric", name, m.Concept)
			}
		}
	}
	d, _ := DialectFor("sglang")
	for _, m := range d.(Describer).Describe() {
		if m.Concept == ITL && !strings.Contains(m.Note, "counts tokens") {
			t.Errorf("sglang ITL note does not say it counts tokens: %q", m.Note)
		}
	}
}

func TestOtherDialects(t *testing.T) {
	t.Parallel()
	req := func(count, sum float64) histShape {
		return histShape{Count: count, Sum: sum, NBounds: 21, Bottom: 0.3, Top: 7680, TopCumulative: count}
	}
	vttft := func(count, sum float64) histShape {
		return histShape{Count: count, Sum: sum, NBounds: 22, Bottom: 0.001, Top: 2560, TopCumulative: count}
	}
	vitl := func(count, sum float64) histShape {
		return histShape{Count: count, Sum: sum, NBounds: 19, Bottom: 0.01, Top: 80, TopCumulative: count}
	}
	tgiTop := 0.0001 * math.Pow(1.5, 35)
	tgiDur := func(count, sum float64) histShape {
		return histShape{Count: count, Sum: sum, NBounds: 35, Bottom: 0.00015, Top: tgiTop, TopCumulative: count}
	}
	runDialectCases(t, []dialectCase{
		{
			name: "vllm v1, two DP engines", fixture: "vllm_v1.txt", contentType: ctText, wantDialect: "vllm",
			gauges: map[Concept]float64{RequestsRunning: 14, RequestsWaiting: 1, KVCacheUsage: 0.3},
			counters: map[Concept]float64{PromptTokens: 32000, GenerationTokens: 40960, PrefixQueries: 32000, PrefixHits: 8000,
				RequestsReceived: 324, RequestsFinished: 320, RequestsAborted: 3, Preemptions: 2},
			histograms: map[Concept]histShape{
				TTFT: vttft(320, 15), ITL: vitl(40640, 812.8), TPOT: vitl(320, 6.4),
				E2E: req(320, 288), Queue: req(320, 3.2), Prefill: req(320, 12.8), Decode: req(320, 272), Inference: req(320, 284.8),
			},
		},
		{
			name: "vllm v0.8 names", fixture: "vllm_v08.txt", contentType: ctText, wantDialect: "vllm",
			gauges: map[Concept]float64{RequestsRunning: 4, RequestsWaiting: 2, KVCacheUsage: 0.5},
			counters: map[Concept]float64{PromptTokens: 10240, GenerationTokens: 20480, PrefixQueries: 640, PrefixHits: 160,
				RequestsFinished: 80, RequestsAborted: 1},
			histograms: map[Concept]histShape{TTFT: vttft(80, 6.4), ITL: vitl(20400, 408), E2E: req(80, 180)},
		},
		{
			name: "vllm v0 engine", fixture: "vllm_v0.txt", contentType: ctText, wantDialect: "vllm",
			gauges:     map[Concept]float64{RequestsRunning: 3, RequestsWaiting: 0, KVCacheUsage: 0.125, PrefixCacheHit: 0.75, GenThroughput: 412.5},
			counters:   map[Concept]float64{PromptTokens: 3000, GenerationTokens: 6000, RequestsFinished: 30, Preemptions: 0},
			histograms: map[Concept]histShape{Queue: req(30, 0.3)},
		},
		{
			name: "vllm openmetrics", fixture: "vllm_openmetrics.txt", contentType: ctOpenMetrics, wantDialect: "vllm",
			gauges:     map[Concept]float64{RequestsRunning: 2},
			counters:   map[Concept]float64{PromptTokens: 512, RequestsFinished: 4, RequestsAborted: 1},
			histograms: map[Concept]histShape{E2E: {Count: 5, Sum: 4.25, NBounds: 2, Bottom: 0.3, Top: 0.5, TopCumulative: 2}},
		},
		{
			name: "fastdeploy", fixture: "fastdeploy.txt", contentType: ctText, wantDialect: "fastdeploy",
			gauges: map[Concept]float64{RequestsRunning: 12, RequestsWaiting: 5, KVCacheUsage: 0.6, PrefixCacheHit: 0.125, BatchSize: 12},
			counters: map[Concept]float64{PromptTokens: 30720, GenerationTokens: 61440, CachedTokens: 3840,
				RequestsReceived: 260, RequestsFinished: 240},
			histograms: map[Concept]histShape{
				TTFT: {Count: 240, Sum: 150, NBounds: 12, Bottom: 0.001, Top: 1, TopCumulative: 200},
				ITL:  {Count: 60960, Sum: 1536, NBounds: 12, Bottom: 0.01, Top: 1, TopCumulative: 60960},
				E2E:  req(240, 960), Queue: req(240, 12), Prefill: req(240, 24), Decode: req(240, 900), Inference: req(240, 924),
			},
		},
		{
			name: "tgi", fixture: "tgi.txt", contentType: ctText, wantDialect: "tgi",
			gauges:   map[Concept]float64{RequestsRunning: 16, RequestsWaiting: 4, BatchSize: 16},
			counters: map[Concept]float64{PromptTokens: 12800, GenerationTokens: 25600, RequestsReceived: 105, RequestsFinished: 100},
			histograms: map[Concept]histShape{
				E2E: tgiDur(100, 250), Queue: tgiDur(100, 0.5), Inference: tgiDur(100, 249.5), TPOT: tgiDur(100, 1.95),
			},
		},
		{
			name: "llama.cpp", fixture: "llamacpp.txt", contentType: ctText, wantDialect: "llamacpp",
			gauges: map[Concept]float64{RequestsRunning: 4, RequestsWaiting: 1, KVCacheUsage: 0.18, GenThroughput: 84.88, BatchSize: 3.56},
			counters: map[Concept]float64{PromptTokens: 4096, GenerationTokens: 8192,
				DecodeSeconds: 96.512, PrefillSeconds: 1.372},
		},
		{
			// A real llama-server (upstream 0253fb21f595) after three
			// requests: n_busy_slots_per_decode is a gauge there.
			name: "llama.cpp, real capture", fixture: "llamacpp_real_after.txt", contentType: ctText, wantDialect: "llamacpp",
			gauges: map[Concept]float64{RequestsRunning: 0, RequestsWaiting: 0, GenThroughput: 4571.43, BatchSize: 1},
			counters: map[Concept]float64{PromptTokens: 45, GenerationTokens: 32,
				DecodeSeconds: 0.007, PrefillSeconds: 0.003},
		},
		{
			// The ensemble counts each request once per composing model:
			// 200 requests, not 800.
			name: "triton with tensorrt-llm", fixture: "triton_trtllm.txt", contentType: ctText, wantDialect: "triton",
			gauges:   map[Concept]float64{RequestsRunning: 7, RequestsWaiting: 3, KVCacheUsage: 0.4875},
			counters: map[Concept]float64{RequestsFinished: 200},
			histograms: map[Concept]histShape{
				TTFT:  {Count: 200, Sum: 12, NBounds: 4, Bottom: 0.1, Top: 5, TopCumulative: 200},
				E2E:   {Count: 200, Sum: 300},
				Queue: {Count: 200, Sum: 4},
			},
		},
		{
			name: "trtllm-serve", fixture: "trtllm_serve.txt", contentType: ctText, wantDialect: "trtllm",
			gauges:   map[Concept]float64{RequestsRunning: 9, RequestsWaiting: 2, KVCacheUsage: 0.33, PrefixCacheHit: 0.5},
			counters: map[Concept]float64{PromptTokens: 12800, GenerationTokens: 12800, RequestsFinished: 100, RequestsAborted: 2},
			histograms: map[Concept]histShape{
				TTFT: vttft(100, 15), ITL: vitl(12700, 254), E2E: req(100, 170), Queue: req(100, 1),
			},
		},
	})
}

// TestLlamaCppRealDelta: the real server's counters between a fresh start
// and three requests (chat streamed with 39 prompt tokens and 12 generated,
// the same unstreamed with 38 of its 39 prompt tokens from the prompt cache,
// a completion of 6 prompt tokens, 1 cached, and 8 generated). Its prompt
// counter counts processed tokens only (39 + 1 + 5 = 45, not the usage's
// 84), and its time counters keep each request's time in whole
// milliseconds: prompt times of 3.056, 0.296 and 0.422 ms added 3 ms,
// generation times of 3.937, 2.894 and 2.293 ms added 7 ms.
func TestLlamaCppRealDelta(t *testing.T) {
	t.Parallel()
	snap := func(name string) Snapshot {
		fams, err := Parse(fixture(t, name), ctText)
		if err != nil {
			t.Fatal(err)
		}
		if d := Detect(fams); d == nil || d.Name() != "llamacpp" {
			t.Fatalf("%s: detected %v, want llamacpp", name, d)
		}
		return llamacpp.Map(fams)
	}
	d := Delta(snap("llamacpp_real_before.txt"), snap("llamacpp_real_after.txt"))
	want := map[Concept]float64{PromptTokens: 45, GenerationTokens: 32, DecodeSeconds: 0.007, PrefillSeconds: 0.003}
	if diff := cmp.Diff(want, d.Counters, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("Δ counters (-want +got):\n%s", diff)
	}
	if len(d.Resets) > 0 {
		t.Errorf("resets %v", d.Resets)
	}
	if _, ok := d.Counters[RequestsFinished]; ok {
		t.Error("llama.cpp has no finished-request counter, yet one is mapped")
	}
	if perToken := d.Counters[DecodeSeconds] / d.Counters[GenerationTokens]; math.Abs(perToken-0.007/32) > 1e-12 {
		t.Errorf("engine time per generated token %v", perToken)
	}
}

// TestConceptKinds: the time counters are counters (differenced), listed
// among the concepts with the other counters.
func TestConceptKinds(t *testing.T) {
	t.Parallel()
	for _, c := range []Concept{DecodeSeconds, PrefillSeconds} {
		if c.Kind() != KindCounter {
			t.Errorf("%s is a %s, want a counter", c, c.Kind())
		}
		found := false
		for _, x := range Concepts() {
			found = found || x == c
		}
		if !found {
			t.Errorf("%s missing from Concepts()", c)
		}
	}
}

// TestDialectNames: the names scenario validation offers are the dialects
// DialectFor accepts, every engine of engine-metrics.md among them, and
// the unknown-name error lists them.
func TestDialectNames(t *testing.T) {
	t.Parallel()
	names := DialectNames()
	for _, want := range []string{"sglang", "vllm", "fastdeploy", "tgi", "llamacpp", "triton", "trtllm"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("DialectNames() = %v lacks %q", names, want)
		}
	}
	seen := map[string]bool{}
	for _, n := range names {
		if n == "" || n == Auto || seen[n] {
			t.Errorf("DialectNames() = %v: %q is empty, auto or repeated", names, n)
		}
		seen[n] = true
	}
	names[0] = "changed"
	if DialectNames()[0] == "changed" {
		t.Error("DialectNames returns the package's own slice")
	}
	_, err := DialectFor("ollama")
	if err == nil || !strings.Contains(err.Error(), strings.Join(DialectNames(), ", ")) {
		t.Errorf("DialectFor(ollama) = %v, want the known names listed", err)
	}
}

// TestDialectCounterReset maps a vLLM scrape and one after a restart: every
// counter and histogram went down and is reported as a reset.
func TestDialectCounterReset(t *testing.T) {
	t.Parallel()
	snap := func(name string) Snapshot {
		fams, err := Parse(fixture(t, name), ctText)
		if err != nil {
			t.Fatal(err)
		}
		return vllm.Map(fams)
	}
	before, after := snap("vllm_v1.txt"), snap("vllm_v1_restarted.txt")
	d := Delta(before, after)
	if diff := cmp.Diff(after.Counters, d.Counters, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("Δ counters after a restart should be the new values (-want +got):\n%s", diff)
	}
	var want []Concept // every counter and histogram of the restarted engine is lower
	for _, c := range allConcepts {
		if _, ok := after.Counters[c]; ok {
			want = append(want, c)
		}
		if _, ok := after.Histograms[c]; ok {
			want = append(want, c)
		}
	}
	if len(want) < 10 {
		t.Fatalf("only %d concepts mapped: %v", len(want), want)
	}
	if diff := cmp.Diff(want, d.Resets); diff != "" {
		t.Errorf("resets (-want +got):\n%s", diff)
	}
}

func TestMetricNamePattern(t *testing.T) {
	t.Parallel()
	tests := []struct {
		dialect  string
		match    []string
		notMatch []string
	}{
		{"sglang", []string{"sglang:num_requests_total", "sglang_num_running_reqs"}, []string{"vllm:num_requests_running", "up", "sglang:"}},
		{"vllm", []string{"vllm:prompt_tokens_total", "http_requests_total"}, []string{"http_requests_totalx", "sglang:token_usage"}},
		{"", []string{"tgi_queue_size", "nv_inference_request_success", "trtllm:x", "llamacpp:requests_processing", "fastdeploy:batch_size"},
			[]string{"go_goroutines", "process_start_time_seconds"}},
	}
	for _, tt := range tests {
		pat, err := MetricNamePattern(tt.dialect)
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile("^(?:" + pat + ")$")
		for _, n := range tt.match {
			if !re.MatchString(n) {
				t.Errorf("%q: pattern %q does not match %q", tt.dialect, pat, n)
			}
		}
		for _, n := range tt.notMatch {
			if re.MatchString(n) {
				t.Errorf("%q: pattern %q matches %q", tt.dialect, pat, n)
			}
		}
	}
	if _, err := MetricNamePattern("nope"); err == nil {
		t.Error("unknown dialect: no error")
	}
}
