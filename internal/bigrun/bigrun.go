// Package bigrun writes a plausible requests.jsonl of any size, for
// measuring how reports scale: several phases, a few failures, chunks of
// one token (some of several), latencies that vary by request. Records are
// written with json.Marshal of client.Record, so the file follows the
// record's on-disk format wherever it goes.
package bigrun

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/llmbench-org/llmbench/client"
)

// Config says what to generate.
type Config struct {
	Requests int // records
	Chunks   int // output chunks per successful request
	Seed     uint64
	// Phases are the phases' names; the requests are spread evenly over
	// them, in order. One phase "main" when empty.
	Phases []string
	// Rate is the requests sent per second (the run clock); 1000 when 0.
	Rate float64
}

// Phase is one generated phase's span on the run clock.
type Phase struct {
	Name       string
	Start, End time.Duration
}

// Write writes cfg.Requests records, one JSON line each, and returns the
// phases' spans.
func Write(w io.Writer, cfg Config) ([]Phase, error) {
	if len(cfg.Phases) == 0 {
		cfg.Phases = []string{"main"}
	}
	if cfg.Rate <= 0 {
		cfg.Rate = 1000
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 42))
	bw := bufio.NewWriterSize(w, 1<<20)
	gap := time.Duration(float64(time.Second) / cfg.Rate)
	phases := make([]Phase, len(cfg.Phases))
	per := (cfg.Requests + len(cfg.Phases) - 1) / max(len(cfg.Phases), 1)
	var rec client.Record
	chunks := make([]client.Chunk, 0, cfg.Chunks)
	for i := range cfg.Requests {
		ph := min(i/max(per, 1), len(cfg.Phases)-1)
		intended := time.Second + time.Duration(i)*gap
		sent := intended + time.Duration(rng.IntN(200))*time.Microsecond
		wrote := sent + 50*time.Microsecond + time.Duration(rng.IntN(100))*time.Microsecond
		ttft := 20*time.Millisecond + time.Duration(rng.ExpFloat64()*float64(30*time.Millisecond))
		step := 5*time.Millisecond + time.Duration(rng.IntN(4000))*time.Microsecond
		rec = client.Record{
			ID: fmt.Sprintf("req-%08d", i), ServerID: fmt.Sprintf("chatcmpl-%016x", rng.Uint64()), Index: i, Phase: cfg.Phases[ph],
			Intended: intended, Sent: sent, Wrote: wrote, Reused: i%50 != 0, FirstByte: wrote + ttft - time.Millisecond,
			TargetPromptTokens: 512, MaxTokens: cfg.Chunks, PromptTokens: 500 + rng.IntN(25),
			TokenSource: client.TokensFromUsage, TokensPerChunkSource: client.ChunkTokensUsageGrowth,
		}
		if i%50 == 0 {
			rec.Connected, rec.ConnectDur = wrote-40*time.Microsecond, 300*time.Microsecond
		}
		switch {
		case i%997 == 13: // a refused request now and then
			rec.Status, rec.ErrorClass, rec.Error, rec.End = 503, client.ErrHTTPStatus, "503 Service Unavailable: overloaded", wrote+2*time.Millisecond
			rec.FirstByte = rec.End
		default:
			at := wrote + ttft
			chunks = chunks[:0]
			tokens := 0
			for c := range cfg.Chunks {
				k := int32(1)
				if c > 0 && rng.IntN(20) == 0 {
					k = 2 // a chunk of two tokens (speculative decoding)
				}
				if c > 0 {
					at += time.Duration(k)*step + time.Duration(rng.IntN(1000))*time.Microsecond
					if rng.IntN(500) == 0 {
						at += 150 * time.Millisecond // a stall
					}
				}
				chunks = append(chunks, client.Chunk{At: at, Tokens: k})
				tokens += int(k)
			}
			rec.Chunks = chunks
			rec.FirstToken, rec.FirstContent = chunks[0].At, chunks[0].At
			rec.OutputTokens, rec.FinishReason, rec.Status = tokens, "length", 200
			rec.End = at + 300*time.Microsecond
			if i%1999 == 7 { // a stream cut short
				rec.ErrorClass, rec.Error, rec.FinishReason = client.ErrStreamBroken, "stream ended before finish_reason", ""
			}
		}
		b, err := json.Marshal(&rec)
		if err != nil {
			return nil, err
		}
		bw.Write(b)
		bw.WriteByte('\n')
		p := &phases[ph]
		if p.Name == "" {
			p.Name, p.Start = cfg.Phases[ph], intended
		}
		p.End = max(p.End, rec.End)
	}
	return phases, bw.Flush()
}
