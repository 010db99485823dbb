package comparison

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/llmbench-org/llmbench/redact"
	"github.com/llmbench-org/llmbench/rundir"
)

func readMeta(path string) (*rundir.RunMeta, error) {
	b, err := rundir.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m rundir.RunMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}

// readScenario reads the resolved scenario.yaml as plain data: report does
// not know the scenario types, and a comparison only needs their values.
func readScenario(path string) (map[string]any, error) {
	b, err := rundir.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// fieldKind says whether a scenario field changes what a run measures: the
// load offered (load), the engine under test (engine), or the objective
// goodput is judged against (slo); "" for fields that do not (the run's
// name, abort limits, timeouts, scrape settings, the engine's address).
func fieldKind(field string) string {
	under := func(prefix string) bool { return field == prefix || strings.HasPrefix(field, prefix+".") }
	switch {
	case under("workload.abort"), under("workload.late_after"), under("workload.timeout"):
		return ""
	case under("workload"), under("model"):
		return "load"
	case under("request.headers"), under("request.calibrate"):
		return ""
	case under("request"):
		return "load"
	case under("engine.kind"), under("engine.dialect"), under("engine.preset"), under("engine.sim"), under("engine.faults"),
		under("engine.launch.kind"), under("engine.launch.model"), under("engine.launch.command"), under("engine.launch.extra"):
		return "engine"
	case under("slo"):
		return "slo"
	}
	return ""
}

// differences lists the fields in which the runs measured different things:
// scenario.yaml's fields that change the load or the engine, and run.json's
// engine (what was found, such as the model an external engine served).
func differences(base, cur Run) []Difference {
	out := []Difference{}
	if base.Scenario != nil && cur.Scenario != nil {
		fb, fc := map[string]string{}, map[string]string{}
		flatten("", base.Scenario, fb)
		flatten("", cur.Scenario, fc)
		var fields []string
		for f := range fb {
			fields = append(fields, f)
		}
		for f := range fc {
			if _, ok := fb[f]; !ok {
				fields = append(fields, f)
			}
		}
		slices.Sort(fields)
		for _, f := range fields {
			kind := fieldKind(f)
			vb, okb := fb[f]
			vc, okc := fc[f]
			if kind == "" || (okb == okc && vb == vc) {
				continue
			}
			if !okb {
				vb = "(unset)"
			}
			if !okc {
				vc = "(unset)"
			}
			out = append(out, Difference{Field: f, Kind: kind, Baseline: vb, Run: vc})
		}
	}
	eb, ec := base.Gates.Summary.Engine, cur.Gates.Summary.Engine
	for _, f := range []struct{ name, b, c string }{
		{"engine.kind", eb.Kind, ec.Kind}, {"engine.dialect", eb.Dialect, ec.Dialect}, {"engine.model", eb.Model, ec.Model},
	} {
		if f.b == f.c || slices.ContainsFunc(out, func(d Difference) bool { return d.Field == f.name }) {
			continue
		}
		out = append(out, Difference{Field: "run.json " + f.name, Kind: "engine", Baseline: clip(redact.Text(f.b)), Run: clip(redact.Text(f.c))})
	}
	return out
}

// flatten writes each leaf of v under its dotted path; a list is one leaf,
// written as JSON on one line.
func flatten(prefix string, v any, out map[string]string) {
	if m, ok := v.(map[string]any); ok {
		for k, sub := range m {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			flatten(p, sub, out)
		}
		return
	}
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case nil:
		s = "null"
	default:
		b, err := json.Marshal(x)
		if err != nil {
			s = fmt.Sprint(x)
		} else {
			s = string(b)
		}
	}
	out[prefix] = clip(redact.Text(s))
}

// clip keeps a value to one readable line.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 120 {
		return string(r[:119]) + "…"
	}
	return s
}
