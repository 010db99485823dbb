package scrape

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
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
	}
	f.Add([]byte("a{le=\"-Inf\"} 1\n# TYPE h histogram\nh_bucket{le=\"-Inf\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_count 2\nh_sum NaN\n"), uint8(0))
	f.Add([]byte("# TYPE sglang:token_usage gauge\nsglang:token_usage +Inf\n# EOF\n"), uint8(1))
	contentTypes := []string{ctText, ctOpenMetrics, "", "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"}

	f.Fuzz(func(t *testing.T, body []byte, ct uint8) {
		fams, err := Parse(body, contentTypes[int(ct)%len(contentTypes)])
		if err != nil {
			return
		}
		dialects := []Dialect{autoDialect{}}
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
		}
	})
}
