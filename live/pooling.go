package live

import (
	"fmt"
	"time"

	"github.com/llmbench-org/llmbench/client"
)

// PoolingLive is the window's successful pooling requests (embeddings,
// rerank; decision 1403): how many, their inputs and the engine's input
// tokens per second. They generate nothing: TTFT and ITL do not apply to
// them, and the views say so rather than show none.
type PoolingLive struct {
	Requests          int
	InputsPerSec      float64
	InputTokensPerSec float64
}

// pooledEvent is what a finished pooling request adds to the window.
type pooledEvent struct {
	inputs, tokens int32
}

// pooledOf is r's pooling counts (zero for a generation request): its
// inputs, and its prompt tokens when the engine's usage gave them.
func pooledOf(r *client.Record) pooledEvent {
	if !r.Pooling() || !r.OK() {
		return pooledEvent{}
	}
	ev := pooledEvent{inputs: int32(min(r.Inputs, 1<<30))}
	if r.TokenSource == client.TokensFromUsage {
		ev.tokens = int32(min(r.PromptTokens, 1<<30))
	}
	return ev
}

// pooledRates are the window's pooling figures over span.
func pooledRates(events []liveEvent, span time.Duration) PoolingLive {
	var p PoolingLive
	inputs, tokens := 0, 0
	for _, ev := range events {
		if ev.pooled.inputs > 0 {
			p.Requests++
			inputs += int(ev.pooled.inputs)
			tokens += int(ev.pooled.tokens)
		}
	}
	if span > 0 {
		p.InputsPerSec = float64(inputs) / span.Seconds()
		p.InputTokensPerSec = float64(tokens) / span.Seconds()
	}
	return p
}

// poolingSegments are the plain view's pooling figures, first among the
// optional ones: the inputs and input tokens per second, and, when only
// pooling requests finished in the window, that TTFT and ITL do not apply.
func poolingSegments(p Progress) []string {
	if p.Pooling.Requests == 0 {
		return nil
	}
	out := []string{fmt.Sprintf("%.1f inputs/s, %.0f input tok/s", p.Pooling.InputsPerSec, p.Pooling.InputTokensPerSec)}
	if p.TTFT.N == 0 {
		out = append(out, "TTFT/ITL n/a (nothing generated)")
	}
	if p.E2E.N > 0 {
		out = append(out, "E2E "+liveQuantiles(p.Percentiles, p.E2E))
	}
	return out
}
