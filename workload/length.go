package workload

import (
	"fmt"
	"math/rand/v2"

	"github.com/llmbench-org/llmbench/scenarios"
)

// lengthDist draws token lengths (always at least 1).
type lengthDist interface {
	draw(rng *rand.Rand) int
}

type fixedLength int

func (f fixedLength) draw(*rand.Rand) int { return int(f) }

type uniformLength struct{ min, max int }

func (u uniformLength) draw(rng *rand.Rand) int { return u.min + rng.IntN(u.max-u.min+1) }

func newLengthDist(l scenarios.Length) (lengthDist, error) {
	switch l.Dist {
	case scenarios.DistFixed:
		return fixedLength(l.Value), nil
	case scenarios.DistUniform:
		return uniformLength{min: l.Min, max: l.Max}, nil
	}
	return nil, fmt.Errorf("length distribution %q is not supported", l.Dist)
}
