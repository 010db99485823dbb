package workload

import (
	"math"
	"time"
)

// ConcurrencyStage is one leg of a closed-loop ramp: over Duration the number
// of users moves linearly from the previous stage's (0 before the first) to
// Concurrency.
type ConcurrencyStage struct {
	Duration    time.Duration
	Concurrency int
}

// LevelChange is a moment a closed-loop ramp changes its number of users.
type LevelChange struct {
	At    time.Duration // from the phase start
	Users int
}

// UserLevels turns a closed-loop ramp into the moments its number of users
// changes: the interpolated target rounded toward the previous level (a user
// joins when the line reaches its number, leaves when it falls below it).
// The first change is at 0.
func UserLevels(stages []ConcurrencyStage) []LevelChange {
	out := []LevelChange{{At: 0, Users: 0}}
	set := func(at time.Duration, users int) {
		if last := &out[len(out)-1]; last.At == at {
			last.Users = users
			return
		}
		if out[len(out)-1].Users != users {
			out = append(out, LevelChange{At: at, Users: users})
		}
	}
	var t time.Duration
	level := 0
	for _, st := range stages {
		c0, c1 := level, st.Concurrency
		switch {
		case st.Duration <= 0 || c0 == c1:
			set(t, c1)
		case c1 > c0:
			for l := c0 + 1; l <= c1; l++ {
				set(t+scale(st.Duration, l-c0, c1-c0), l)
			}
		default:
			for l := c0 - 1; l >= c1; l-- {
				set(t+scale(st.Duration, c0-l, c0-c1), l)
			}
		}
		t += st.Duration
		level = c1
	}
	return out
}

// scale is d·num/den rounded to the nanosecond.
func scale(d time.Duration, num, den int) time.Duration {
	return time.Duration(math.Round(float64(d) * float64(num) / float64(den)))
}

// stagesDuration is the total length of a ramp.
func stagesDuration[S ConcurrencyStage | RateStage](stages []S) time.Duration {
	var total time.Duration
	for _, st := range stages {
		switch s := any(st).(type) {
		case ConcurrencyStage:
			total += s.Duration
		case RateStage:
			total += s.Duration
		}
	}
	return total
}
