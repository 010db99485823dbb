package sentload

import (
	"strings"
	"testing"
)

func reqs(n, prompt, output int, gap float64) []Request {
	var out []Request
	for i := range n {
		out = append(out, Request{At: 10 + float64(i)*gap, HasAt: true, Prompt: prompt, Output: output})
	}
	return out
}

// TestSame: the verdict on pairs of loads that differ in one way each.
func TestSame(t *testing.T) {
	t.Parallel()
	base := Of(reqs(100, 512, 128, 0.1), "planned")
	noTimes := reqs(100, 512, 128, 0.1)
	for i := range noTimes {
		noTimes[i].HasAt = false
	}
	for _, c := range []struct {
		name    string
		other   Fingerprint
		same    bool
		differs string
		unknown string
	}{
		{"itself", base, true, "", ""},
		{"a shifted clock", Of(func() []Request { r := reqs(100, 512, 128, 0.1); r[0].At = 9.95; return r }(), "planned"), true, "", ""},
		{"one request more", Of(reqs(101, 512, 128, 0.1), "planned"), false, "requests: 100 vs 101", ""},
		{"prompts 2% longer", Of(reqs(100, 523, 128, 0.1), "planned"), false, "prompt tokens mean", ""},
		{"outputs within half a token", Of(reqs(100, 512, 128, 0.1), "planned"), true, "", ""},
		{"twice the rate", Of(reqs(100, 512, 128, 0.05), "planned"), false, "gaps between sends mean", ""},
		{"gaps 5% apart", Of(reqs(100, 512, 128, 0.105), "planned"), true, "", ""},
		{"no send times", Of(noTimes, "recorded"), true, "", "a side does not record its send times"},
	} {
		v := Same(base, c.other)
		if v.Same != c.same {
			t.Errorf("%s: same = %v (%v), want %v", c.name, v.Same, v.Differs, c.same)
		}
		if c.differs != "" && !strings.Contains(strings.Join(v.Differs, "; "), c.differs) {
			t.Errorf("%s: differs %v, want %q", c.name, v.Differs, c.differs)
		}
		if c.unknown != "" && !strings.Contains(strings.Join(v.Unknown, "; "), c.unknown) {
			t.Errorf("%s: unknown %v, want %q", c.name, v.Unknown, c.unknown)
		}
	}
}

// TestPlanHash: the hash moves with any field of any item, and with order.
func TestPlanHash(t *testing.T) {
	t.Parallel()
	items := []PlanItem{{Index: 0, Prompt: 16, Output: 8, IntendedMicros: 100}, {Index: 1, Prompt: 16, Output: 8, IntendedMicros: 200}}
	h := PlanHash(items)
	if PlanHash(items) != h || len(h) != 64 {
		t.Fatalf("hash %q not stable", h)
	}
	for name, change := range map[string]func([]PlanItem){
		"prompt":   func(p []PlanItem) { p[1].Prompt++ },
		"output":   func(p []PlanItem) { p[0].Output-- },
		"time":     func(p []PlanItem) { p[1].IntendedMicros++ },
		"endpoint": func(p []PlanItem) { p[0].Endpoint = "completions" },
		"order":    func(p []PlanItem) { p[0], p[1] = p[1], p[0] },
	} {
		p := []PlanItem{items[0], items[1]}
		change(p)
		if PlanHash(p) == h {
			t.Errorf("changing the %s keeps the hash", name)
		}
	}
}
