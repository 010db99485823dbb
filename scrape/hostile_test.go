package scrape

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Issue 10: hostile input and faults. Nothing measured is lost or misreported.

func mapVLLM(t *testing.T, body string) Snapshot {
	t.Helper()
	fams, err := Parse([]byte(body), ctText)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	d, _ := DialectFor("vllm")
	return d.Map(fams)
}

func TestNonFiniteSeriesMakeTheConceptAbsent(t *testing.T) {
	t.Parallel()
	// Two dp ranks in one exposition: one +Inf must not leave the other as the total.
	s := mapVLLM(t, "# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total{engine=\"0\"} 10\nvllm:prompt_tokens_total{engine=\"1\"} +Inf\n"+
		"# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc NaN\n"+
		"# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total 7\n")
	if v, ok := s.Counters[PromptTokens]; ok {
		t.Errorf("prompt_tokens = %v, want absent", v)
	}
	if why := s.Invalid[PromptTokens]; !strings.Contains(why, `engine="1"`) || !strings.Contains(why, "+Inf") {
		t.Errorf("prompt_tokens reason %q, want the +Inf series named", why)
	}
	if v, ok := s.Gauges[KVCacheUsage]; ok || s.Invalid[KVCacheUsage] == "" {
		t.Errorf("NaN gauge: %v, %v (reason %q), want absent with a reason", v, ok, s.Invalid[KVCacheUsage])
	}
	if s.Counters[GenerationTokens] != 7 {
		t.Errorf("generation_tokens = %v, want 7 (the others are unaffected)", s.Counters[GenerationTokens])
	}

	// Two replicas, each mapped alone: 10 and +Inf sum to absent.
	a := mapVLLM(t, "# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total 10\n")
	b := mapVLLM(t, "# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total +Inf\n")
	sum := Sum(a, b)
	if v, ok := sum.Counters[PromptTokens]; ok {
		t.Errorf("Sum: prompt_tokens = %v, want absent", v)
	}
	if why := sum.Invalid[PromptTokens]; !strings.Contains(why, "replica 2 of 2") {
		t.Errorf("Sum: reason %q, want it to name replica 2", why)
	}
	// And a delta against an invalid snapshot is absent too, either way round.
	for _, d := range []Snapshot{Delta(a, b), Delta(b, a)} {
		if _, ok := d.Counters[PromptTokens]; ok || d.Invalid[PromptTokens] == "" {
			t.Errorf("Delta: prompt_tokens %v, reason %q, want absent with a reason", d.Counters, d.Invalid[PromptTokens])
		}
	}
}

func TestDuplicateSeriesFailTheScrape(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, body, ct string }{
		{"text", "# TYPE a counter\na_total{x=\"1\",y=\"2\"} 3\nb 1\na_total{y=\"2\", x=\"1\"} 5\n", ctText},
		{"openmetrics", "# TYPE a counter\na_total{x=\"1\",y=\"2\"} 3\nb 1\na_total{y=\"2\",x=\"1\"} 5\n# EOF\n", ctOpenMetrics},
	} {
		_, err := Parse([]byte(tt.body), tt.ct)
		if err == nil {
			t.Fatalf("%s: duplicate series parsed", tt.name)
		}
		for _, want := range []string{"duplicate series", "line 4", `a_total{x="1",y="2"}`, "first at line 2"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not contain %q", tt.name, err, want)
			}
		}
	}
	// The same labels on different names, or different buckets, are not duplicates.
	if _, err := Parse([]byte("a{x=\"1\"} 1\nb{x=\"1\"} 1\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 1\nh_count 1\nh_sum 1\n"), ctText); err != nil {
		t.Errorf("distinct series: %v", err)
	}
}

