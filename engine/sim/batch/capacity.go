package batch

import "time"

// Capacity is the engine's steady-state request throughput (requests/s) for
// requests of the given prompt and output lengths, with every running slot
// busy and no speculative decoding or prefix hits: each of the
// MaxRunningRequests sequences gains one token per decode pass, whose cost is
// DecodeBase + running × DecodePerSeq + the KV tokens read (a sequence holds on
// average prompt + output/2 tokens), and each request adds one prefill of its
// prompt (overhead + prompt × per token) to some pass. It is what a sweep
// should find as the saturation point, so tests can check llmbench against it.
func (p Params) Capacity(prompt, output int) float64 {
	running := time.Duration(max(1, p.MaxRunningRequests))
	kvTokens := time.Duration(prompt + output/2)
	pass := p.DecodeBase + running*p.DecodePerSeq + running*kvTokens*p.DecodePerKVToken
	perRequest := float64(output)*pass.Seconds()/float64(running) +
		(p.PrefillOverhead + time.Duration(prompt)*p.PrefillPerToken).Seconds()
	if perRequest <= 0 {
		return 0
	}
	return 1 / perRequest
}
