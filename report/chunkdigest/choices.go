package chunkdigest

import (
	"time"

	"github.com/llmbench-org/llmbench/client"
)

// Records of several choices (client.Record.Choices > 1, a request with
// n > 1) hold each choice's chunks interleaved in arrival order. Each choice
// is a sequence of its own: its ITLs are the gaps between its own chunks
// (client.Record.ITLs), never between two choices' (issue 21: 0.06 ms
// interleaved against 10.2 ms a sequence). They are rare, so they take this
// path, not Add's loop.

// itlCount is how many ITLs a record of several choices gives: the tokens
// of every chunk but each choice's first.
func itlCount(r *client.Record) int32 {
	var seen uint64
	n := int32(0)
	for _, ch := range r.Chunks {
		c := uint64(1) << (uint(ch.Choice) % 64)
		if seen&c != 0 {
			n += max(ch.Tokens, 1)
		}
		seen |= c
	}
	return n
}

// addChoices is Add's work for a record of several choices.
func (d *Digest) addChoices(r *client.Record, req Request, p *Phase, withITL bool) Request {
	for _, ch := range r.Chunks {
		p.Arrivals.Add(ch.At, int64(max(ch.Tokens, 1)))
	}
	req.ITLs = itlCount(r)
	if !withITL {
		return req
	}
	itls := r.ITLs(d.gaps[:0])
	d.gaps = itls
	p.ITL.addAll(itls)
	for _, s := range d.Spans {
		if r.End > s.From && r.End <= s.To {
			d.InSpans.ITL.addAll(itls)
			var prev [64]time.Duration
			var seen uint64
			for _, ch := range r.Chunks {
				c := uint(ch.Choice) % 64
				if seen&(1<<c) != 0 {
					d.InSpans.Gaps.Add(ch.At - prev[c])
				}
				seen |= 1 << c
				prev[c] = ch.At
			}
			break
		}
	}
	if key := SampleKey(r); p.Sample.Takes(key) {
		kept := append(d.itlsBuffer(len(itls)), itls...)
		if d.bounds != nil {
			d.itls = d.itls[:len(d.itls)+len(kept)]
			d.itlsTaken += len(kept)
		}
		p.Sample.Offer(key, kept)
	}
	return req
}
