package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/internal/textwidth"
	"github.com/llmbench-org/llmbench/report/reconcile"
)

// widthCases are the summaries the width goldens show: a quickstart's
// (every request answered, every check quiet), a sweep's, and a run with
// failures and warnings.
func widthCases() map[string]Summary {
	meta, recs, rows := fixedRun()
	ok := recs[:0:0]
	for _, r := range recs {
		if r.OK() {
			ok = append(ok, r)
		}
	}
	quick := Compute(meta, ok, rows, nil, 0)
	sm, sr := sweepRun()
	rm, rr, rrows := realEngineRun()
	return map[string]Summary{
		"quickstart": quick,
		"sweep":      Compute(sm, sr, nil, nil, 0),
		"failures":   Compute(rm, rr, rrows, nil, 0),
	}
}

// TestTextAtWidth: the text summary at 80 and 100 columns, against its
// goldens; the answer (verdict, headline figures) comes right after the
// header and the report's path and the run directory last.
func TestTextAtWidth(t *testing.T) {
	t.Parallel()
	for name, s := range widthCases() {
		for _, width := range []int{80, 100} {
			var buf bytes.Buffer
			dir := filepath.Join("runs", "20261204-120000-"+name)
			if err := RenderTextWith(&buf, s, TextOptions{Width: width, RunDir: dir}); err != nil {
				t.Fatal(err)
			}
			golden(t, fmt.Sprintf("text_%s_%d.golden.txt", name, width), buf.Bytes())
			lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
			if !strings.HasPrefix(lines[1], "verdict: ") || !strings.HasPrefix(lines[2], "answer: ") {
				t.Errorf("%s at %d: lines 2 and 3 are %q and %q, want the verdict and the answer", name, width, lines[1], lines[2])
			}
			n := len(lines)
			if lines[n-2] != "report: "+filepath.Join(dir, "report.html") || lines[n-1] != "run directory: "+dir {
				t.Errorf("%s at %d: ends %q, want the report's path and the run directory", name, width, lines[n-2:])
			}
		}
	}
}

// TestTextFitsItsWidth: no line of a text summary, brief or verbose, is
// wider than its width, from 60 columns up; and every width golden keeps
// to the width its name says.
func TestTextFitsItsWidth(t *testing.T) {
	t.Parallel()
	for name, s := range widthCases() {
		for _, width := range []int{60, 72, 80, 100, 120} {
			for _, verbose := range []bool{false, true} {
				var buf bytes.Buffer
				if err := RenderTextWith(&buf, s, TextOptions{Width: width, Verbose: verbose, RunDir: "runs/x"}); err != nil {
					t.Fatal(err)
				}
				for i, l := range strings.Split(buf.String(), "\n") {
					if textwidth.Len(l) > width {
						t.Errorf("%s at %d (verbose %v): line %d is %d wide: %q", name, width, verbose, i+1, textwidth.Len(l), l)
					}
				}
			}
		}
	}
	goldens, _ := filepath.Glob(filepath.Join("testdata", "text_*_*.golden.txt"))
	if len(goldens) < 6 {
		t.Fatalf("%d width goldens, want 6 or more", len(goldens))
	}
	re := regexp.MustCompile(`_(\d+)\.golden\.txt$`)
	for _, g := range goldens {
		width, _ := strconv.Atoi(re.FindStringSubmatch(g)[1])
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			if textwidth.Len(l) > width {
				t.Errorf("%s: line %d is %d wide", g, i+1, textwidth.Len(l))
			}
		}
	}
}

// TestTextFoldsQuietChecks: the checks that raise no warning share one
// line; each warning finding has its own, cut to the width with an ellipsis
// and the note that says where it is whole; --verbose prints it whole. A
// validity state, the verdict's reason, is whole either way.
func TestTextFoldsQuietChecks(t *testing.T) {
	t.Parallel()
	s := widthCases()["failures"]
	long := strings.TrimSpace(strings.Repeat("the engine ran fewer requests at once than the client kept in flight ", 3))
	s.Findings = append(s.Findings, Finding{ID: "concurrency_gap", Severity: reconcile.Warn, Verdict: long})
	var brief, verbose bytes.Buffer
	if err := RenderTextWith(&brief, s, TextOptions{Width: 80}); err != nil {
		t.Fatal(err)
	}
	if err := RenderTextWith(&verbose, s, TextOptions{Width: 80, Verbose: true}); err != nil {
		t.Fatal(err)
	}
	b := brief.String()
	if strings.Contains(b, "\nINFO ") || !strings.Contains(b, "\nchecks without a warning: scrape_health, request_conservation") {
		t.Errorf("the quiet checks are not folded into one line:\n%s", b)
	}
	var warning string
	for _, l := range strings.Split(b, "\n") {
		if strings.HasPrefix(l, "WARN concurrency_gap: ") {
			warning = l
		}
	}
	if !strings.HasSuffix(warning, "…") || !hasText(b, "--verbose, report.md and report.html have them whole") {
		t.Errorf("warning line %q: want it cut with an ellipsis, and the note where it is whole:\n%s", warning, b)
	}
	if hasText(b, long) || !hasText(verbose.String(), "WARN concurrency_gap: "+long) {
		t.Errorf("want the finding whole in the verbose summary only:\n%s", verbose.String())
	}
	state := "latencies cover every successful request, 4 of them shorter than planned [lengths_short]"
	if !hasText(b, state) || !hasText(verbose.String(), state) {
		t.Errorf("want the validity state whole in both:\n%s", b)
	}
	if !strings.Contains(verbose.String(), "INFO token_conservation: ") {
		t.Errorf("the verbose summary lacks a quiet check whole:\n%s", verbose.String())
	}
}
