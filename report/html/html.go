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
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/scrape"
)

// FileName is the report's name inside a run directory.
const FileName = "report.html"

// Input is what the page is drawn from: the run's Summary, and the raw
// records and scrape rows its charts plot over the run clock.
type Input struct {
	Summary report.Summary
	Records []client.Record
	Rows    []scrape.Row
}

//go:embed assets/report.html.tmpl assets/report.css
var assets embed.FS

var pageTemplate = template.Must(template.New("report.html.tmpl").Funcs(template.FuncMap{
	"f":   coord,
	"add": func(a, b float64) float64 { return a + b },
	"sub": func(a, b float64) float64 { return a - b },
	"mid": func(a, b float64) float64 { return (a + b) / 2 },
}).ParseFS(assets, "assets/report.html.tmpl"))

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
	s, err := report.Build(dir)
	if err != nil {
		return Input{}, fmt.Errorf("load %s: %w", dir, err)
	}
	return LoadRaw(dir, s)
}

// LoadRaw reads the raw records and scrape rows of a run whose Summary is
// already built (at the end of a run), so it is not computed twice. A run
// without scrapes.jsonl (no /metrics) loads with no rows.
func LoadRaw(dir string, s report.Summary) (Input, error) {
	in := Input{Summary: s}
	if _, err := report.ReadJSONL(filepath.Join(dir, report.RequestsFile), func(r *client.Record) error {
		in.Records = append(in.Records, *r)
		return nil
	}); err != nil {
		return Input{}, fmt.Errorf("load %s: %w", dir, err)
	}
	if _, err := report.ReadJSONL(filepath.Join(dir, report.ScrapesFile), func(r *scrape.Row) error {
		in.Rows = append(in.Rows, *r)
		return nil
	}); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Input{}, fmt.Errorf("load %s: %w", dir, err)
	}
	// The records and rows the summary counted: duplicates dropped, secrets
	// redacted.
	in.Records, in.Rows, _ = report.Clean(in.Records, in.Rows)
	return in, nil
}

// WriteFile renders the page into dir/report.html and returns its path. It
// writes a temporary file and renames it, so a crash never leaves half a
// page behind.
func WriteFile(dir string, in Input) (string, error) {
	path := filepath.Join(dir, FileName)
	f, err := os.CreateTemp(dir, "."+FileName+"-*")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(f.Name()) // after a successful rename there is nothing left to remove
	if err := Render(f, in); err != nil {
		f.Close()
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}
