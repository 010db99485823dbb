package gates

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseValid(t *testing.T) {
	t.Parallel()
	lit := func(n float64, u Unit) Operand { return Operand{Value: Quantity{Number: n, Unit: u}} }
	tests := []struct {
		expr string
		want Gate
	}{
		{"client.ttft.p99 < 500ms", Gate{Metric: "client.ttft.p99", Op: Less, RHS: lit(500, Millisecond)}},
		{"client.ttft.p99<500ms", Gate{Metric: "client.ttft.p99", Op: Less, RHS: lit(500, Millisecond)}},
		{"  client.itl.p50 <= 0.02s\t", Gate{Metric: "client.itl.p50", Op: LessEqual, RHS: lit(0.02, Second)}},
		{"client.e2e.mean < 1500us", Gate{Metric: "client.e2e.mean", Op: Less, RHS: lit(1500, Microsecond)}},
		{"client.tpot.p90 < 12µs", Gate{Metric: "client.tpot.p90", Op: Less, RHS: lit(12, MicroSign)}},
		{"client.requests.failed == 0", Gate{Metric: "client.requests.failed", Op: Equal, RHS: lit(0, NoUnit)}},
		{"client.error_rate < 1%", Gate{Metric: "client.error_rate", Op: Less, RHS: lit(1, Percent)}},
		{"client.error_rate < 0.01", Gate{Metric: "client.error_rate", Op: Less, RHS: lit(0.01, NoUnit)}},
		{"client.throughput.output_tokens_per_s >= 1e+03", Gate{Metric: "client.throughput.output_tokens_per_s", Op: GreaterEqual, RHS: lit(1000, NoUnit)}},
		{"server.ttft.p99 < .5s", Gate{Metric: "server.ttft.p99", Op: Less, RHS: lit(0.5, Second)}},
		{"health.schedule_lag.p99 != 3ms", Gate{Metric: "health.schedule_lag.p99", Op: NotEqual, RHS: lit(3, Millisecond)}},
		{"health.valid == true", Gate{Metric: "health.valid", Op: Equal, RHS: Operand{Value: Quantity{Number: 1, Unit: Boolean}}}},
		{"health.client.saturated != false", Gate{Metric: "health.client.saturated", Op: NotEqual, RHS: Operand{Value: Quantity{Unit: Boolean}}}},
		{"findings.fail == 0", Gate{Metric: "findings.fail", Op: Equal, RHS: lit(0, NoUnit)}},
		{"client.ttft.p99 < baseline", Gate{Metric: "client.ttft.p99", Op: Less, RHS: Operand{Baseline: true}}},
		{"client.ttft.p99 < baseline * 1.10", Gate{Metric: "client.ttft.p99", Op: Less, RHS: Operand{Baseline: true, Arith: Times, Value: Quantity{Number: 1.1}}}},
		{"client.ttft.p99 < baseline*110%", Gate{Metric: "client.ttft.p99", Op: Less, RHS: Operand{Baseline: true, Arith: Times, Value: Quantity{Number: 110, Unit: Percent}}}},
		{"client.ttft.p99 < baseline + 20ms", Gate{Metric: "client.ttft.p99", Op: Less, RHS: Operand{Baseline: true, Arith: Plus, Value: Quantity{Number: 20, Unit: Millisecond}}}},
		{"client.throughput.requests_per_s > baseline - 2", Gate{Metric: "client.throughput.requests_per_s", Op: Greater, RHS: Operand{Baseline: true, Arith: Minus, Value: Quantity{Number: 2}}}},
		{"health.valid == baseline", Gate{Metric: "health.valid", Op: Equal, RHS: Operand{Baseline: true}}},
		{"client.ttft.p99 regression < 10%", Gate{Metric: "client.ttft.p99", Regression: true, Op: Less, RHS: lit(10, Percent)}},
		{"client.throughput.output_tokens_per_s regression <= 5%", Gate{Metric: "client.throughput.output_tokens_per_s", Regression: true, Op: LessEqual, RHS: lit(5, Percent)}},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tt.expr)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got.Expr != tt.expr {
				t.Errorf("Expr = %q, want the text as written", got.Expr)
			}
			if d := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(Gate{}, "Expr")); d != "" {
				t.Errorf("Parse (-want +got):\n%s", d)
			}
			again, err := Parse(got.String())
			if err != nil {
				t.Fatalf("canonical form %q does not parse: %v", got.String(), err)
			}
			if d := cmp.Diff(got, again, cmpopts.IgnoreFields(Gate{}, "Expr")); d != "" {
				t.Errorf("canonical form %q parses differently (-first +again):\n%s", got.String(), d)
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		col  int
		msg  string
	}{
		{"", 1, "want a metric name"},
		{"< 500ms", 1, "want a metric name"},
		{"client.tft.p99 < 500ms", 1, "did you mean client.ttft.p99?"},
		{"foo < 1", 1, `unknown metric "foo"`},
		{"client.ttft.p99", 16, "want an operator"},
		{"client.ttft.p99 = 500ms", 17, `write == to compare`},
		{"client.ttft.p99 =< 500ms", 17, "want an operator"},
		{"client.ttft.p99 < 500", 19, "is a duration: give a unit (500ms or 500s)"},
		{"client.ttft.p99 < 500 ms", 23, "without a space"},
		{"client.error_rate < 1 %", 23, "without a space"},
		{"client.ttft.p99 < 500kg", 22, `unknown unit "kg"`},
		{"client.ttft.p99 < 5%", 20, `"%" is not a time unit`},
		{"client.requests.failed == 0ms", 28, `is a count: no unit "ms"`},
		{"client.throughput.requests_per_s > 5%", 37, `is a rate per second: no unit "%"`},
		{"client.ttft.p99 < 1e999s", 19, "out of range"},
		{"client.ttft.p99 < 500ms 3", 25, `unexpected "3"`},
		{"client.ttft.p99 < ", 19, "want a value (such as 500ms) or baseline"},
		{"client.ttft.p99 < true", 19, "is a duration, not true or false"},
		{"health.valid == 1", 17, "is true or false, not a number"},
		{"health.valid < true", 14, "compare it with == or !="},
		{"health.valid == baseline * 2", 26, "as it is"},
		{"client.ttft.p99 regression > 10%", 28, "use < or <="},
		{"client.ttft.p99 regression < 10", 30, "write 10%"},
		{"client.ttft.p99 regression < baseline", 30, "as a percentage"},
		{"client.requests.sent regression < 10%", 22, "cannot regress"},
		{"client.ttft.p99 < baseline * 2ms", 30, "a factor is a plain number or a percentage"},
		{"client.ttft.p99 < baseline + 2", 30, "is a duration: give a unit"},
		{"client.ttft.p99 < baseline *", 29, "want a number after baseline *"},
		{"client.ttft.p99 < baseline baseline", 28, `unexpected "baseline"`},
		{"client.ttft.p99 < 500ms;", 22, `unknown unit "ms;"`},
		{"client.ttft.p99 < $1", 19, `got "$"`},
		{"client.ttft.p99 !! 1ms", 17, `got "!!"`},
		{"client.ttft.p99 < 500µ s", 22, `unknown unit "µ"`},
		{"clïent < 1", 1, `unknown metric "clïent"`},
		{"client.ttft.p99 <= -1ms", 20, "want a value"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tt.expr)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) = %v, want a *SyntaxError", tt.expr, err)
			}
			if se.Col != tt.col || !strings.Contains(se.Msg, tt.msg) {
				t.Errorf("Parse(%q): column %d %q, want column %d containing %q", tt.expr, se.Col, se.Msg, tt.col, tt.msg)
			}
			if !strings.Contains(err.Error(), tt.expr) {
				t.Errorf("error %q does not name the expression", err)
			}
		})
	}
}

