package gates

import (
	"bytes"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenReport evaluates one gate of each kind over seeded synthetic runs:
// the same report every time.
func goldenReport(t *testing.T) Report {
	t.Helper()
	base, cur := baseWorld.run(t), slowerWorld.run(t)
	cur.ID, base.ID = "20260101T000000Z-world", "20251225T000000Z-world"
	gs := mustParse(t,
		"client.ttft.p99 < 500ms",
		"client.requests.failed == 0",
		"client.error_rate < 1%",
		"client.ttft.p99 regression < 10%",
		"client.itl.p50 regression < 50%",
		"client.throughput.output_tokens_per_s >= baseline * 0.9",
		"server.ttft.p99 < 1s",
		"health.valid == true",
		"findings.fail == 0",
	)
	return NewReport(cur, &base, gs.EvaluateRuns(cur, &base, DefaultBootstrap))
}

func TestRenderGolden(t *testing.T) {
	t.Parallel()
	rep := goldenReport(t)
	for _, tt := range []struct {
		file   string
		render Renderer
	}{{"gates.txt", RenderText}, {"junit.xml", RenderJUnit}} {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			if err := tt.render(&buf, rep); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tt.file)
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("reading golden (run with -update to create it): %v", err)
			}
			if got := buf.String(); got != string(want) {
				t.Errorf("%s differs (run with -update to accept)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
			}
		})
	}
}

// The JUnit file is what CI systems parse: the counts and the cases must
// agree with the results, whatever the golden holds.
func TestJUnitStructure(t *testing.T) {
	t.Parallel()
	rep := goldenReport(t)
	rep.Results = append(rep.Results, Result{Gate: `x < 1 <&"]]>` + "\x01", Metric: "x", Status: Fail, Reason: "a <reason> & more"})
	var buf bytes.Buffer
	if err := RenderJUnit(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, buf.String())
	}
	pass, fail, errs := rep.Counts()
	if len(doc.Suites) != 1 {
		t.Fatalf("%d suites", len(doc.Suites))
	}
	s := doc.Suites[0]
	if s.Tests != len(rep.Results) || s.Failures != fail || s.Errors != errs || s.Skipped != rep.Inconclusive() || doc.Tests != pass+fail+errs+rep.Inconclusive() {
		t.Errorf("counts: suite %d/%d/%d, results %d/%d/%d", s.Tests, s.Failures, s.Errors, len(rep.Results), fail, errs)
	}
	for i, c := range s.Cases {
		r := rep.Results[i]
		if !strings.HasPrefix(c.Name, strings.TrimSuffix(r.Gate, "\x01")) {
			t.Errorf("case %d named %q, gate %q", i, c.Name, r.Gate)
		}
		switch r.Status {
		case Pass:
			if c.Failure != nil || c.Error != nil {
				t.Errorf("%s passed but the case has a failure or error", r.Gate)
			}
		case Fail:
			if c.Failure == nil || c.Failure.Message != r.Reason {
				t.Errorf("%s failed: case failure %+v", r.Gate, c.Failure)
			}
		case Inconclusive:
			if c.Skipped == nil || c.Skipped.Type != "inconclusive" {
				t.Errorf("%s was inconclusive: case not skipped as such", r.Gate)
			}
		case Error:
			if c.Error == nil {
				t.Errorf("%s could not be evaluated: case has no error", r.Gate)
			}
		}
	}
}

func TestRenderTextSaysTheVerdict(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := RenderText(&buf, Report{Run: "r", Results: []Result{{Gate: "a == 1", Status: Pass, Reason: "1 == 1"}}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "gates PASSED: 1 passed, 0 failed, 0 inconclusive, 0 could not be evaluated") {
		t.Errorf("text:\n%s", buf.String())
	}
}
