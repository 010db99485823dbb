package selfmetrics

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

const dashboardPath = "../deploy/grafana/llmbench.json"

// dashboardExprs returns every PromQL expression of the dashboard (panel
// targets and template-variable queries), keyed by where it is.
func dashboardExprs(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr  string `json:"expr"`
				RefID string `json:"refId"`
			} `json:"targets"`
			Panels json.RawMessage `json:"panels"` // rows nest panels: none here
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Query struct {
					Query string `json:"query"`
				} `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s does not parse: %v", dashboardPath, err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("%s: title %q uid %q, %d panels", dashboardPath, d.Title, d.UID, len(d.Panels))
	}
	exprs := map[string]string{}
	for _, p := range d.Panels {
		if len(p.Panels) > 0 && string(p.Panels) != "null" && string(p.Panels) != "[]" {
			t.Errorf("panel %q nests panels, which this test does not read", p.Title)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("panel %q target %s has no expr", p.Title, tg.RefID)
			}
			exprs[p.Title+"/"+tg.RefID] = tg.Expr
		}
	}
	for _, v := range d.Templating.List {
		if v.Query.Query != "" {
			exprs["$"+v.Name] = v.Query.Query
		}
	}
	return exprs
}

var metricRef = regexp.MustCompile(`\bllmbench_[a-zA-Z0-9_:]*`)

// TestDashboard: the dashboard parses, every expression names at least one
// series and only series the exporter defines, histograms are read through
// their buckets, and every metric of the exporter is on the dashboard.
func TestDashboard(t *testing.T) {
	m := New()
	m.SetPhase("measure") // so that every family has a series
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]string{} // series name → its family
	for _, f := range fams {
		name := f.GetName()
		if f.GetType() == dto.MetricType_HISTOGRAM {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				defined[name+s] = name
			}
			continue
		}
		defined[name] = name
	}

	used := map[string]bool{}
	for where, expr := range dashboardExprs(t) {
		refs := metricRef.FindAllString(expr, -1)
		if len(refs) == 0 {
			t.Errorf("%s: %q names no llmbench metric", where, expr)
		}
		for _, r := range refs {
			fam, ok := defined[r]
			if !ok {
				t.Errorf("%s: %q names %s, which the exporter does not define", where, expr, r)
				continue
			}
			used[fam] = true
		}
		if strings.Contains(expr, "histogram_quantile") && !strings.Contains(expr, "_bucket") {
			t.Errorf("%s: histogram_quantile without a _bucket series: %q", where, expr)
		}
	}
	for _, f := range fams {
		if !used[f.GetName()] {
			t.Errorf("no panel shows %s", f.GetName())
		}
	}
}
