package reconcile

import (
	"fmt"
	"math"
	"strings"
)

// evidence collects a finding's numbers; non-finite values are left out so
// that a Finding always encodes as JSON.
type evidence map[string]float64

func (e evidence) set(key string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	e[key] = v
}

func (e evidence) orNil() map[string]float64 {
	if len(e) == 0 {
		return nil
	}
	return e
}

// dur formats seconds for a verdict: milliseconds below a second.
func dur(s float64) string {
	a := math.Abs(s)
	switch {
	case math.IsInf(s, 0) || math.IsNaN(s):
		return fmt.Sprint(s)
	case a == 0:
		return "0 ms"
	case a < 1e-4:
		return fmt.Sprintf("%.0f µs", s*1e6)
	case a < 0.01:
		return fmt.Sprintf("%.2f ms", s*1000)
	case a < 1:
		return fmt.Sprintf("%.1f ms", s*1000)
	case a < 100:
		return fmt.Sprintf("%.2f s", s)
	}
	return fmt.Sprintf("%.0f s", s)
}

// signedDur is dur with an explicit sign.
func signedDur(s float64) string {
	if s >= 0 {
		return "+" + dur(s)
	}
	return "−" + dur(-s)
}

func pct(f float64) string {
	if math.Abs(f) < 0.1 && f != 0 {
		return fmt.Sprintf("%.1f%%", f*100)
	}
	return fmt.Sprintf("%.0f%%", f*100)
}

func count(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// joinClauses joins verdict clauses with "; ", dropping empty ones.
func joinClauses(cs ...string) string {
	var keep []string
	for _, c := range cs {
		if c != "" {
			keep = append(keep, c)
		}
	}
	return strings.Join(keep, "; ")
}
