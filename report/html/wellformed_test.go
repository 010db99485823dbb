package html

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	nethtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/llmbench-org/llmbench/report/reconcile"
	"github.com/llmbench-org/llmbench/report/validity"
)

// voidElements never have an end tag.
var voidElements = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true,
	"input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true}

// wellFormed checks the page token by token: every element is closed in
// order, only SVG elements close themselves, and ids are unique.
func wellFormed(doc string) error {
	z := nethtml.NewTokenizer(strings.NewReader(doc))
	var stack []string
	ids := map[string]bool{}
	inSVG := func() bool { return slices.Contains(stack, "svg") }
	for {
		tt := z.Next()
		switch tt {
		case nethtml.ErrorToken:
			if errors.Is(z.Err(), io.EOF) {
				if len(stack) > 0 {
					return fmt.Errorf("unclosed at the end: %v", stack)
				}
				return nil
			}
			return z.Err()
		case nethtml.StartTagToken, nethtml.SelfClosingTagToken:
			tok := z.Token()
			seen := map[string]bool{}
			for _, a := range tok.Attr {
				if seen[a.Key] {
					return fmt.Errorf("<%s> repeats attribute %s", tok.Data, a.Key)
				}
				seen[a.Key] = true
				if a.Key == "id" {
					if ids[a.Val] {
						return fmt.Errorf("id %q used twice", a.Val)
					}
					ids[a.Val] = true
				}
			}
			switch {
			case tt == nethtml.SelfClosingTagToken && !inSVG() && !voidElements[tok.Data]:
				return fmt.Errorf("<%s/> outside SVG: HTML ignores the slash", tok.Data)
			case tt == nethtml.StartTagToken && !voidElements[tok.Data]:
				stack = append(stack, tok.Data)
			}
		case nethtml.EndTagToken:
			tok := z.Token()
			if len(stack) == 0 || stack[len(stack)-1] != tok.Data {
				return fmt.Errorf("</%s> closes %v", tok.Data, stack)
			}
			stack = stack[:len(stack)-1]
		}
	}
}

// parse builds the DOM the way a browser's parser would.
func parse(t testing.TB, doc string) *nethtml.Node {
	t.Helper()
	n, err := nethtml.Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return n
}

