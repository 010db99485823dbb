package report

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	a := Summary{Run: RunInfo{ID: "a"}, Client: ClientSide{
		Requests:   RequestCounts{OK: 100},
		Throughput: Throughput{OutputTokensPerSec: 1000},
		Latency:    Latencies{TTFT: Dist{P50: 0.100, P99: 0.200}},
	}}
	b := a
	b.Run.ID = "b"
	b.Client.Throughput.OutputTokensPerSec = 800
	b.Client.Latency.TTFT = Dist{P50: 0.100, P99: 0.300}
	c := Compare(a, b)
	row := func(name string) ComparedLine {
		for _, l := range c.Rows {
			if l.Name == name {
				return l
			}
		}
		t.Fatalf("no row %q", name)
		return ComparedLine{}
	}
	if ch := row("client TTFT p99").Change[1]; math.Abs(ch-0.5) > 1e-9 {
		t.Errorf("TTFT p99 change %v, want +50%%", ch)
	}
	if ch := row("output tokens/s").Change[1]; math.Abs(ch+0.2) > 1e-9 {
		t.Errorf("throughput change %v, want -20%%", ch)
	}
	for _, l := range c.Rows {
		if l.Name == "goodput/s" {
			t.Errorf("runs without an slo have a goodput row: %+v", l)
		}
	}
	b.Client.Goodput = &Goodput{RequestsPerS: 9}
	if g := Compare(a, b).Rows; !slices.ContainsFunc(g, func(l ComparedLine) bool {
		return l.Name == "goodput/s" && math.IsNaN(l.Values[0]) && l.Values[1] == 9
	}) {
		t.Errorf("a run with an slo beside one without: %+v", g)
	}
	if v := row("server TTFT mean").Values[0]; !math.IsNaN(v) {
		t.Errorf("a run without a server view has server TTFT %v, want absent", v)
	}
	var out bytes.Buffer
	if err := RenderComparison(&out, c); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"+50.0% (worse)", "-20.0% (worse)", "absent", "run 2"} {
		if !strings.Contains(text, want) {
			t.Errorf("comparison lacks %q:\n%s", want, text)
		}
	}
	var md bytes.Buffer
	if err := RenderComparisonMarkdown(&md, c); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- run 2: `b`", "|  | run 1 | run 2 | change |\n| --- | ---: | ---: | ---: |",
		"| client TTFT p99 | 200.0 ms | 300.0 ms | **+50.0% (worse)** |", "| server TTFT mean | absent | absent | — |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown comparison lacks %q:\n%s", want, md.String())
		}
	}
	if strings.Contains(strings.Split(text, "client TTFT p50")[1][:80], "worse") {
		t.Errorf("an unchanged p50 is marked worse:\n%s", text)
	}
}
