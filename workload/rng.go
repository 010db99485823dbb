package workload

import "math/rand/v2"

// Every random choice of a plan comes from its own PCG stream, keyed by the
// scenario's seed, what the choice is for, and which item it is for. Streams
// never share state, so request i is the same whichever requests were asked
// for before it, and the plan is safe to read from many goroutines.
const (
	streamRequest  uint64 = iota + 1 // lengths and text of request i
	streamArrivals                   // arrival gaps of phase k
	streamThink                      // think time before request i
	streamPrefix                     // shared prefix of group g
	streamQuestion                   // question k of a shared-prefix dataset
	streamTurn                       // turn k of a multi-turn dataset
	streamSystem                     // a multi-turn conversation's system prompt
	streamShuffle                    // the order of a file dataset's records
	streamBlock                      // the text of a trace's prefix block h
	streamBackoff                    // a closed-loop user's back-off jitter during an outage
	streamAgent                      // an agentic session's user or tool text (agentic.go)
	streamAgentSys                   // an agentic system prompt, keyed by its length
	streamAgentOut                   // a planned reply of an agentic call, standing in for the engine's in a preview
)

func newRand(seed int64, stream, key uint64) *rand.Rand {
	return rand.New(rand.NewPCG(mix(uint64(seed)^mix(stream)), mix(key+0x9e3779b97f4a7c15*stream)))
}

// mix is the splitmix64 finalizer: nearby inputs give unrelated outputs.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// subSeed derives the seed of one stream, for consumers that build their own generator.
func subSeed(seed int64, stream, key uint64) uint64 {
	return mix(mix(uint64(seed)^mix(stream)) + key)
}
