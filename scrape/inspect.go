package scrape

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmbench-org/llmbench/internal/inputfile"
)

// Report is what llmbench sees of an engine's metrics in one scrape or one
// exposition file: the dialect, the canonical values, and where each came
// from. It is what `llmbench inspect URL|FILE` prints.
type Report struct {
	Source   string             `json:"source"`
	Row      Row                `json:"row"`      // the fetch: status, bytes, format, duration (a file has no status)
	Dialect  string             `json:"dialect"`  // "" when no engine was recognized
	Detected bool               `json:"detected"` // the dialect came from the names, not from the caller
	Families int                `json:"families"` // metric families in the exposition
	Snapshot Snapshot           `json:"snapshot"`
	Sources  map[Concept]string `json:"sources"`          // the metric that carried each present concept; "(derived)" when computed
	Mappings []Mapping          `json:"mappings"`         // the dialect's description, notes included
	Unused   []string           `json:"unused,omitempty"` // the engine's own families that no concept reads
}

// Inspect scrapes src once (an http:// or https:// URL) or reads it (a file
// path) and maps it with the detected dialect.
func Inspect(ctx context.Context, src string) (Report, error) {
	return InspectDialect(ctx, src, "")
}

// InspectDialect is Inspect with a dialect chosen by name ("" or Auto detects).
// A failed scrape returns the report with its Row, and an error.
func InspectDialect(ctx context.Context, src, dialect string) (Report, error) {
	if strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://") {
		return InspectTarget(ctx, Target{URL: src}, dialect)
	}
	return inspect(ctx, src, nil, dialect)
}

// InspectTarget is InspectDialect of a target: its URL scraped once as the
// target says (its API key included).
func InspectTarget(ctx context.Context, t Target, dialect string) (Report, error) {
	return inspect(ctx, t.URL, &t, dialect)
}

// inspect reads src: scraped as t says, or a file when t is nil.
func inspect(ctx context.Context, src string, t *Target, dialect string) (Report, error) {
	rep := Report{Source: src}
	d, isTelemetry := TelemetryDialect(dialect)
	var err error
	if !isTelemetry {
		if d, err = DialectFor(dialect); err != nil {
			return rep, err
		}
	}
	var body []byte
	var contentType string
	if t != nil {
		rep.Row = Row{Target: src, Wall: time.Now().Round(0)} // wall clock: when this look was taken
		began := time.Now()
		body, contentType, rep.Row.Status, err = t.fetch(ctx)
		rep.Row.Bytes = len(body)
		rep.Row.Duration = time.Since(began)
		if err != nil {
			rep.Row.Error = err.Error()
			return rep, err
		}
	} else {
		body, err = readFile(src)
		if err != nil {
			return rep, fmt.Errorf("inspect: %w", err)
		}
		rep.Row = Row{Target: src, Bytes: len(body)}
	}
	fams, format, err := parse(body, contentType)
	rep.Row.Format = format
	if err != nil {
		err = fmt.Errorf("inspect %s: %w", src, err)
		rep.Row.Error = err.Error()
		return rep, err
	}
	rep.Row.OK = true
	rep.Families = len(fams)

	if dialect == "" || dialect == Auto {
		rep.Detected = true
		if d = Detect(fams); d == nil {
			if d = detectTelemetry(fams); d == nil {
				return rep, nil
			}
		}
	}
	rep.Dialect = d.Name()
	rep.Snapshot = d.Map(fams)
	rep.Row.Snapshot = &rep.Snapshot
	td, ok := d.(tableDialect)
	if !ok {
		return rep, nil
	}
	rep.Mappings = td.Describe()
	ix := newFamilyIndex(fams, td.aliases)
	rep.Sources = map[Concept]string{}
	used := map[string]bool{}
	for _, r := range td.rules {
		for _, name := range r.names {
			used[name] = true
		}
	}
	for _, name := range td.reads {
		used[name] = true
	}
	for _, m := range rep.Mappings {
		if !rep.Snapshot.has(m.Concept) {
			continue
		}
		rep.Sources[m.Concept] = "(derived)"
		for _, name := range m.Metrics {
			if ix.has(name) && used[name] {
				rep.Sources[m.Concept] = name
				break
			}
		}
	}
	for name := range ix {
		if td.Owns(name) && !used[name] {
			rep.Unused = append(rep.Unused, name)
		}
	}
	sort.Strings(rep.Unused)
	return rep, nil
}

