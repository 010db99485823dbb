package gates

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Op is a comparison operator.
type Op string

const (
	Less         Op = "<"
	LessEqual    Op = "<="
	Greater      Op = ">"
	GreaterEqual Op = ">="
	Equal        Op = "=="
	NotEqual     Op = "!="
)

// holds reports whether a op b.
func (op Op) holds(a, b float64) bool {
	switch op {
	case Less:
		return a < b
	case LessEqual:
		return a <= b
	case Greater:
		return a > b
	case GreaterEqual:
		return a >= b
	case Equal:
		return a == b
	case NotEqual:
		return a != b
	}
	return false
}

// Unit is the unit a number was written with.
type Unit string

const (
	NoUnit      Unit = ""
	Microsecond Unit = "us"
	MicroSign   Unit = "µs" // the same as us
	Millisecond Unit = "ms"
	Second      Unit = "s"
	Percent     Unit = "%"
	Boolean     Unit = "bool" // true (Number 1) or false (Number 0)
	Joule       Unit = "J"
	MilliJoule  Unit = "mJ"
	KiloJoule   Unit = "kJ"
	WattHour    Unit = "Wh"
)

// Quantity is a number as written, with its unit.
type Quantity struct {
	Number float64
	Unit   Unit
}

// Value is the quantity in its base unit: seconds for durations, a fraction
// for percentages, 1 or 0 for booleans, the number itself otherwise.
// Dividing by the unit's size (rather than multiplying by its inverse) keeps
// 500ms exactly 0.5.
func (q Quantity) Value() float64 {
	switch q.Unit {
	case Microsecond, MicroSign:
		return q.Number / 1e6
	case Millisecond:
		return q.Number / 1e3
	case Percent:
		return q.Number / 100
	case MilliJoule:
		return q.Number / 1e3
	case KiloJoule:
		return q.Number * 1e3
	case WattHour:
		return q.Number * 3600
	}
	return q.Number
}

func (q Quantity) String() string {
	if q.Unit == Boolean {
		return strconv.FormatBool(q.Number != 0)
	}
	return strconv.FormatFloat(q.Number, 'g', -1, 64) + string(q.Unit)
}

// Arith is how a baseline operand adjusts the baseline's value.
type Arith string

const (
	AsIs  Arith = ""  // the baseline's value itself
	Times Arith = "*" // × Operand.Value (a plain factor or a percentage)
	Plus  Arith = "+" // + Operand.Value (in the metric's unit)
	Minus Arith = "-" // − Operand.Value
)

// Operand is a gate's right-hand side: a literal, or the baseline run's
// value of the same metric, optionally scaled or shifted.
type Operand struct {
	Baseline bool
	Arith    Arith    // with Baseline
	Value    Quantity // the literal; with Baseline and an Arith, the factor or offset
}

func (o Operand) String() string {
	if !o.Baseline {
		return o.Value.String()
	}
	if o.Arith == AsIs {
		return "baseline"
	}
	return fmt.Sprintf("baseline %s %s", o.Arith, o.Value)
}

// Gate is one parsed threshold expression:
//
//	<metric> <op> <value>             client.ttft.p99 < 500ms
//	<metric> <op> baseline [* F|± V]  client.ttft.p99 < baseline * 1.10
//	<metric> regression <op> P%       client.ttft.p99 regression < 10%
//
// A regression gate bounds how much worse than the baseline the metric may
// be, as a fraction of the baseline's value (worse: higher for latencies,
// lower for throughput; see Metrics for each metric's direction).
type Gate struct {
	Expr       string // as written
	Metric     string
	Regression bool
	Op         Op
	RHS        Operand
}

// Phase is the phase a phase[NAME].… gate reads ("" for the run's measured
// phases).
func (g Gate) Phase() string {
	phase, _, _ := splitPhase(g.Metric)
	return phase
}

// String is the gate in canonical form; parsing it gives back the same gate.
func (g Gate) String() string {
	reg := ""
	if g.Regression {
		reg = " regression"
	}
	return fmt.Sprintf("%s%s %s %s", g.Metric, reg, g.Op, g.RHS)
}

