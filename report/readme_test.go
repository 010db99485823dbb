package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/internal/textwidth"
)

// The README's sample summary is a real quickstart's output, so its numbers
// cannot be a golden; its layout can: it fits 100 columns and its top-level
// lines come in the order the renderer writes them (the 100-column golden).
// A renamed, added or moved line fails here until the README shows it.
func TestREADMESummaryHasTheRenderersLayout(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	sample, ok := readmeSummary(string(readme))
	if !ok {
		t.Fatal("README.md has no ``` block starting with a summary's title line (\"llmbench quickstart — …\")")
	}
	golden, err := os.ReadFile(filepath.Join("testdata", "text_quickstart_100.golden.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(sample, "\n") {
		if w := textwidth.Len(line); w > 100 {
			t.Errorf("README sample line %d is %d columns wide (the text promises 100): %q", i+1, w, line)
		}
	}
	got, want := summaryLabels(sample), summaryLabels(string(golden))
	if !slices.Equal(got, want) {
		t.Errorf("README sample's top-level lines %q, the renderer's %q: paste a fresh quickstart's output into the README", got, want)
	}
}

// readmeSummary finds the fenced block whose first line is a summary's title.
func readmeSummary(readme string) (string, bool) {
	lines := strings.Split(readme, "\n")
	for i := 0; i+1 < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```") || !strings.HasPrefix(lines[i+1], "llmbench quickstart — ") {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			if strings.HasPrefix(lines[j], "```") {
				return strings.Join(lines[i+1:j], "\n"), true
			}
		}
	}
	return "", false
}

// summaryLabels are the labels ("verdict", "health", …) of a summary's
// top-level lines, in order: the text before a colon near the line's start.
func summaryLabels(text string) []string {
	var labels []string
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == ' ' {
			continue
		}
		if label, _, ok := strings.Cut(line, ":"); ok && len(label) <= 30 {
			labels = append(labels, label)
		}
	}
	return labels
}
