package scrape

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzParse feeds arbitrary bodies, in each format, through the parser and
// every dialect: nothing may panic, and whatever parses must map to a
// snapshot that encodes as JSON (no NaN or Inf leaks into scrapes.jsonl)
// and whose quantiles and deltas can be computed.
func FuzzParse(f *testing.F) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != ".txt" {
			continue
		}
		b, err := os.ReadFile(filepath.Join("testdata", e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(0))
		f.Add(b, uint8(1))
		// The same real exposition as hostile transports and captures
		// deliver it (issue 10): CRLF line ends behind a BOM, a `grep`
		// capture without # lines, and a series written twice.
		f.Add(append([]byte("\xef\xbb\xbf"), bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))...), uint8(2))
		var grepped, dup []byte
		for _, l := range bytes.SplitAfter(b, []byte("\n")) {
			if len(l) > 0 && l[0] != '#' {
				grepped = append(grepped, l...)
				if dup == nil {
					dup = append(append([]byte(nil), b...), l...)
				}
			}
		}
		f.Add(grepped, uint8(0))
		if dup != nil {
			f.Add(dup, uint8(0))
		}
	}
	f.Add([]byte("a{le=\"-Inf\"} 1\n# TYPE h histogram\nh_bucket{le=\"-Inf\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_count 2\nh_sum NaN\n"), uint8(0))
	f.Add([]byte("# TYPE sglang:token_usage gauge\nsglang:token_usage +Inf\n# EOF\n"), uint8(1))
	f.Add([]byte("<!DOCTYPE html>\n<html><body>login</body></html>\n"), uint8(0))
	f.Add([]byte("vllm:e2e_request_latency_seconds_bucket{le=\"1\"} 5\nvllm:e2e_request_latency_seconds_bucket{le=\"+Inf\"} 9\nvllm:e2e_request_latency_seconds_count 6\nvllm:e2e_request_latency_seconds_sum -1\nvllm:request_success_total{engine=\"0\"} -3\nvllm:request_success_total{engine=\"1\"} NaN\n"), uint8(2))
	contentTypes := []string{ctText, ctOpenMetrics, "", "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"}

	f.Fuzz(func(t *testing.T, body []byte, ct uint8) {
		fams, err := Parse(body, contentTypes[int(ct)%len(contentTypes)])
		if err != nil {
			return
		}
		dialects := []Dialect{autoDialect{}, dcgm} // and the GPU telemetry's
		for _, d := range DialectNames() {
			x, _ := DialectFor(d)
			dialects = append(dialects, x)
		}
		for _, d := range dialects {
			s := d.Map(fams)
			if _, err := json.Marshal(s); err != nil {
				t.Fatalf("%s: snapshot does not encode: %v", d.Name(), err)
			}
			for c, h := range s.Histograms {
				if len(h.Bounds) != len(h.Cumulative) {
					t.Fatalf("%s %s: %d bounds, %d counts", d.Name(), c, len(h.Bounds), len(h.Cumulative))
				}
				for _, q := range []float64{0, 0.5, 0.99, 1} {
					e := h.Quantile(q)
					if _, err := json.Marshal(e); err != nil {
						t.Fatalf("%s %s q%v: %v", d.Name(), c, q, err)
					}
					if e.OK() && !e.AboveTop && (e.Value < e.Lower || e.Value > e.Upper) {
						t.Fatalf("%s %s q%v: value %v outside [%v, %v]", d.Name(), c, q, e.Value, e.Lower, e.Upper)
					}
				}
			}
			zero := Delta(s, s)
			for c, v := range zero.Counters {
				if v != 0 {
					t.Fatalf("%s: Δ of a snapshot with itself: %s = %v", d.Name(), c, v)
				}
			}
			for c := range s.Invalid {
				if s.has(c) {
					t.Fatalf("%s: %s is both invalid and present", d.Name(), c)
				}
			}
			for c, v := range s.Counters {
				if v < 0 {
					t.Fatalf("%s: counter %s = %v", d.Name(), c, v)
				}
			}
			row := Row{OK: true, Snapshot: &s}
			inc, resets := Increase([]Row{row, row, row})
			if len(resets) > 0 || len(inc.Resets) > 0 {
				t.Fatalf("%s: resets in a snapshot repeated: %v", d.Name(), resets)
			}
			for c, v := range inc.Counters {
				if v != 0 {
					t.Fatalf("%s: increase over a snapshot repeated: %s = %v", d.Name(), c, v)
				}
			}
			if n, ok := s.Gauges[GPUCount]; ok && int(n) != len(s.GPUs) {
				t.Fatalf("%s: %v GPUs counted, %d read", d.Name(), n, len(s.GPUs))
			}
			if e, ok := WindowEnergy([]Row{row, {At: time.Second, OK: true, Snapshot: &s}}); ok && e.Method == EnergyFromCounter && e.Joules != 0 {
				t.Fatalf("%s: energy over a snapshot repeated: %v J", d.Name(), e.Joules)
			}
		}
	})
}
