package gates

import (
	"errors"
	"math"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzParse: any input either parses into a gate whose canonical form parses
// back to the same gate, or fails with a SyntaxError naming the input and a
// column inside it (or just past its end).
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"client.ttft.p99 < 500ms", "client.requests.failed == 0", "client.error_rate<1%",
		"client.ttft.p99 < baseline * 1.10", "client.ttft.p99 regression < 10%", "health.valid == true",
		"client.ttft.p99 < baseline + 20ms", "client.throughput.requests_per_s > baseline - 2",
		"server.ttft.p99 <= 1e-03s", "client.ttft.p99 < 500 ms", "x =< 1", "", "µs", "client.e2e.mean < .5s",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		g, err := Parse(expr)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q): %T %v, want a *SyntaxError", expr, err, err)
			}
			if se.Expr != expr {
				t.Fatalf("error names %q, not the input %q", se.Expr, expr)
			}
			if n := utf8.RuneCountInString(expr); se.Col < 1 || se.Col > n+1 {
				t.Fatalf("Parse(%q): column %d outside 1..%d", expr, se.Col, n+1)
			}
			return
		}
		if v := g.RHS.Value.Value(); math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Fatalf("Parse(%q): value %v", expr, v)
		}
		again, err := Parse(g.String())
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", g.String(), expr, err)
		}
		if d := cmp.Diff(g, again, cmpopts.IgnoreFields(Gate{}, "Expr")); d != "" {
			t.Fatalf("canonical form %q of %q parses differently:\n%s", g.String(), expr, d)
		}
	})
}