// NeedsBaseline reports whether the gate compares against a baseline run.
func (g Gate) NeedsBaseline() bool { return g.Regression || g.RHS.Baseline }

// SyntaxError is a gate expression that does not parse or does not fit its
// metric. Col is the 1-based column (in characters) where the problem starts.
type SyntaxError struct {
	Expr string
	Col  int
	Msg  string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("gate %q: column %d: %s", e.Expr, e.Col, e.Msg)
}

// Gates is a set of parsed gates, evaluated together.
type Gates []Gate

// ParseAll parses every expression and reports every error (errors.Join of
// *SyntaxError), so a user fixes them all in one go.
func ParseAll(exprs []string) (Gates, error) {
	var gs Gates
	var errs []error
	for _, e := range exprs {
		g, err := Parse(e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		gs = append(gs, g)
	}
	return gs, errors.Join(errs...)
}

// Parse parses one gate expression and checks it against its metric: the
// metric exists, the value's unit fits it, the operator makes sense for it.
func Parse(expr string) (Gate, error) {
	p := &parser{lx: lexer{src: expr}}
	g, err := p.gate()
	if err != nil {
		return Gate{}, err
	}
	g.Expr = expr
	return g, nil
}

type tokenKind int

const (
	tokEOF tokenKind = iota
	tokIdent
	tokNumber // text holds the digits; unit the letters or % glued to them
	tokOp
	tokArith
	tokBad
)

type token struct {
	kind tokenKind
	text string
	unit string // tokNumber only
	pos  int    // byte offset in the expression
}

func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "the end"
	case tokNumber:
		return strconv.Quote(t.text + t.unit)
	}
	return strconv.Quote(t.text)
}

// lexer splits an expression into tokens; whitespace separates them and is
// otherwise ignored, so "client.ttft.p99<500ms" parses too.
type lexer struct {
	src string
	pos int
}

func isLetter(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

func (l *lexer) next() token {
	for l.pos < len(l.src) && (l.src[l.pos] == ' ' || l.src[l.pos] == '\t') {
		l.pos++
	}
	start := l.pos
	if l.pos >= len(l.src) {
		return token{kind: tokEOF, pos: start}
	}
	c := l.src[l.pos]
	switch {
	case isLetter(c):
		// A word runs to the next separator, so a mistyped name is quoted whole.
		l.word()
		return token{kind: tokIdent, text: l.src[start:l.pos], pos: start}
	case isDigit(c) || c == '.':
		l.number()
		num := l.src[start:l.pos]
		ustart := l.pos
		l.word()
		return token{kind: tokNumber, text: num, unit: l.src[ustart:l.pos], pos: start}
	case strings.IndexByte(opChars, c) >= 0:
		for l.pos < len(l.src) && strings.IndexByte(opChars, l.src[l.pos]) >= 0 {
			l.pos++
		}
		return token{kind: tokOp, text: l.src[start:l.pos], pos: start}
	case c == '*' || c == '+' || c == '-':
		l.pos++
		return token{kind: tokArith, text: l.src[start:l.pos], pos: start}
	}
	_, size := utf8.DecodeRuneInString(l.src[l.pos:])
	l.pos += size
	return token{kind: tokBad, text: l.src[start:l.pos], pos: start}
}

const (
	opChars    = "<>=!"
	separators = " \t" + opChars + "*+-"
)

// word consumes up to the next separator outside brackets, so that a phase
// name such as rate-8 in phase[rate-8].client.ttft.p99 stays in the word.
func (l *lexer) word() {
	depth := 0
	for l.pos < len(l.src) {
		switch c := l.src[l.pos]; {
		case c == '[':
			depth++
		case c == ']' && depth > 0:
			depth--
		case depth == 0 && strings.IndexByte(separators, c) >= 0:
			return
		}
		_, size := utf8.DecodeRuneInString(l.src[l.pos:])
		l.pos += size
	}
}

// number consumes digits, an optional fraction and an optional exponent
// (the forms strconv.FormatFloat writes: 1e+06, 5e-07).
func (l *lexer) number() {
	digits := func() {
		for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
			l.pos++
		}
	}
	digits()
	if l.pos < len(l.src) && l.src[l.pos] == '.' {
		l.pos++
		digits()
	}
	if l.pos < len(l.src) && (l.src[l.pos] == 'e' || l.src[l.pos] == 'E') {
		i := l.pos + 1
		if i < len(l.src) && (l.src[i] == '+' || l.src[i] == '-') {
			i++
		}
		if i < len(l.src) && isDigit(l.src[i]) {
			l.pos = i
			digits()
		}
	}
}

