package sim

import (
	"sync"
	"time"

	"github.com/llmbench-org/llmbench/engine/sim/batch"
)

// stream is one request in flight, shared by its handler goroutine and the
// loop. The loop owns seq and the loop-side fields until it delivers the
// final outcome; the handler reads them only after seeing it (the mutex
// orders the two).
type stream struct {
	seq       batch.Seq
	id        string // the id the client sent (or a generated one)
	chunkID   string // the id in the chunks
	wordBase  uint64 // picks the generated words
	arrival   time.Duration
	maxParam  int // the max_tokens the client asked for (0 = none)
	streaming bool
	ans       answer // how the generated tokens are rendered
	// pooling: one input of an embeddings or rerank request (pooling.go):
	// prefill only, nothing generated.
	pooling bool
	// sampling is the request's temperature and top_p, for its trace span
	// (otlp.go).
	sampling spanSampling

	// Loop-owned until final.
	queueEnter, queueLeave   time.Duration
	prefillStart, prefillEnd time.Duration
	firstDelivery            time.Duration // the "tokenizer manager" saw the first token
	lastDelivery             time.Duration
	delivered                int

	mu      sync.Mutex
	pending []int32 // token counts of passes not yet written, one chunk each
	final   string  // finish reason once the loop is done with the request
	notify  chan struct{}
}

func newStream() *stream { return &stream{notify: make(chan struct{}, 1)} }

// deliver hands n new tokens (n may be 0) and, when final is set, the end of
// the request to the handler. Called by the loop only.
func (s *stream) deliver(n int, final string) {
	s.mu.Lock()
	if n > 0 {
		s.pending = append(s.pending, int32(n))
	}
	if final != "" {
		s.final = final
	}
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// take swaps out the pending deliveries, reusing spare as the new buffer.
func (s *stream) take(spare []int32) (pending []int32, final string) {
	s.mu.Lock()
	pending, s.pending = s.pending, spare[:0]
	final = s.final
	s.mu.Unlock()
	return pending, final
}

type inboxKind uint8

const (
	opAdd inboxKind = iota
	opAbort
)

type inboxOp struct {
	kind inboxKind
	s    *stream
}

// post queues an operation for the loop and wakes it if idle.
func (e *Engine) post(kind inboxKind, s *stream) {
	e.inMu.Lock()
	e.inbox = append(e.inbox, inboxOp{kind, s})
	e.inMu.Unlock()
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

func (e *Engine) takeInbox(spare []inboxOp) []inboxOp {
	e.inMu.Lock()
	ops := e.inbox
	e.inbox = spare[:0]
	e.inMu.Unlock()
	return ops
}
