package sim

import (
	"bufio"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// metricSpec is one row of a testdata metrics table.
type metricSpec struct {
	name, typ string
	labels    []string
	buckets   []float64
}

func readMetricTable(t *testing.T, path string) []metricSpec {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []metricSpec
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "|")
		if len(cols) != 4 {
			t.Fatalf("%s:%d: want 4 columns, got %d", path, n, len(cols))
		}
		s := metricSpec{name: strings.TrimSpace(cols[0]), typ: strings.TrimSpace(cols[1])}
		if l := strings.TrimSpace(cols[2]); l != "" {
			s.labels = strings.Split(l, ",")
		}
		if b := strings.TrimSpace(cols[3]); b != "" {
			for _, v := range strings.Split(b, ",") {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatalf("%s:%d: bucket %q: %v", path, n, v, err)
				}
				s.buckets = append(s.buckets, f)
			}
		}
		out = append(out, s)
	}
	return out
}

// checkMetricTable compares a scrape with a table, both ways: every row is
// exposed with its type, label names and buckets, and nothing else is.
func checkMetricTable(t *testing.T, fams map[string]*dto.MetricFamily, table []metricSpec) {
	t.Helper()
	seen := map[string]bool{}
	for _, spec := range table {
		seen[spec.name] = true
		f, ok := fams[spec.name]
		if !ok {
			t.Errorf("%s: not exposed", spec.name)
			continue
		}
		if got := strings.ToLower(f.GetType().String()); got != spec.typ {
			t.Errorf("%s: type %s, want %s", spec.name, got, spec.typ)
		}
		if len(f.GetMetric()) == 0 {
			t.Errorf("%s: no samples", spec.name)
			continue
		}
		for _, m := range f.GetMetric() {
			var names []string
			for _, lp := range m.GetLabel() {
				names = append(names, lp.GetName())
			}
			slices.Sort(names)
			if !slices.Equal(names, spec.labels) {
				t.Errorf("%s: labels %v, want %v", spec.name, names, spec.labels)
			}
			if spec.typ != "histogram" {
				continue
			}
			var bounds []float64
			for _, b := range m.GetHistogram().GetBucket() {
				if !math.IsInf(b.GetUpperBound(), 1) { // the exposition's explicit +Inf bucket
					bounds = append(bounds, b.GetUpperBound())
				}
			}
			if !slices.Equal(bounds, spec.buckets) {
				t.Errorf("%s: buckets %v, want %v", spec.name, bounds, spec.buckets)
			}
		}
	}
	for name := range fams {
		if !seen[name] {
			t.Errorf("%s: exposed but not in the table", name)
		}
	}
}

func TestMetricTables(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{DialectSGLang, DialectVLLM, DialectFastDeploy} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			_, ep := startEngine(t, Config{Dialect: dialect})
			client := newClient()
			// Two requests sharing a prefix, so that lazily created series
			// (SGLang's cached_tokens_total, realtime_tokens_total{mode}) exist.
			prompt := words("shared", 100)
			for _, id := range []string{"a", "b"} {
				res := postStream(t, client, ep.BaseURL+"/chat/completions", clockSince(), nil, chatBody(map[string]any{
					"messages": []map[string]any{{"role": "user", "content": prompt}}, "stream": true, "max_tokens": 3,
					"rid": id, "request_id": id,
				}))
				if res.status != 200 || !res.done {
					t.Fatalf("request %s: status %d done %v", id, res.status, res.done)
				}
			}
			checkMetricTable(t, scrape(t, ep.MetricsURL), readMetricTable(t, "testdata/"+dialect+"_metrics.txt"))
		})
	}
}
