// Package didyoumean finds the known name closest to a misspelled one, for
// error messages ("unknown field colour: did you mean color?").
package didyoumean

// Closest returns the known name nearest to name by edit distance, when it is
// nearer than limit (exclusive); ties go to the alphabetically first. "" when
// none is near enough.
func Closest(name string, known []string, limit int) string {
	best, bestD := "", limit
	for _, k := range known {
		if d := Distance(name, k); d < bestD || (d == bestD && best != "" && k < best) {
			best, bestD = k, d
		}
	}
	return best
}

// Distance is the Levenshtein distance between a and b (bytes).
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