func TestParseAllReportsEveryError(t *testing.T) {
	t.Parallel()
	gs, err := ParseAll([]string{"client.ttft.p99 < 500ms", "nope < 1", "client.requests.failed == 0", "client.ttft.p99 < 5"})
	if err == nil {
		t.Fatal("ParseAll accepted two bad expressions")
	}
	if len(gs) != 2 {
		t.Errorf("%d gates parsed, want the 2 good ones", len(gs))
	}
	for _, want := range []string{`"nope < 1"`, `"client.ttft.p99 < 5"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %s:\n%v", want, err)
		}
	}
}

func TestVocabulary(t *testing.T) {
	t.Parallel()
	ms := Metrics()
	names := map[string]Metric{}
	for _, m := range ms {
		names[m.Name] = m
	}
	// The names the task and the example scenarios promise.
	for _, want := range []string{
		"client.ttft.p99", "client.itl.p50", "client.e2e.mean", "client.tpot.p90", "client.requests.failed",
		"client.error_rate", "client.throughput.output_tokens_per_s", "server.ttft.p99", "health.schedule_lag.p99",
		"health.valid", "findings.warn", "findings.fail", "client.errors.http_status", "server.counters.preemptions",
		"server.gauges.kv_cache_usage.max", "sweep.capacity",
	} {
		if _, ok := names[want]; !ok {
			t.Errorf("vocabulary lacks %s", want)
		}
	}
	for _, m := range ms {
		if m.Doc == "" {
			t.Errorf("%s has no doc", m.Name)
		}
		// Every name parses as a gate's metric.
		if _, err := Parse(m.Name + " == baseline"); err != nil {
			t.Errorf("%s: %v", m.Name, err)
		}
	}
	if names["client.ttft.p99"].Better != "lower" || names["client.throughput.output_tokens_per_s"].Better != "higher" {
		t.Errorf("directions: ttft %q, throughput %q", names["client.ttft.p99"].Better, names["client.throughput.output_tokens_per_s"].Better)
	}
}
