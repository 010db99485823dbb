package gates

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/llmbench-org/llmbench/redact"
)

// Report is a run's gate results with what identifies them.
type Report struct {
	Run      string // the run's id
	Scenario string
	Baseline string // the baseline run's id; "" without one
	Results  []Result
}

// NewReport gathers results for rendering.
func NewReport(cur Run, base *Run, results []Result) Report {
	r := Report{Run: cur.id(), Scenario: cur.Summary.Run.Scenario, Results: results}
	if base != nil {
		r.Baseline = base.id()
	}
	return r
}

// Passed reports whether every gate passed.
func (r Report) Passed() bool { return Passed(r.Results) }

// Counts returns how many gates passed, failed, and could not be evaluated
// (Inconclusive counts the rest).
func (r Report) Counts() (pass, fail, errs int) {
	for _, res := range r.Results {
		switch res.Status {
		case Pass:
			pass++
		case Fail:
			fail++
		case Error:
			errs++
		}
	}
	return pass, fail, errs
}

// Inconclusive counts the gates the evidence could not decide.
func (r Report) Inconclusive() int {
	n := 0
	for _, res := range r.Results {
		if res.Status == Inconclusive {
			n++
		}
	}
	return n
}

// Verdict is the report's one word: FAILED when a gate failed or could not
// be evaluated (a fail dominates), INCONCLUSIVE when the rest passed but
// some could not be decided, PASSED when every gate passed.
func (r Report) Verdict() string {
	_, fail, errs := r.Counts()
	switch {
	case fail+errs > 0:
		return "FAILED"
	case r.Inconclusive() > 0:
		return "INCONCLUSIVE"
	}
	return "PASSED"
}

// Renderer writes a Report in one format.
type Renderer func(w io.Writer, r Report) error

var (
	_ Renderer = RenderText
	_ Renderer = RenderJUnit
)

// RenderText writes one line per gate (status, expression, reason) and a
// closing count.
func RenderText(w io.Writer, r Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "gates for %s", r.Run)
	if r.Baseline != "" {
		fmt.Fprintf(&b, " against baseline %s", r.Baseline)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, res := range r.Results {
		reason := res.Reason
		if res.ToDecide != "" {
			reason += "; to decide: " + res.ToDecide
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", strings.ToUpper(string(res.Status)), oneLine(res.Gate), oneLine(reason))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	pass, fail, errs := r.Counts()
	fmt.Fprintf(&b, "gates %s: %d passed, %d failed, %d inconclusive, %d could not be evaluated\n", r.Verdict(), pass, fail, r.Inconclusive(), errs)
	_, err := io.WriteString(redact.PrintableWriter(w), b.String()) // run ids and reasons come from outside
	return err
}

// oneLine keeps outside text (expressions come from files and flags) from
// breaking the layout.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// JUnit XML, as CI systems read it (Jenkins, GitLab, GitHub test reporters):
// one test suite for the run, one test case per gate; a failed gate is a
// <failure>, a gate that could not be evaluated an <error>, an inconclusive
// one <skipped> with its reason and what would decide it (the exit code, 4,
// is what keeps it from reading as a pass).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// RenderJUnit writes the results as a JUnit XML report. Gates take no time
// of their own, so every time is 0: the file is the same for the same results.
func RenderJUnit(w io.Writer, r Report) error {
	pass, fail, errs := r.Counts()
	name := "llmbench gates"
	if r.Scenario != "" {
		name += ": " + r.Scenario
	}
	undecided := r.Inconclusive()
	suite := junitSuite{Name: name, Tests: pass + fail + errs + undecided, Failures: fail, Errors: errs, Skipped: undecided, Time: "0",
		Properties: []junitProperty{{Name: "run", Value: r.Run}}}
	if r.Baseline != "" {
		suite.Properties = append(suite.Properties, junitProperty{Name: "baseline", Value: r.Baseline})
	}
	suite.Cases = []junitCase{}
	for _, res := range r.Results {
		c := junitCase{Name: res.Gate, ClassName: "llmbench.gates." + res.Metric, Time: "0"}
		detail := res.Reason
		if res.Interval != nil {
			detail += fmt.Sprintf("\nobserved %.4g, %g%% interval [%.4g, %.4g], allowed %s %.4g", res.Observed, 100*res.Confidence, res.Interval[0], res.Interval[1], res.Op, res.Limit)
			if res.NoiseFloor > 0 {
				detail += fmt.Sprintf(" (widened by a noise floor of %.4g: %s)", res.NoiseFloor, res.FloorFrom)
			}
		}
		switch res.Status {
		case Pass:
			c.SystemOut = detail
		case Fail:
			c.Failure = &junitProblem{Message: res.Reason, Type: "threshold", Text: detail}
		case Inconclusive:
			c.Skipped = &junitProblem{Message: res.Reason, Type: "inconclusive", Text: detail + "\nto decide: " + res.ToDecide}
		default:
			c.Error = &junitProblem{Message: res.Reason, Type: "unevaluable", Text: detail}
		}
		suite.Cases = append(suite.Cases, c)
	}
	doc := junitSuites{Name: "llmbench", Tests: suite.Tests, Failures: fail, Errors: errs, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}
