// Package html renders a run as one self-contained HTML page: the run header
// and its health, the client-versus-engine latency table, charts over the run
// clock, the client's and the engine's CDFs on a latency axis, the sweep and the
// waterfall when the run has them, and every finding with its evidence.
//
// It computes, then renders: build turns the Summary and the raw records and
// scrape rows into a page value with every coordinate and label decided, and
// an embedded html/template writes it out. Charts are inline SVG drawn here;
// the page has no script and loads nothing, so it opens offline and prints
// as it shows. Large series are reduced to what a chart can show, and the
// page says where.
package html

import (
	"bufio"
	"cmp"
	"embed"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"slices"

	"github.com/llmbench-org/llmbench/report/latencytable"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/chunkdigest"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// FileName is the report's name inside a run directory.
const FileName = rundir.HTMLFile

// Input is what the page is drawn from: the run's Summary, and the raw
// records and scrape rows its charts plot over the run clock.
type Input struct {
	Summary report.Summary
	Records []client.Record
	// Chunks and Digest are what the records' chunks were digested into
	// (rundir.ReadRequests drops the chunks): Chunks[i] is Records[i]'s.
	// Both nil: the records still have their chunks and are digested here.
	Chunks []chunkdigest.Request
	Digest *chunkdigest.Digest
	Rows   []scrape.Row
	// GPURows are the GPU telemetry's scrapes (gpu.jsonl; none without).
	GPURows []scrape.Row
}

// FromLoaded is the input of a run directory read once (report.Load) whose
// Summary is s.
func FromLoaded(l *report.Loaded, s report.Summary) Input {
	return Input{Summary: s, Records: l.Requests.Records, Chunks: l.Requests.Chunks, Digest: l.Requests.Digest, Rows: l.Rows, GPURows: l.GPURows}
}

// digested returns in with Chunks and Digest filled in from the records'
// chunks when they were not given, and the records in plan order.
func (in Input) digested() Input {
	if in.Digest == nil || len(in.Chunks) != len(in.Records) {
		// A copy: the records are sorted, and the caller's stay as they are.
		req := rundir.DigestRecords(slices.Clone(in.Records), nil)
		in.Records, in.Chunks, in.Digest = req.Records, req.Chunks, req.Digest
		return in
	}
	if !slices.IsSortedFunc(in.Records, func(a, b client.Record) int { return cmp.Compare(a.Index, b.Index) }) {
		req := rundir.DigestRecords(nil, nil)
		req.Records, req.Chunks, req.Digest = slices.Clone(in.Records), slices.Clone(in.Chunks), in.Digest
		rundir.SortByIndex(req)
		in.Records, in.Chunks = req.Records, req.Chunks
	}
	return in
}

//go:embed assets/report.html.tmpl assets/compare.html.tmpl assets/report.css
var assets embed.FS

var pageTemplate = template.Must(template.New("report.html.tmpl").Funcs(template.FuncMap{
	"f":   coord,
	"add": func(a, b float64) float64 { return a + b },
	"sub": func(a, b float64) float64 { return a - b },
	"mid": func(a, b float64) float64 { return (a + b) / 2 },
	// The legends of the marks every report shows: one wording, latencytable's.
	"toofewLegend":  func() string { return latencytable.TooFewLegend },
	"sketchLegend":  func() string { return latencytable.SketchLegend },
	"toofewMark":    func() string { return latencytable.TooFewMark },
	"pooledHeading": func() string { return report.PooledHeading },
}).ParseFS(assets, "assets/report.html.tmpl", "assets/compare.html.tmpl"))

var css = func() template.CSS {
	b, err := assets.ReadFile("assets/report.css")
	if err != nil {
		panic(err) // embedded at build time: cannot happen
	}
	return template.CSS(b) // our own stylesheet, embedded: trusted
}()

// Render writes report.html for a run: everything it needs is inside the file.
func Render(w io.Writer, in Input) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	data := struct {
		page
		CSS template.CSS
	}{build(in), css}
	if err := pageTemplate.Execute(bw, data); err != nil {
		return fmt.Errorf("render %s: %w", FileName, err)
	}
	return bw.Flush()
}

// Load reads a run directory: its Summary (report.Build, from the raw files)
// and the raw records and scrape rows the charts need.
func Load(dir string) (Input, error) {
	l, err := report.Load(dir)
	if err != nil {
		return Input{}, fmt.Errorf("load %s: %w", dir, err)
	}
	return FromLoaded(l, l.Summary()), nil
}

// LoadRaw reads the raw records and scrape rows of a run whose Summary is
// already built, for a caller that has no report.Loaded (FromLoaded does
// not read the directory again). A run without scrapes.jsonl (no /metrics)
// loads with no rows.
func LoadRaw(dir string, s report.Summary) (Input, error) {
	l, err := report.Load(dir)
	if err != nil {
		return Input{}, fmt.Errorf("load %s: %w", dir, err)
	}
	return FromLoaded(l, s), nil
}

// WriteFile renders the page into dir/report.html and returns its path. It
// writes a temporary file and renames it, so a crash never leaves half a
// page behind.
func WriteFile(dir string, in Input) (string, error) {
	path := filepath.Join(dir, FileName)
	return path, rundir.WriteWith(path, func(w io.Writer) error { return Render(w, in) })
}
