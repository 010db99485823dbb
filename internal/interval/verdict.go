package interval

// Verdict is a three-valued decision: a bound is met, missed, or the
// evidence cannot say which.
type Verdict string

const (
	Pass Verdict = "pass"
	Fail Verdict = "fail"
	// Inconclusive: the interval straddles the limit, or the evidence is
	// not fit to decide (too few samples, a run that is not valid, a host
	// that delayed the client). Never read as a pass.
	Inconclusive Verdict = "inconclusive"
)

// Decide is the verdict of a figure whose confidence interval is iv against
// a requirement holds that is monotone in the figure (below a limit, above
// one): Pass when the whole interval meets it, Fail when none of it does,
// Inconclusive when the interval straddles the limit. For a figure known
// exactly (a count), give Lo = Hi.
func Decide(iv Interval, holds func(float64) bool) Verdict {
	lo, hi := holds(iv.Lo), holds(iv.Hi)
	switch {
	case lo && hi:
		return Pass
	case !lo && !hi:
		return Fail
	}
	return Inconclusive
}
