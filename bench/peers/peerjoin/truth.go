package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/engine/sim"
)

// truthOf is what the engine knows of one request, reduced to the three
// figures every tool reports: each a difference of two engine clock
// readings, so comparable with a client's differences of its own clock.
type truthOf struct {
	id, headerID string
	chunkID      string // the id the engine put in its chunks (chatcmpl-<id>), which GuideLLM keeps
	ttft, e2e    time.Duration
	itl          time.Duration // mean per token after the first: (last flush − first flush) ÷ (tokens − 1)
	hasITL       bool
	chunks       int // streamed chunks that carried tokens (what a client parses per token)
	ok           bool
}

// readTruth reads lines [from, to) of the engine's truth file (to < 0: to
// the end), leaving out requests whose id starts with exclude (the watching
// llmbench run's own). The engine appends one line per finished request,
// so a tool's requests are the lines written between its start and end.
func readTruth(path string, from, to int, exclude string) ([]truthOf, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var out []truthOf
	for line := 0; sc.Scan(); line++ {
		if line < from || (to >= 0 && line >= to) {
			continue
		}
		var tr sim.RequestTruth
		if err := json.Unmarshal(sc.Bytes(), &tr); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, line+1, err)
		}
		if exclude != "" && strings.HasPrefix(tr.ID, exclude) {
			continue
		}
		out = append(out, reduceTruth(tr))
	}
	return out, sc.Err()
}

func reduceTruth(tr sim.RequestTruth) truthOf {
	t := truthOf{id: tr.ID, headerID: tr.HeaderID, chunkID: tr.ChunkID, chunks: len(tr.ChunkTokens), ok: tr.Outcome == sim.OutcomeOK}
	if tr.FirstTokenFlushed > 0 {
		t.ttft = tr.FirstTokenFlushed - tr.Arrival
	}
	t.e2e = tr.Finish - tr.Arrival
	if n := len(tr.TokenFlushes); tr.OutputTokens >= 2 && n >= 2 {
		t.itl = (tr.TokenFlushes[n-1] - tr.TokenFlushes[0]) / time.Duration(tr.OutputTokens-1)
		t.hasITL = true
	}
	return t
}
