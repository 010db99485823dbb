package saturation

import (
	"math"
	"testing"
)

func TestDetectSaturation(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	tests := []struct {
		name     string
		points   []Point
		found    bool
		knee     string
		capacity float64
	}{
		{
			name: "rate sweep saturating near 14/s",
			points: []Point{
				{"rate-2", 2, 2, 0.05, nan}, {"rate-4", 4, 4, 0.05, nan}, {"rate-8", 8, 7.9, 0.06, nan},
				{"rate-12", 12, 11.8, 0.08, nan}, {"rate-16", 16, 13.9, 0.9, nan}, {"rate-24", 24, 14.1, 4.2, nan},
			},
			// 12 → 16 still gained 53 % of the proportional rise; 16 → 24 gained 3 %.
			found: true, knee: "rate-16", capacity: 14.1,
		},
		{
			name: "order of points does not matter",
			points: []Point{
				{"c-32", 32, 60, 2.0, 24}, {"c-1", 1, 3, 0.02, 0}, {"c-8", 8, 22, 0.03, 0}, {"c-16", 16, 41, 0.05, 0.2},
			},
			found: true, knee: "c-16", capacity: 60,
		},
		{
			name: "queue growth alone counts when latency is flat",
			points: []Point{
				{"a", 10, 10, 0.1, 0}, {"b", 20, 19.5, 0.1, 0.1}, {"c", 40, 21, 0.11, 9},
			},
			found: true, knee: "b", capacity: 21,
		},
		{
			name: "still scaling",
			points: []Point{
				{"a", 1, 1, 0.1, nan}, {"b", 2, 2, 0.1, nan}, {"c", 4, 3.9, 0.12, nan},
			},
		},
		{
			name: "flat throughput without queueing is not saturation",
			points: []Point{
				{"a", 1, 5, 0.1, 0}, {"b", 2, 5, 0.1, 0},
			},
		},
		{name: "one point", points: []Point{{"a", 1, 1, 0.1, nan}}},
		{name: "no points"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Detect(tt.points)
			if got.Found != tt.found || got.Phase != tt.knee || got.Capacity != tt.capacity {
				t.Errorf("Detect = %+v; want found %v, knee %q, capacity %g", got, tt.found, tt.knee, tt.capacity)
			}
			if got.Reason == "" {
				t.Error("no reason given")
			}
		})
	}
}
