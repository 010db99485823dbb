package scrape

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"
)

const (
	ctText        = "text/plain; version=0.0.4; charset=utf-8"
	ctOpenMetrics = "application/openmetrics-text; version=1.0.0; charset=utf-8"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func familyNames(fams []*dto.MetricFamily) []string {
	var names []string
	for _, f := range fams {
		names = append(names, f.GetName()+":"+f.GetType().String())
	}
	return names
}

func TestParse(t *testing.T) {
	t.Parallel()
	protoBody := func() []byte {
		var buf bytes.Buffer
		enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeProtoDelim))
		err := enc.Encode(&dto.MetricFamily{
			Name: proto.String("sglang:num_requests_total"), Type: dto.MetricType_COUNTER.Enum(),
			Metric: []*dto.Metric{{Counter: &dto.Counter{Value: proto.Float64(7)}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}()
	tests := []struct {
		name        string
		body        []byte
		contentType string
		wantFormat  string
		want        []string // family name:type, sorted
		wantErr     []string // substrings of the error
	}{
		{
			name: "text", body: fixture(t, "sglang_created.txt"), contentType: ctText, wantFormat: FormatText,
			want: []string{
				"sglang:e2e_request_latency_seconds:HISTOGRAM", "sglang:e2e_request_latency_seconds_created:GAUGE",
				"sglang:num_requests_created:GAUGE", "sglang:num_requests_total:COUNTER", "sglang:num_running_reqs:GAUGE",
			},
		},
		{
			name: "openmetrics by content type", body: fixture(t, "sglang_openmetrics.txt"), contentType: ctOpenMetrics, wantFormat: FormatOpenMetrics,
			want: []string{
				"sglang:num_requests_total:COUNTER", "sglang:num_running_reqs:GAUGE", "sglang:prompt_tokens_total:COUNTER",
				"sglang:time_to_first_token_seconds:HISTOGRAM", "sglang:token_usage:GAUGE",
			},
		},
		{
			name: "openmetrics sniffed from # EOF", body: fixture(t, "sglang_openmetrics.txt"), contentType: "", wantFormat: FormatOpenMetrics,
			want: []string{
				"sglang:num_requests_total:COUNTER", "sglang:num_running_reqs:GAUGE", "sglang:prompt_tokens_total:COUNTER",
				"sglang:time_to_first_token_seconds:HISTOGRAM", "sglang:token_usage:GAUGE",
			},
		},
		{
			name: "text sniffed", body: []byte("# TYPE a gauge\na 1\n"), contentType: "", wantFormat: FormatText,
			want: []string{"a:GAUGE"},
		},
		{
			name: "utf-8 quoted name", body: []byte("{\"engine.requests\",model=\"m\"} 3\n"), contentType: ctText, wantFormat: FormatText,
			want: []string{"engine.requests:UNTYPED"},
		},
		{
			name: "protobuf", body: protoBody, contentType: `application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited`,
			wantFormat: FormatProtobuf, want: []string{"sglang:num_requests_total:COUNTER"},
		},
		// Issue 10: an empty exposition is an error, not an empty success.
		{name: "empty body", body: nil, contentType: ctText, wantFormat: FormatText, wantErr: []string{"empty /metrics body"}},
		{
			name: "garbage names line 1", body: fixture(t, "garbage.txt"), contentType: ctText, wantFormat: FormatText,
			wantErr: []string{"parse text exposition", "line 1", `"HTTP/1.1 200 OK"`},
		},
		{
			name: "bad value names its line", body: []byte("# TYPE a gauge\na 1\na{x=\"y\"} one\n"), contentType: ctText, wantFormat: FormatText,
			wantErr: []string{"line 3", `"a{x=\"y\"} one"`},
		},
		{
			name: "openmetrics without # EOF", body: []byte("# TYPE a gauge\na 1\n"), contentType: ctOpenMetrics, wantFormat: FormatOpenMetrics,
			wantErr: []string{"parse openmetrics exposition", "# EOF"},
		},
		{
			name: "openmetrics error names the original line", body: []byte("# TYPE a counter\na_total 1\na_created 17e8\na_total{x=\"y\" 2\n# EOF\n"),
			contentType: ctOpenMetrics, wantFormat: FormatOpenMetrics,
			wantErr: []string{"line 4", `"a_total{x=\"y\" 2"`},
		},
		{
			name: "openmetrics with data after # EOF", body: []byte("a 1\n# EOF\nb 2\n"), contentType: ctOpenMetrics, wantFormat: FormatOpenMetrics,
			wantErr: []string{"line 3", "data after # EOF"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fams, format, err := parse(tt.body, tt.contentType)
			if format != tt.wantFormat {
				t.Errorf("format = %q, want %q", format, tt.wantFormat)
			}
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("no error, families %v", familyNames(fams))
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, familyNames(fams)); diff != "" {
				t.Errorf("families (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLineText(t *testing.T) {
	t.Parallel()
	body := []byte("one\ntwo\n" + strings.Repeat("x", 200))
	tests := []struct {
		n    int
		want string
	}{
		{1, "one"}, {2, "two"}, {3, strings.Repeat("x", 120) + "…"}, {4, ""}, {0, "one"},
	}
	for _, tt := range tests {
		if got := lineText(body, tt.n); got != tt.want {
			t.Errorf("lineText(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

// TestOpenMetrics checks what the OpenMetrics rewrite keeps, renames and drops.
func TestOpenMetrics(t *testing.T) {
	t.Parallel()
	type sample struct {
		Family, Type string
		Labels       string
		Value        float64
	}
	flatten := func(fams []*dto.MetricFamily) []sample {
		var out []sample
		for _, f := range fams {
			for _, m := range f.GetMetric() {
				var labels []string
				for _, l := range m.GetLabel() {
					labels = append(labels, l.GetName()+"="+l.GetValue())
				}
				s := sample{Family: f.GetName(), Type: f.GetType().String(), Labels: strings.Join(labels, ",")}
				switch {
				case m.Counter != nil:
					s.Value = m.Counter.GetValue()
				case m.Gauge != nil:
					s.Value = m.Gauge.GetValue()
				case m.Untyped != nil:
					s.Value = m.Untyped.GetValue()
				case m.Histogram != nil:
					s.Value = float64(m.Histogram.GetSampleCount()) + m.Histogram.GetSampleCountFloat()
				}
				out = append(out, s)
			}
		}
		return out
	}
	tests := []struct {
		name string
		body string
		want []sample
	}{
		{
			name: "counter renamed, _created dropped, HELP before TYPE",
			body: "# HELP c Requests.\n# TYPE c counter\n# UNIT c requests\nc_total{m=\"x\"} 3.0\nc_created{m=\"x\"} 1.7e9\n# EOF\n",
			want: []sample{{"c_total", "COUNTER", "m=x", 3}},
		},
		{
			name: "timestamps and exemplars cut, braces in label values kept",
			body: "# TYPE h histogram\nh_bucket{le=\"1.0\",path=\"/a}b # c\"} 2 1.7e9 # {trace_id=\"abc\"} 0.5 1.7e9\nh_bucket{le=\"+Inf\",path=\"/a}b # c\"} 3\nh_count{path=\"/a}b # c\"} 3 1.7e9\nh_sum{path=\"/a}b # c\"} 1.5\nh_created{path=\"/a}b # c\"} 1.7e9\n# EOF\n",
			want: []sample{{"h", "HISTOGRAM", "path=/a}b # c", 3}},
		},
		{
			name: "gauge histogram _gcount and _gsum",
			body: "# TYPE g gaugehistogram\ng_bucket{le=\"1.0\"} 1\ng_bucket{le=\"+Inf\"} 4\ng_gcount 4\ng_gsum 9\n# EOF\n",
			want: []sample{{"g", "GAUGE_HISTOGRAM", "", 4}},
		},
		{
			name: "info, stateset and unknown",
			body: "# TYPE i info\ni_info{version=\"1.2\"} 1\n# TYPE s stateset\ns{s=\"on\"} 1\ns{s=\"off\"} 0\n# TYPE u unknown\nu 7\n# EOF\n",
			want: []sample{{"i_info", "GAUGE", "version=1.2", 1}, {"s", "GAUGE", "s=on", 1}, {"s", "GAUGE", "s=off", 0}, {"u", "UNTYPED", "", 7}},
		},
		{
			name: "a gauge named like _created of nothing is kept",
			body: "# TYPE x_created gauge\nx_created 5\n# EOF\n",
			want: []sample{{"x_created", "GAUGE", "", 5}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fams, err := Parse([]byte(tt.body), ctOpenMetrics)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, flatten(fams)); diff != "" {
				t.Errorf("samples (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOpenMetricsLongLines guards against a parser whose cost grows faster
// than the input: expfmt's ABNF-based decoder took seconds on one long line.
func TestOpenMetricsLongLines(t *testing.T) {
	t.Parallel()
	body := "# HELP a " + strings.Repeat("h ", 5000) + "\n# TYPE a gauge\na{x=\"" + strings.Repeat("v", 10000) + "\"} " + strings.Repeat("1", 300) + "\n# EOF\n"
	for range 50 { // 50 × 30 kB; a superlinear parser takes minutes here
		if _, err := Parse([]byte(body), ctOpenMetrics); err != nil {
			t.Fatal(err)
		}
	}
}
