package html

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Every number on the page goes through one of these, so the same quantity
// reads the same everywhere and the golden file is stable across platforms.

// ms formats seconds as milliseconds: more digits for small values, so a
// 0.4 ms ITL does not read as 0.
func ms(sec float64) string {
	if math.IsNaN(sec) || math.IsInf(sec, 0) {
		return "—"
	}
	v := sec * 1000
	switch a := math.Abs(v); {
	case a < 0.0005: // would print as ±0.000
		return "0"
	case a < 1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	case a < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return grouped(v, 0)
	}
}

// shortNum formats an axis label without trailing zeros ("2.5", "10",
// "1 200").
func shortNum(v float64) string {
	if math.Abs(v) >= 100 {
		return grouped(v, 0)
	}
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}

// dur formats seconds with the unit a reader expects at that size.
func dur(sec float64) string {
	a := math.Abs(sec)
	switch {
	case math.IsNaN(sec) || math.IsInf(sec, 0):
		return "—"
	case a == 0:
		return "0 s"
	case a < 1:
		return ms(sec) + " ms"
	case a < 600:
		return strconv.FormatFloat(sec, 'f', 1, 64) + " s"
	default:
		return grouped(sec, 0) + " s (" + clock(sec) + ")"
	}
}

// clock formats seconds as m:ss or h:mm:ss (a long run's clock).
func clock(sec float64) string {
	neg := sec < 0
	d := time.Duration(math.Round(math.Abs(sec))) * time.Second
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	out := fmt.Sprintf("%d:%02d", m, s)
	if h > 0 {
		out = fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	if neg {
		out = "-" + out
	}
	return out
}

// num formats a count or rate: integers without decimals, others with
// enough significant digits to compare.
func num(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "—"
	case v == math.Trunc(v) && a < 1e15:
		return grouped(v, 0)
	case a >= 100:
		return grouped(v, 0)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 0.01:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

// count formats an integer with thousands separators.
func count[T int | int64 | uint64](n T) string { return grouped(float64(n), 0) }

// pct formats a fraction 0–1 as a percentage.
func pct(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "—"
	}
	if a := math.Abs(f * 100); a != 0 && a < 1 {
		return strconv.FormatFloat(f*100, 'f', 2, 64) + " %"
	}
	return strconv.FormatFloat(f*100, 'f', 1, 64) + " %"
}

// grouped formats v with dec decimals and a thin space between thousands.
func grouped(v float64, dec int) string {
	s := strconv.FormatFloat(math.Abs(v), 'f', dec, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if v < 0 && s != strings.Repeat("0", len(intPart)) {
		b.WriteByte('-')
	}
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteString("\u202f")
		}
		b.WriteRune(r)
	}
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// coord formats a chart coordinate: one decimal is finer than a printed
// pixel and keeps path data short.
func coord(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

// evidenceValue formats a finding's number by its key's unit suffix
// (reconcile names them: _s seconds, _ratio a fraction).
func evidenceValue(key string, v float64) string {
	switch {
	case strings.HasSuffix(key, "_s"):
		return dur(v)
	case strings.HasSuffix(key, "_ratio") || key == "ratio":
		return pct(v)
	default:
		return num(v)
	}
}

// clip shortens s to at most n runes, marking the cut: an error message can be
// a whole response body.
func clip(s string, n int) string {
	switch {
	case utf8.RuneCountInString(s) <= n:
		return s
	case n < 1:
		return ""
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// orDash stands in for an empty field.
func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