func TestInvalidCountersAndHistograms(t *testing.T) {
	t.Parallel()
	s := mapVLLM(t, `# TYPE vllm:request_success_total counter
vllm:request_success_total{finished_reason="stop"} -3
# TYPE vllm:e2e_request_latency_seconds histogram
vllm:e2e_request_latency_seconds_bucket{le="1"} 2
vllm:e2e_request_latency_seconds_bucket{le="+Inf"} 4
vllm:e2e_request_latency_seconds_count 4
vllm:e2e_request_latency_seconds_sum -7
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{le="0.1"} 5
vllm:time_to_first_token_seconds_bucket{le="+Inf"} 9
vllm:time_to_first_token_seconds_count 6
vllm:time_to_first_token_seconds_sum 1
# TYPE vllm:request_queue_time_seconds histogram
vllm:request_queue_time_seconds_bucket{le="0.1"} 5
vllm:request_queue_time_seconds_bucket{le="1"} 3
vllm:request_queue_time_seconds_bucket{le="+Inf"} 5
vllm:request_queue_time_seconds_count 5
vllm:request_queue_time_seconds_sum 1
# TYPE vllm:request_prefill_time_seconds histogram
vllm:request_prefill_time_seconds_bucket{le="0.1"} 5
vllm:request_prefill_time_seconds_bucket{le="+Inf"} 5
vllm:request_prefill_time_seconds_count 5
vllm:request_prefill_time_seconds_sum 0.2
`)
	for c, want := range map[Concept]string{
		RequestsFinished: "a counter cannot be negative",
		E2E:              "negative",
		TTFT:             "_count 6 is below its bucket total 9",
		Queue:            "cumulative buckets decrease",
	} {
		if s.has(c) {
			t.Errorf("%s present (%v %v), want absent", c, s.Counters[c], s.Histograms[c])
		}
		if why := s.Invalid[c]; !strings.Contains(why, want) {
			t.Errorf("%s: reason %q, want %q", c, why, want)
		}
	}
	if h, ok := s.Histograms[Prefill]; !ok || h.Count != 5 {
		t.Errorf("a valid histogram beside them: %+v, %v", h, ok)
	}
}

func TestCRLFAndBOM(t *testing.T) {
	t.Parallel()
	lf := fixture(t, "vllm_v1.txt")
	want := mapVLLM(t, string(lf))
	crlf := append([]byte("\xef\xbb\xbf"), bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\n"))...)
	for _, ct := range []string{ctText, ""} {
		fams, err := Parse(crlf, ct)
		if err != nil {
			t.Fatalf("CRLF with a BOM (%q): %v", ct, err)
		}
		d, _ := DialectFor("vllm")
		if got := d.Map(fams); len(got.Counters) != len(want.Counters) || got.Counters[RequestsFinished] != want.Counters[RequestsFinished] {
			t.Errorf("CRLF: counters %v, want %v", got.Counters, want.Counters)
		}
	}
	om := []byte("\xef\xbb\xbf# TYPE a counter\r\na_total 1\r\n# EOF\r\n")
	if _, err := Parse(om, ctOpenMetrics); err != nil {
		t.Errorf("OpenMetrics with CRLF and a BOM: %v", err)
	}
}

func TestHistogramsWithoutTypeLines(t *testing.T) {
	t.Parallel()
	// A `grep vllm:` capture: no # lines at all.
	var grepped []string
	for _, l := range strings.Split(string(fixture(t, "vllm_v1.txt")), "\n") {
		if strings.HasPrefix(l, "vllm:") {
			grepped = append(grepped, l)
		}
	}
	want := mapVLLM(t, string(fixture(t, "vllm_v1.txt")))
	got := mapVLLM(t, strings.Join(grepped, "\n")+"\n")
	if len(want.Histograms) == 0 {
		t.Fatal("fixture without histograms")
	}
	for c, h := range want.Histograms {
		g, ok := got.Histograms[c]
		if !ok || g.Count != h.Count || g.Sum != h.Sum || len(g.Bounds) != len(h.Bounds) {
			t.Errorf("%s: grep capture %+v (%v), want %+v", c, g, ok, h)
		}
	}
}

func TestNotAnExposition(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, body, ct, want string }{
		{"html content type", "hello", "text/html; charset=utf-8", "the server sent text/html, not a Prometheus exposition"},
		{"doctype", "\n<!DOCTYPE html>\n<p>login</p>\n", ctText, "the server sent text/html, not a Prometheus exposition"},
		{"html tag", "<HTML><body>x</body></HTML>", "", "the server sent text/html, not a Prometheus exposition"},
		{"empty", "", ctText, "empty /metrics body"},
		{"white space", " \r\n\n", "", "empty /metrics body"},
		{"empty protobuf", "", "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited", "empty /metrics body"},
	} {
		_, err := Parse([]byte(tt.body), tt.ct)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

// endless is a body that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = "a 1\n"[i%4]
	}
	return len(p), nil
}

func TestEndlessBodyIsCapped(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	body, err := readBody(endless{}, -1)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrBodyTooLarge) || !strings.Contains(err.Error(), "32 MiB") {
		t.Fatalf("endless body: error %v, want %v", err, ErrBodyTooLarge)
	}
	if len(body) != MaxBody {
		t.Errorf("kept %d bytes, want MaxBody", len(body))
	}
	// Reading costs a small multiple of the cap, never more.
	if ratio := float64(after.TotalAlloc-before.TotalAlloc) / MaxBody; ratio > 4 {
		t.Errorf("reading an endless body allocated %.1f× MaxBody", ratio)
	}
}