// readFile reads an exposition file with the same MaxBody cap as a scrape;
// what is not a regular file is refused (a named pipe would block).
func readFile(path string) ([]byte, error) {
	f, err := inputfile.Open(path, inputfile.Kind{What: "metrics file"})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	body, err := readBody(f, f.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return body, nil
}

func (s Snapshot) has(c Concept) bool {
	_, g := s.Gauges[c]
	_, k := s.Counters[c]
	_, h := s.Histograms[c]
	return g || k || h
}

// Write writes the report as indented JSON or as text (WriteText).
func (r Report) Write(w io.Writer, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	if err := r.WriteText(w); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// WriteText renders the report as plain, aligned text.
func (r Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format, args...) }

	source := fmt.Sprintf("%s (%s, %d bytes", r.Source, orDash(r.Row.Format), r.Row.Bytes)
	if r.Row.Status != 0 {
		source += fmt.Sprintf(", HTTP %d in %s", r.Row.Status, roundDuration(r.Row.Duration))
	}
	p("source\t%s)\n", source)
	if !r.Row.OK {
		p("error\t%s\n", r.Row.Error)
		return tw.Flush()
	}
	switch {
	case r.Dialect == "":
		p("dialect\tnone recognized among %d metric families (known: %s)\n", r.Families, strings.Join(DialectNames(), ", "))
		return tw.Flush()
	case r.Detected:
		p("dialect\t%s (detected from the metric names)\n", r.Dialect)
	default:
		p("dialect\t%s (as asked)\n", r.Dialect)
	}
	p("families\t%d, %d concepts mapped\n", r.Families, len(r.Sources))

	notes := map[Concept]string{}
	for _, m := range r.Mappings {
		notes[m.Concept] = m.Note
	}
	concepts := r.concepts()
	section := func(title string, kind Kind) {
		first := true
		for _, c := range concepts {
			if c.Kind() != kind || !r.Snapshot.has(c) {
				continue
			}
			if first {
				p("\n%s\n", title)
				first = false
			}
			var value string
			switch kind {
			case KindGauge:
				value = formatNumber(r.Snapshot.Gauges[c])
			case KindCounter:
				value = formatNumber(r.Snapshot.Counters[c])
			default:
				value = formatHistogram(r.Snapshot.Histograms[c])
			}
			p("  %s\t%s\t%s\n", c, value, r.Sources[c])
		}
	}
	section("gauges", KindGauge)
	section("counters", KindCounter)
	section("histograms (cumulative since the engine started)", KindHistogram)

	var absent []string
	for _, c := range concepts {
		if !r.Snapshot.has(c) {
			absent = append(absent, string(c))
		}
	}
	if len(absent) > 0 {
		p("\nabsent\t%s\n", strings.Join(absent, ", "))
	}
	for _, c := range sortedKeys(r.Snapshot.Invalid) {
		p("  %s\tunusable: %s\n", c, r.Snapshot.Invalid[c])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := writeGPUs(w, r.Snapshot.GPUs); err != nil {
		return err
	}
	var lines []string
	for _, c := range concepts {
		if n := notes[c]; n != "" {
			lines = append(lines, fmt.Sprintf("  %s: %s", c, n))
		}
	}
	if len(lines) > 0 {
		if _, err := fmt.Fprintf(w, "\nnotes\n%s\n", strings.Join(lines, "\n")); err != nil {
			return err
		}
	}
	if len(r.Unused) > 0 {
		if _, err := fmt.Fprintf(w, "\nnot read (%d): %s\n", len(r.Unused), strings.Join(r.Unused, ", ")); err != nil {
			return err
		}
	}
	return nil
}

func formatHistogram(h Histogram) string {
	parts := []string{"n=" + formatNumber(h.Count)}
	if m, ok := h.Mean(); ok {
		parts = append(parts, "mean="+formatSeconds(m))
	}
	if len(h.Bounds) == 0 {
		return strings.Join(append(parts, "(no buckets: mean only)"), "  ")
	}
	for _, q := range []float64{0.5, 0.9, 0.99} {
		e := h.Quantile(q)
		name := "p" + strconv.Itoa(int(math.Round(q*100)))
		switch {
		case !e.OK():
			parts = append(parts, name+"=-")
		case e.AboveTop:
			parts = append(parts, fmt.Sprintf("%s>%s (above the top bucket)", name, formatSeconds(e.Lower)))
		default:
			parts = append(parts, fmt.Sprintf("%s=%s [%s,%s]", name, formatSeconds(e.Value), formatSeconds(e.Lower), formatSeconds(e.Upper)))
		}
	}
	return strings.Join(parts, "  ")
}

func formatNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func formatSeconds(v float64) string {
	return roundDuration(time.Duration(v * float64(time.Second))).String()
}

// roundDuration keeps about three significant digits.
func roundDuration(d time.Duration) time.Duration {
	for _, unit := range []time.Duration{time.Second, time.Millisecond, time.Microsecond} {
		if d >= 100*unit {
			return d.Round(unit)
		}
		if d >= unit {
			return d.Round(unit / 100)
		}
	}
	return d
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
