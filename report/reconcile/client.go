package reconcile

import (
	"time"

	"github.com/llmbench-org/llmbench/report/chunkdigest"

	"github.com/llmbench-org/llmbench/client"
)

// clientStats is the client's side of a comparison: sums and means over a
// set of records, in seconds and tokens.
type clientStats struct {
	records []*client.Record
	// itl holds the ITLs of the successful records, per token and per
	// chunk (chunkdigest.Digest.InSpans).
	itl *struct{ ITL, Gaps chunkdigest.Sketch }

	sent, ok, failed int
	// engineOK and engineReached are ok and reached in the units of the
	// engine's finished-request counter (client.Record.EngineRequests: one
	// per input of a pooling request).
	engineOK, engineReached int
	// reached counts the records whose request may have reached the engine:
	// every one except those that never connected.
	reached int
	// abandoned counts failed records the engine may still have been
	// working on when the client gave up (timeouts, cancellations, broken
	// streams): the engine may count them as finished or aborted later.
	abandoned int

	prompt, output, cached float64
	estimatedTokens        int // OK records whose output count did not come from usage

	ttftSum float64
	ttftN   int
	e2eSum  float64 // OK records, each EngineRequests times
	// busySum is Σ(end − send on the wire) over every record that reached
	// the engine, failed ones included for the time they were in flight:
	// what occupied the engine, by Little's law its mean in-flight count
	// times the window.
	busySum float64
	// prefilled counts the records, failed or not, that received a first
	// token: requests the engine surely prefilled. abandonedUnprefilled
	// counts those the client gave up on before a first token (timeouts,
	// cancellations, broken streams): the engine may still have finished
	// their prefill (llama.cpp handles a cancel between passes, after the
	// pass under way adds the prompt time), so the engine prefilled between
	// prefilled and prefilled + abandonedUnprefilled of ours.
	prefilled            int
	abandonedUnprefilled int
	// failedTokenBound bounds the tokens the engine may have generated for
	// failed requests that reached it (an engine may go on to max_tokens
	// after the client's stream broke: llama.cpp does); failedUnbounded says
	// one of them had no max_tokens, so no bound is known.
	failedTokenBound float64
	failedUnbounded  bool

	// Inter-token gaps, over OK records with at least two content chunks:
	// gapSum is Σ(last chunk − first chunk), chunkGaps the number of gaps
	// between chunks, tokenGaps the tokens carried by every chunk after the
	// first (what SGLang's token-counting ITL histogram counts).
	gapSum    float64
	chunkGaps int
	tokenGaps float64
	// gapOutput is the usage output tokens of those same records: gapSum /
	// gapOutput is the client's counterpart of an engine's decode time per
	// generated token (first to last token, over every token).
	gapOutput float64

	tpotSum float64
	tpotN   int
}

func newClientStats(records []*client.Record, chunks []chunkdigest.Request, itl *struct{ ITL, Gaps chunkdigest.Sketch }) clientStats {
	c := clientStats{records: records, itl: itl}
	for i, r := range records {
		c.sent++
		if r.ErrorClass != client.ErrConnect {
			c.reached++
			c.engineReached += r.EngineRequests()
			if d := r.E2E(); d > 0 {
				// A pooling request's inputs are each an engine request
				// in flight with it (EngineRequests).
				c.busySum += d.Seconds() * float64(r.EngineRequests())
			}
		}
		if r.FirstToken > 0 {
			c.prefilled++
		}
		if !r.OK() {
			c.failed++
			if r.ErrorClass != client.ErrConnect {
				if r.MaxTokens > 0 {
					c.failedTokenBound += float64(max(r.MaxTokens, r.OutputTokens))
				} else {
					c.failedUnbounded = true
				}
			}
			switch r.ErrorClass {
			case client.ErrTimeout, client.ErrStalled, client.ErrCanceled, client.ErrStreamBroken, client.ErrMalformedChunk, client.ErrContentEncoding:
				c.abandoned++
				if r.FirstToken == 0 {
					c.abandonedUnprefilled++
				}
			}
			continue
		}
		c.ok++
		c.engineOK += r.EngineRequests()
		c.prompt += float64(r.PromptTokens)
		c.output += float64(r.OutputTokens)
		c.cached += float64(r.CachedTokens)
		if r.TokenSource != client.TokensFromUsage {
			c.estimatedTokens++
		}
		if d, ok := r.TTFT(); ok {
			c.ttftSum += d.Seconds()
			c.ttftN++
		}
		c.e2eSum += r.E2E().Seconds() * float64(r.EngineRequests())
		if ch := chunks[i]; ch.Chunks > 1 {
			c.gapSum += (ch.Last - ch.First).Seconds()
			c.chunkGaps += int(ch.Chunks) - 1
			c.gapOutput += float64(r.OutputTokens)
			c.tokenGaps += float64(ch.ITLs)
		}
		if d, ok := r.TPOT(); ok {
			c.tpotSum += d.Seconds()
			c.tpotN++
		}
	}
	return c
}

func (c clientStats) ttftMean() (float64, bool) { return ratio(c.ttftSum, float64(c.ttftN)) }
func (c clientStats) tpotMean() (float64, bool) { return ratio(c.tpotSum, float64(c.tpotN)) }

// itlMean is the client's mean inter-token latency the way the engine's ITL
// histogram averages it: per token when the histogram counts tokens, per
// chunk otherwise.
func (c clientStats) itlMean(perToken bool) (float64, bool) {
	if perToken {
		return ratio(c.gapSum, c.tokenGaps)
	}
	return ratio(c.gapSum, float64(c.chunkGaps))
}

// itlSamples are the client's inter-token samples in the same weighting:
// one per token (a chunk of k tokens giving k samples of gap/k, as SGLang
// bins them) or one per chunk gap.
func (c clientStats) itlSamples(perToken bool) []float64 {
	if perToken {
		return c.itl.ITL.Representative(representativeITLs)
	}
	return c.itl.Gaps.Representative(representativeITLs)
}

// representativeITLs is how many values stand for an ITL sketch
// (chunkdigest.Sketch.Representative) where the client's ITLs are binned
// into the engine's buckets and their quantiles read.
const representativeITLs = 100_000

// samples returns one value per OK record that has it.
func (c clientStats) samples(of func(*client.Record) (time.Duration, bool)) []float64 {
	var out []float64
	for _, r := range c.records {
		if !r.OK() {
			continue
		}
		if d, ok := of(r); ok {
			out = append(out, d.Seconds())
		}
	}
	return out
}

func ratio(num, den float64) (float64, bool) {
	if den <= 0 {
		return 0, false
	}
	return num / den, true
}
