package didyoumean

import "testing"

func TestDistance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"colour", "color", 1}, {"ttft", "tpot", 2}} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestClosest(t *testing.T) {
	t.Parallel()
	known := []string{"concurrency", "duration", "rate", "requests"}
	for _, tc := range []struct {
		name  string
		limit int
		want  string
	}{{"concurency", 3, "concurrency"}, {"rates", 3, "rate"}, {"zzzzzz", 3, ""}, {"reqests", 2, "requests"}} {
		if got := Closest(tc.name, known, tc.limit); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}
