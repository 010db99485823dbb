package sim

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/llmbench-org/llmbench/engine/sim/batch"
)

// llamacppMetrics speaks llama.cpp's server (--metrics) as the build of
// llama-cpp-python 0.3.36's vendored sources writes it (decision 2200):
// fifteen unlabelled series written by hand, ten counters then five gauges,
// no histograms and no finished-request counter. As that server does:
//   - prompt_tokens_total counts the prompt tokens processed, not those the
//     slot's cache held, and prompt_tokens_cached_total those it held, when
//     the prompt is done (its first token; the real server adds the cached
//     ones as the slot starts the prompt, one pass earlier);
//   - prompt_seconds_total and tokens_predicted_seconds_total add time in
//     whole microseconds (truncated): prompt time from the start of a
//     request's prefill to its first token, generation time from its first
//     token to its last (at least 1 µs), at its end (aborted requests add
//     nothing);
//   - the speculative-decoding counters stay 0 (the dialect drafts nothing);
//   - n_decode_total counts forward passes, n_busy_slots_per_decode is the
//     mean number of busy slots (running requests) per pass, n_tokens_max the
//     largest context a request reached (prompt + output − 1);
//   - prompt_tokens_seconds and predicted_tokens_seconds are rates over what
//     was counted since the previous /metrics read, which empties them: the
//     prompt tokens processed per second of prompt time, and the generation
//     steps (each request's tokens but its first, which the prompt's last
//     pass gives) per second of generation time; 0 with nothing counted;
//   - requests_processing and requests_deferred are what the server holds
//     when /metrics is asked: the HTTP thread posts a metrics task to the
//     main loop, which answers it after the pass under way and after the
//     tasks posted before it, counting the busy slots and the tasks
//     deferred for want of one. So a request counts from its arrival (one
//     that arrived during a pass has a slot, or is deferred, by the time
//     the answer is written), and stops counting when it ends or is
//     cancelled (a client gone: its slot is released, or its task taken out
//     of the deferred queue), even if no pass follows;
//   - every value is printed as a C++ ostream prints a double: six
//     significant digits, so a counter past 999,999 loses its low digits
//     (1234567 prints 1.23457e+06).
//
// Served as text/plain; version=0.0.4 with a Process-Start-Time-Unix header.
type llamacppMetrics struct {
	start time.Time
	// slots is the server's -np: how many requests are processed at once.
	slots int
	// arrived counts the requests posted to the loop and not yet taken by
	// it (nil: none are counted).
	arrived func() int

	mu                              sync.Mutex
	promptTokens, promptUS, cachedN uint64
	predictedN, predictedUS         uint64
	nDecode, nBusy, tokenMax        uint64
	window                          rateWindow
	processing, deferred            int
	// held counts the requests the engine holds (taken, not yet finished
	// or aborted), so that cancelling the last of them reads 0 and 0 as
	// the real server does, with no pass to reset the gauges.
	held int
}

// rateWindow is what the throughput gauges divide: the prompt tokens and
// generation steps counted since the last /metrics read, and their times.
type rateWindow struct{ promptN, promptUS, predictedSteps, predictedUS uint64 }

func newLlamaCppMetrics(start time.Time, slots int, arrived func() int) *llamacppMetrics {
	return &llamacppMetrics{start: start, slots: slots, arrived: arrived}
}

// arrivalsPending is how many requests wait in the inbox for the loop to
// take them: the built-in engine's loop takes them between two passes, as
// llama.cpp's takes its tasks.
func (e *Engine) arrivalsPending() int {
	e.inMu.Lock()
	defer e.inMu.Unlock()
	n := 0
	for _, op := range e.inbox {
		if op.kind == opAdd {
			n++
		}
	}
	return n
}

