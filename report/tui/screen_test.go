package tui

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// readmeGolden is the golden the README's sample frame is drawn from.
const readmeGolden = "busy-80x24.golden"

// The README's sample frame is the golden, byte for byte once colours and
// attributes are stripped: a change of the view that is accepted with
// -update fails here until the README shows it too.
func TestREADMEFrameIsTheGolden(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(filepath.Join("testdata", readmeGolden))
	if err != nil {
		t.Fatal(err)
	}
	want := ansi.Strip(string(golden))
	got, ok := readmeFrame(string(readme))
	if !ok {
		t.Fatalf("README.md has no ```text block starting with the view's title row %q", firstLine(want))
	}
	if got != want {
		t.Errorf("README.md's sample frame differs from testdata/%s; paste this into its ```text block:\n%s", readmeGolden, want)
	}
}

// readmeFrame finds the ```text block whose first row is a view's title.
func readmeFrame(readme string) (string, bool) {
	rest := readme
	for {
		_, after, ok := strings.Cut(rest, "```text\n")
		if !ok {
			return "", false
		}
		block, tail, ok := strings.Cut(after, "\n```")
		if !ok {
			return "", false
		}
		if strings.HasPrefix(block, "llmbench · ") {
			return block, true
		}
		rest = tail
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func TestReadmeFrameFindsTheViewBlock(t *testing.T) {
	t.Parallel()
	doc := "# x\n```text\nsome other output\n```\ntext\n```text\nllmbench · q   engine e\nrow\n```\n"
	got, ok := readmeFrame(doc)
	if !ok || got != "llmbench · q   engine e\nrow" {
		t.Errorf("readmeFrame = %q, %v", got, ok)
	}
	if _, ok := readmeFrame("```text\nno view\n```\n"); ok {
		t.Error("found a frame in a README without one")
	}
}

// The frame printed after the program leaves the alternate screen is one
// frame, ended by a newline, that says the run is done and where its
// report is, never that a phase is running or that keys act.
func TestPrintFinal(t *testing.T) {
	t.Parallel()
	for _, size := range []tea.WindowSizeMsg{{Width: 80, Height: 24}, {Width: 160, Height: 48}} {
		m, _ := step(t, fed(t, newModel(Header{Scenario: "quickstart", RunDir: "runs/r1", Engine: "sim",
			Phases: []string{"warmup", "steady"}}, nil), 64), size)
		var buf bytes.Buffer
		if err := printFinal(&buf, m); err != nil {
			t.Fatal(err)
		}
		out := ansi.Strip(buf.String())
		if !strings.HasSuffix(out, "\n") || strings.Count(out, "llmbench · quickstart") != 1 {
			t.Errorf("%dx%d: want one frame ended by a newline:\n%s", size.Width, size.Height, out)
		}
		for _, want := range []string{"phase done (last phase steady, 2 of 2)   elapsed 01:04", "run done · report runs/r1/report.html",
			"engine     98.0ms", "WARN concurrency"} {
			if !strings.Contains(out, want) {
				t.Errorf("%dx%d: the final frame lacks %q:\n%s", size.Width, size.Height, want, out)
			}
		}
		for _, not := range []string{"▸", "ETA", "Ctrl-C", "tab:"} {
			if strings.Contains(out, not) {
				t.Errorf("%dx%d: the final frame shows %q:\n%s", size.Width, size.Height, not, out)
			}
		}
	}
}

// On a wide terminal the findings are not cut: each verdict is whole.
func TestWideShowsFindingsWhole(t *testing.T) {
	t.Parallel()
	m, _ := step(t, fed(t, newModel(quickstart, nil), 64), tea.WindowSizeMsg{Width: 160, Height: 48})
	view := ansi.Strip(m.render())
	for _, f := range busyFindings(64) {
		if !strings.Contains(view, f.ID+": "+f.Verdict) {
			t.Errorf("the 160x48 view lacks the whole finding %q:\n%s", f.Verdict, view)
		}
	}
	if rows := strings.Count(view, "\n") + 1; rows < 44 {
		t.Errorf("the 160x48 view uses %d of its 48 rows:\n%s", rows, view)
	}
}

// Where the engine has no latency histograms its cells say so, and the
// client's figures stay.
func TestEngineWithoutHistograms(t *testing.T) {
	t.Parallel()
	p := busyProgress(64)
	p.Engine.TTFT.Has, p.Engine.ITL.Has, p.Engine.E2E.Has = false, false, false
	m, _ := step(t, newModel(quickstart, nil), sampleMsg{p})
	view := ansi.Strip(m.render())
	if !strings.Contains(view, "engine          —         —         —         —         —") {
		t.Errorf("no row of dashes for the engine:\n%s", view)
	}
	if !strings.Contains(view, "client      131ms     120ms") {
		t.Errorf("the client's TTFT went missing:\n%s", view)
	}
}