type parser struct {
	lx lexer
}

// peek returns the next token without consuming it.
func (p *parser) peek() token {
	save := p.lx.pos
	t := p.lx.next()
	p.lx.pos = save
	return t
}

func (p *parser) errAt(pos int, format string, args ...any) error {
	return &SyntaxError{Expr: p.lx.src, Col: utf8.RuneCountInString(p.lx.src[:pos]) + 1, Msg: fmt.Sprintf(format, args...)}
}

const opList = "<, <=, >, >=, == or !="

func (p *parser) gate() (Gate, error) {
	var g Gate
	t := p.lx.next()
	if t.kind != tokIdent {
		return g, p.errAt(t.pos, "want a metric name (such as client.ttft.p99), got %s", t.describe())
	}
	m, ok := lookupMetric(t.text)
	if !ok {
		return g, p.errAt(t.pos, "unknown metric %q%s", t.text, suggestion(t.text))
	}
	g.Metric = t.text

	t = p.lx.next()
	if t.kind == tokIdent && t.text == "regression" {
		if m.better == neither {
			return g, p.errAt(t.pos, "%s has no better direction, so it cannot regress: compare it with baseline instead (%s <= baseline * 1.1)", g.Metric, g.Metric)
		}
		g.Regression = true
		t = p.lx.next()
	}
	if t.kind != tokOp {
		return g, p.errAt(t.pos, "want an operator (%s), got %s", opList, t.describe())
	}
	switch op := Op(t.text); op {
	case Less, LessEqual, Greater, GreaterEqual, Equal, NotEqual:
		g.Op = op
	case "=":
		return g, p.errAt(t.pos, `"=" is not an operator: write == to compare`)
	default:
		return g, p.errAt(t.pos, "want an operator (%s), got %s", opList, t.describe())
	}
	if g.Regression && g.Op != Less && g.Op != LessEqual {
		return g, p.errAt(t.pos, "a regression gate bounds the regression from above: use < or <=, not %s", g.Op)
	}
	if m.unit == boolean && g.Op != Equal && g.Op != NotEqual {
		return g, p.errAt(t.pos, "%s is true or false: compare it with == or !=, not %s", g.Metric, g.Op)
	}

	rhs, err := p.operand(g, m)
	if err != nil {
		return g, err
	}
	g.RHS = rhs
	if t := p.lx.next(); t.kind != tokEOF {
		switch Unit(t.text) {
		case Microsecond, MicroSign, Millisecond, Second, Percent:
			return g, p.errAt(t.pos, "write the unit right after the number, without a space (500ms)")
		}
		return g, p.errAt(t.pos, "unexpected %s after the value", t.describe())
	}
	return g, nil
}

