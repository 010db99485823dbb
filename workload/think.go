package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/llmbench-org/llmbench/scenarios"
)

// thinkDist draws a closed-loop user's pause before a request.
type thinkDist interface {
	draw(rng *rand.Rand) time.Duration
}

type fixedThink time.Duration

func (f fixedThink) draw(*rand.Rand) time.Duration { return time.Duration(f) }

type uniformThink struct{ min, max time.Duration }

func (u uniformThink) draw(rng *rand.Rand) time.Duration {
	return u.min + time.Duration(rng.Int64N(int64(u.max-u.min)+1))
}

type exponentialThink time.Duration

func (e exponentialThink) draw(rng *rand.Rand) time.Duration {
	return time.Duration(math.Round(rng.ExpFloat64() * float64(e)))
}

// newThinkDist returns nil when users do not think.
func newThinkDist(t scenarios.Think) (thinkDist, error) {
	switch t.Dist {
	case "":
		return nil, nil
	case scenarios.DistFixed:
		if t.Value == 0 {
			return nil, nil
		}
		return fixedThink(t.Value), nil
	case scenarios.DistUniform:
		return uniformThink{min: t.Min, max: t.Max}, nil
	case scenarios.ThinkExponential:
		return exponentialThink(t.Mean), nil
	}
	return nil, fmt.Errorf("think-time distribution %q is not supported", t.Dist)
}
