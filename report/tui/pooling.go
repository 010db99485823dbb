package tui

import (
	"fmt"

	"github.com/llmbench-org/llmbench/live"
)

// poolingNotes are the live view's pooling figures (live.PoolingLive,
// decision 1403): the window's inputs and input tokens per second, and
// that TTFT and ITL do not apply when only pooling requests finished.
func poolingNotes(p live.Progress) []string {
	pl := p.Pooling
	if pl.Requests == 0 {
		return nil
	}
	out := []string{fmt.Sprintf("pooling: %.1f inputs/s, %.0f input tokens/s", pl.InputsPerSec, pl.InputTokensPerSec)}
	if p.TTFT.N == 0 {
		out = append(out, "TTFT and ITL do not apply (nothing generated; latency is E2E)")
	}
	return out
}
