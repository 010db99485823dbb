//go:build race

package run

// raceEnabled: the race detector slows every goroutine several times over,
// so a millisecond timing bound measures it rather than llmbench.
const raceEnabled = true