func walk(n *nethtml.Node, fn func(*nethtml.Node)) {
	fn(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func attr(n *nethtml.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func hasClass(n *nethtml.Node, class string) bool {
	v, _ := attr(n, "class")
	return slices.Contains(strings.Fields(v), class)
}

// selfContained reports what in the DOM would run code or fetch anything
// when the page opens.
func selfContained(doc *nethtml.Node) []string {
	var bad []string
	walk(doc, func(n *nethtml.Node) {
		if n.Type != nethtml.ElementNode {
			return
		}
		switch n.DataAtom {
		case atom.Script, atom.Link, atom.Img, atom.Iframe, atom.Object, atom.Embed, atom.A, atom.Base, atom.Form:
			bad = append(bad, "<"+n.Data+">")
		}
		for _, a := range n.Attr {
			if a.Key == "src" || a.Key == "href" || a.Key == "xlink:href" || strings.HasPrefix(a.Key, "on") {
				bad = append(bad, n.Data+" "+a.Key)
			}
		}
		if n.DataAtom == atom.Style && n.FirstChild != nil {
			css := strings.ReplaceAll(n.FirstChild.Data, "url(#hatch)", "")
			if strings.Contains(css, "url(") || strings.Contains(css, "@import") {
				bad = append(bad, "style sheet fetches a resource")
			}
		}
	})
	return bad
}

func TestWellFormedAndSelfContained(t *testing.T) {
	t.Parallel()
	hostile := synth{seed: 3, rateScale: 0.5, stretch: 1, chunks: 6, failEvery: 5, hostile: true, traces: true}
	for name, run := range map[string]synth{"golden": goldenRun, "hostile": hostile, "no-failures": {seed: 9, rateScale: 0.3, stretch: 1, chunks: 3}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in := run.input()
			doc := renderString(t, in)
			if err := wellFormed(doc); err != nil {
				t.Fatalf("not well-formed: %v", err)
			}
			dom := parse(t, doc)
			if bad := selfContained(dom); len(bad) > 0 {
				t.Errorf("the page loads or runs something: %v", bad)
			}
			// Every chart with data is an SVG the parser put in the SVG
			// namespace, with drawn path data or bars.
			p := build(in)
			want := 0
			for _, c := range allCharts(p) {
				if c.Empty == "" {
					want++
				}
			}
			if got := drawnCharts(dom); got != want {
				t.Errorf("%d charts drawn, want %d", got, want)
			}
		})
	}
}

// allCharts lists every chart of a page.
func allCharts(p page) []*chart {
	out := append(append(slices.Clone(p.Timeline), p.CDF...), p.Lengths...)
	if p.Sweep != nil {
		out = append(append(out, p.Sweep.Capacity), p.Sweep.Charts...)
	}
	if p.Waterfall != nil && p.Waterfall.Bar != nil {
		out = append(out, p.Waterfall.Bar)
	}
	return out
}

// drawnCharts counts the chart figures whose SVG has path data or bars.
func drawnCharts(dom *nethtml.Node) int {
	drawn := 0
	walk(dom, func(n *nethtml.Node) {
		if n.Data != "figure" || !hasClass(n, "chart") {
			return
		}
		marks := 0
		walk(n, func(m *nethtml.Node) {
			if m.Namespace != "svg" {
				return
			}
			if d, _ := attr(m, "d"); m.Data == "path" && strings.HasPrefix(d, "M") || m.Data == "rect" && hasClass(m, "box") {
				marks++
			}
		})
		if marks > 0 {
			drawn++
		}
	})
	return drawn
}

// TestHostileStrings puts markup into every string a run carries from
// outside: it must show as text, never become markup.
func TestHostileStrings(t *testing.T) {
	t.Parallel()
	in := synth{seed: 3, rateScale: 0.5, stretch: 1, chunks: 6, failEvery: 5, hostile: true, traces: true}.input()
	in.Summary.Findings = append(in.Summary.Findings, reconcile.Finding{ID: hostileText, Severity: reconcile.Warn, Verdict: hostileText,
		Evidence: map[string]float64{hostileText: 1}})
	in.Summary.Health.Problems = append(in.Summary.Health.Problems, hostileText)
	in.Summary.Health.States = append(in.Summary.Health.States, validity.State{Name: hostileText, Severity: validity.Invalid, Says: hostileText, Covers: hostileText})
	in.Summary.Engine.BaseURL = "javascript:" + hostileText
	doc := renderString(t, in)
	if err := wellFormed(doc); err != nil {
		t.Fatalf("not well-formed: %v", err)
	}
	dom := parse(t, doc)
	if bad := selfContained(dom); len(bad) > 0 {
		t.Fatalf("hostile strings became markup: %v", bad)
	}
	// The strings show verbatim as text: the heading, an error row, a
	// finding, a problem.
	texts := map[string]int{}
	walk(dom, func(n *nethtml.Node) {
		if n.Type == nethtml.TextNode {
			texts[n.Data]++
		}
	})
	if texts[hostileText] < 4 {
		t.Errorf("the hostile text shows verbatim in %d text nodes, want at least 4 (finding id, verdict, evidence, problem, error rows)", texts[hostileText])
	}
	var h1 string
	walk(dom, func(n *nethtml.Node) {
		if n.DataAtom == atom.H1 && n.FirstChild != nil {
			h1 = n.FirstChild.Data
		}
	})
	if want := "llmbench report: golden" + hostileText; h1 != want {
		t.Errorf("h1 = %q, want %q", h1, want)
	}
}

// FuzzRender feeds arbitrary strings into the places a run's own strings
// reach: the page stays well-formed and never gains markup.
func FuzzRender(f *testing.F) {
	base := synth{seed: 5, rateScale: 0.25, stretch: 0.5, chunks: 3, failEvery: 4}.input()
	f.Add("quickstart", "rate-4", "503 Service Unavailable")
	f.Add(hostileText, "</svg><script>x</script>", "]]><![CDATA[")
	f.Add("\x00\xff<", "a\"b'c", "&amp;&#x3c;")
	f.Fuzz(func(t *testing.T, scenario, phase, msg string) {
		in := base
		in.Summary.Run.Scenario = scenario
		in.Summary.Phases = slices.Clone(base.Summary.Phases)
		in.Summary.Phases[1].Name = phase
		in.Records = slices.Clone(base.Records)
		for i := range in.Records {
			if !in.Records[i].OK() {
				in.Records[i].Error = msg
			}
		}
		in.Summary.Findings = append(slices.Clone(base.Summary.Findings), reconcile.Finding{ID: msg, Severity: reconcile.Fail, Verdict: scenario})
		doc := renderString(t, in)
		if err := wellFormed(doc); err != nil {
			t.Fatalf("not well-formed: %v", err)
		}
		if bad := selfContained(parse(t, doc)); len(bad) > 0 {
			t.Fatalf("strings became markup: %v", bad)
		}
	})
}