// gauges is requests_processing and requests_deferred as the real server
// answers a scrape: with the requests that arrived during the pass under
// way given a free slot, or deferred.
func (m *llamacppMetrics) gauges() (processing, deferred int) {
	arrived := 0
	if m.arrived != nil {
		arrived = m.arrived() // before m.mu: the loop takes the inbox's lock, then m.mu, never both
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	take := min(arrived, max(m.slots-m.processing, 0))
	return m.processing + take, m.deferred + arrived - take
}

// cppDouble formats v as std::ostream << double does by default (%g, precision 6).
func cppDouble(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case math.IsNaN(v):
		return "nan"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

func (m *llamacppMetrics) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		processing, deferred := m.gauges()
		m.mu.Lock()
		rate := func(n, us uint64) float64 {
			if us == 0 {
				return 0
			}
			return float64(n) / float64(us) * 1e6
		}
		win := m.window
		m.window = rateWindow{} // each read empties the window
		items := []struct {
			name, typ, help string
			v               float64
		}{
			{"prompt_tokens_total", "counter", "Number of prompt tokens processed, excluding cached tokens", float64(m.promptTokens)},
			{"prompt_tokens_cached_total", "counter", "Number of prompt tokens reused from the cache", float64(m.cachedN)},
			{"prompt_seconds_total", "counter", "Total time spent processing prompts", float64(m.promptUS) / 1e6},
			{"tokens_predicted_total", "counter", "Number of generation tokens processed", float64(m.predictedN)},
			{"tokens_predicted_seconds_total", "counter", "Total time spent generating tokens", float64(m.predictedUS) / 1e6},
			{"n_decode_total", "counter", "Total number of llama_decode() calls, excluding speculative decoding and multimodal decoding", float64(m.nDecode)},
			{"n_tokens_max", "counter", "Largest observed sequence length (prompt + generation)", float64(m.tokenMax)},
			{"spec_decode_num_draft_tokens_total", "counter", "Speculative: Total draft tokens generated", 0},
			{"spec_decode_num_accepted_tokens_total", "counter", "Speculative: Total draft tokens accepted by the target model", 0},
			{"spec_decode_num_drafts_total", "counter", "Speculative: Total speculative decoding verification steps", 0},
			{"prompt_tokens_seconds", "gauge", "Average prompt throughput in tokens/s", rate(win.promptN, win.promptUS)},
			{"predicted_tokens_seconds", "gauge", "Average generation throughput in tokens/s", rate(win.predictedSteps, win.predictedUS)},
			{"requests_processing", "gauge", "Number of requests processing", float64(processing)},
			{"requests_deferred", "gauge", "Number of requests deferred", float64(deferred)},
			{"n_busy_slots_per_decode", "gauge", "Average number of busy slots per llama_decode() call", float64(m.nBusy) / float64(max(m.nDecode, 1))},
		}
		m.mu.Unlock()
		var b []byte
		for _, it := range items {
			b = append(b, "# HELP llamacpp:"+it.name+" "+it.help+"\n# TYPE llamacpp:"+it.name+" "+it.typ+"\nllamacpp:"+it.name+" "+cppDouble(it.v)+"\n"...)
		}
		w.Header().Set("Process-Start-Time-Unix", strconv.FormatInt(m.start.Unix(), 10))
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write(b)
	})
}

func (m *llamacppMetrics) received(*stream) {
	m.mu.Lock()
	m.held++
	m.deferred++ // until a pass gives it a slot
	m.mu.Unlock()
}

func (m *llamacppMetrics) queued(*stream, time.Duration) {}

func (m *llamacppMetrics) scheduled(_ *batch.Batch, sch *batch.Scheduler, _ time.Duration) {
	m.mu.Lock()
	m.nDecode++
	m.nBusy += uint64(sch.Running())
	m.processing, m.deferred = sch.Running(), sch.Waiting()
	m.mu.Unlock()
}

func (m *llamacppMetrics) passed(b *batch.Batch, sch *batch.Scheduler, _ time.Duration, _ int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.processing, m.deferred = sch.Running(), sch.Waiting()
	for _, q := range b.Seqs {
		if q.Output > 0 {
			m.tokenMax = max(m.tokenMax, uint64(q.PromptLen+q.Output-1))
		}
	}
}

// wholeUS is a duration in whole microseconds, truncated.
func wholeUS(d time.Duration) uint64 { return uint64(max(d, 0) / time.Microsecond) }

func (m *llamacppMetrics) delivered(s *stream, _ int, at time.Duration) {
	if s.delivered > 0 {
		return
	}
	n, us := uint64(s.seq.PromptLen-s.seq.CachedTokens), wholeUS(at-s.prefillStart)
	m.mu.Lock()
	m.promptTokens += n
	m.cachedN += uint64(s.seq.CachedTokens)
	m.promptUS += us
	m.window.promptN += n
	m.window.promptUS += us
	m.mu.Unlock()
}

func (m *llamacppMetrics) finished(s *stream, _ time.Duration) {
	m.mu.Lock()
	m.held-- // the pass that finished it has counted the slot free
	m.predictedN += uint64(s.seq.Output)
	if s.delivered > 0 {
		us := max(wholeUS(s.lastDelivery-s.firstDelivery), 1)
		m.predictedUS += us
		m.window.predictedUS += us
		m.window.predictedSteps += uint64(max(s.seq.Output-1, 0))
	}
	m.mu.Unlock()
}

// aborted releases the request's slot, or takes it out of the deferred
// queue; it adds no time (llama.cpp adds a request's generation time only
// when it finishes). A request that had a slot may since have been
// preempted back to the queue (the built-in engine can run out of KV cache;
// llama.cpp cannot): the next pass corrects the split, and the total is
// exact at once.
func (m *llamacppMetrics) aborted(s *stream, _ time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.held = max(m.held-1, 0)
	if s.queueLeave != 0 {
		m.processing = max(m.processing-1, 0)
	} else {
		m.deferred = max(m.deferred-1, 0)
	}
	if over := m.processing + m.deferred - m.held; over > 0 {
		cut := min(over, m.deferred)
		m.deferred -= cut
		m.processing -= over - cut
	}
}