func (p *parser) operand(g Gate, m metric) (Operand, error) {
	t := p.lx.next()
	if g.Regression {
		if t.kind != tokNumber {
			return Operand{}, p.errAt(t.pos, "want the allowed regression as a percentage (such as 10%%), got %s", t.describe())
		}
		q, err := p.quantity(t)
		if err != nil {
			return Operand{}, err
		}
		if q.Unit != Percent {
			return Operand{}, p.errAt(t.pos, "a regression is a percentage of the baseline: write %s%%", t.text)
		}
		return Operand{Value: q}, nil
	}
	switch {
	case t.kind == tokIdent && t.text == "baseline":
		return p.baseline(m)
	case t.kind == tokIdent && (t.text == "true" || t.text == "false"):
		if m.unit != boolean {
			return Operand{}, p.errAt(t.pos, "%s is %s, not true or false", g.Metric, m.unit.describe())
		}
		q := Quantity{Unit: Boolean}
		if t.text == "true" {
			q.Number = 1
		}
		return Operand{Value: q}, nil
	case t.kind == tokNumber:
		if m.unit == boolean {
			return Operand{}, p.errAt(t.pos, "%s is true or false, not a number", g.Metric)
		}
		q, err := p.quantity(t)
		if err != nil {
			return Operand{}, err
		}
		if err := p.fits(t, q, m); err != nil {
			return Operand{}, err
		}
		return Operand{Value: q}, nil
	}
	return Operand{}, p.errAt(t.pos, "want a value (such as %s) or baseline, got %s", m.unit.example(), t.describe())
}

// baseline parses what may follow the keyword: nothing, * factor, or ± offset.
func (p *parser) baseline(m metric) (Operand, error) {
	o := Operand{Baseline: true}
	if p.peek().kind != tokArith {
		return o, nil
	}
	t := p.lx.next()
	if m.unit == boolean {
		return o, p.errAt(t.pos, "a true/false metric compares with baseline as it is: no %s", t.text)
	}
	o.Arith = Arith(t.text)
	n := p.lx.next()
	if n.kind != tokNumber {
		return o, p.errAt(n.pos, "want a number after baseline %s, got %s", t.text, n.describe())
	}
	q, err := p.quantity(n)
	if err != nil {
		return o, err
	}
	if o.Arith == Times {
		if q.Unit != NoUnit && q.Unit != Percent {
			return o, p.errAt(n.pos, "a factor is a plain number or a percentage (1.1 or 110%%), not %q", q.Unit)
		}
	} else if err := p.fits(n, q, m); err != nil {
		return o, err
	}
	o.Value = q
	return o, nil
}

// quantity reads a number token and its unit.
func (p *parser) quantity(t token) (Quantity, error) {
	n, err := strconv.ParseFloat(t.text, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return Quantity{}, p.errAt(t.pos, "number %s is out of range", t.text)
		}
		return Quantity{}, p.errAt(t.pos, "%q is not a number", t.text)
	}
	u := Unit(t.unit)
	switch u {
	case NoUnit, Microsecond, MicroSign, Millisecond, Second, Percent, Joule, MilliJoule, KiloJoule, WattHour:
	default:
		return Quantity{}, p.errAt(t.pos+len(t.text), "unknown unit %q (us, ms, s, %%, J, mJ, kJ, Wh, or none)", t.unit)
	}
	return Quantity{Number: n, Unit: u}, nil
}

// fits checks that a literal's unit suits the metric: durations need a time
// unit, percentages go with fractions, counts and rates are plain.
func (p *parser) fits(t token, q Quantity, m metric) error {
	unitPos := t.pos + len(t.text)
	switch m.unit {
	case seconds:
		switch q.Unit {
		case Microsecond, MicroSign, Millisecond, Second:
			return nil
		case NoUnit:
			if next := p.peek(); next.kind == tokIdent && slices.Contains([]Unit{Microsecond, Millisecond, Second}, Unit(next.text)) {
				return p.errAt(next.pos, "write the unit right after the number, without a space (%s%s)", t.text, next.text)
			}
			return p.errAt(t.pos, "%s is a duration: give a unit (%sms or %ss)", m.name, t.text, t.text)
		}
		return p.errAt(unitPos, "%s is a duration: %q is not a time unit (us, ms, s)", m.name, q.Unit)
	case fraction:
		if q.Unit == NoUnit || q.Unit == Percent {
			return nil
		}
	case count, rate:
		if q.Unit == NoUnit {
			return nil
		}
	case joules:
		return fitsEnergy(p, t, q, m)
	}
	return p.errAt(unitPos, "%s is %s: no unit %q", m.name, m.unit.describe(), q.Unit)
}