func TestTooManySeries(t *testing.T) { // not parallel: it measures allocation
	var b bytes.Buffer
	for i := 0; i <= MaxSeries; i++ {
		b.WriteString("a{i=\"")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('0' + i%10)))
		b.WriteString("\",n=\"")
		b.WriteString(itoa(i))
		b.WriteString("\"} 1\n")
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Parse(b.Bytes(), ctText)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "more than 200000 series") {
		t.Fatalf("error %v, want the series cap", err)
	}
	// Rejected before the parser builds anything: far less than the
	// parser's tens of bytes per body byte.
	if ratio := float64(after.TotalAlloc-before.TotalAlloc) / float64(b.Len()); ratio > 20 {
		t.Errorf("rejecting %d bytes allocated %.1f bytes per byte", b.Len(), ratio)
	}
}

func itoa(i int) string {
	var buf [20]byte
	n := len(buf)
	for {
		n--
		buf[n] = byte('0' + i%10)
		if i /= 10; i == 0 {
			return string(buf[n:])
		}
	}
}

func TestInspectFileCapped(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "big.txt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(f, endless{}, MaxBody+1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = InspectDialect(t.Context(), path, "")
	if err == nil || !strings.Contains(err.Error(), "body larger than 32 MiB") {
		t.Errorf("inspect of a file over MaxBody: %v", err)
	}
}

func TestInspectShowsWhyAConceptIsUnusable(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.txt")
	if err := os.WriteFile(path, []byte("# TYPE vllm:prompt_tokens_total counter\r\nvllm:prompt_tokens_total{engine=\"0\"} 10\r\nvllm:prompt_tokens_total{engine=\"1\"} +Inf\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := InspectDialect(t.Context(), path, "")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `prompt_tokens  unusable: vllm:prompt_tokens_total{engine="1"} is +Inf`) {
		t.Errorf("inspect output lacks the reason:\n%s", b.String())
	}
}

// Finite values that add up beyond float64 — two dp ranks, or two replicas,
// each reporting 1e308 — make the concept unknown with a reason, never
// +Inf (which no summary.json or run.json can encode).
func TestFiniteSeriesOverflowingMakeTheConceptAbsent(t *testing.T) {
	t.Parallel()
	const huge = "1.7e308"
	one := mapVLLM(t, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\"} "+huge+"\nvllm:num_requests_running{engine=\"1\"} "+huge+"\n"+
		"# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total 7\n")
	if v, ok := one.Gauges[RequestsRunning]; ok || !strings.Contains(one.Invalid[RequestsRunning], "beyond the largest float64") {
		t.Errorf("two series of %s: running = %v (present %v), reason %q; want absent, the overflow named", huge, v, ok, one.Invalid[RequestsRunning])
	}
	if one.Counters[GenerationTokens] != 7 {
		t.Errorf("generation_tokens = %v, want 7", one.Counters[GenerationTokens])
	}
	a := mapVLLM(t, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running "+huge+"\n# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total "+huge+"\n"+
		"# TYPE vllm:e2e_request_latency_seconds histogram\nvllm:e2e_request_latency_seconds_bucket{le=\"1\"} "+huge+"\nvllm:e2e_request_latency_seconds_bucket{le=\"+Inf\"} "+huge+"\nvllm:e2e_request_latency_seconds_count "+huge+"\nvllm:e2e_request_latency_seconds_sum 1\n")
	sum := Sum(a, a)
	for _, c := range []Concept{RequestsRunning, PromptTokens, E2E} {
		if _, ok := sum.Gauges[c]; ok {
			t.Errorf("Sum: gauge %s present", c)
		}
		if _, ok := sum.Counters[c]; ok {
			t.Errorf("Sum: counter %s present", c)
		}
		if _, ok := sum.Histograms[c]; ok {
			t.Errorf("Sum: histogram %s present", c)
		}
		if !strings.Contains(sum.Invalid[c], "add up beyond the largest float64") {
			t.Errorf("Sum: %s reason %q, want the overflow named", c, sum.Invalid[c])
		}
	}
	if _, err := json.Marshal(sum); err != nil {
		t.Errorf("the sum does not encode: %v", err)
	}
}
