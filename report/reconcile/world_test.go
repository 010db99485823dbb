package reconcile

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape"
	"github.com/llmbench-org/llmbench/scrape/trace"
)

// world is a run built to be consistent: the engine's timeline of every
// request, the client's records derived from it, and the /metrics scrapes
// derived from the same timeline. Tests plant one problem at a time by
// changing a knob or editing the Input it builds.
type world struct {
	dialect        string
	users, perUser int
	prompt, cached int
	chunks         int   // content chunks per request
	tokensPerChunk int32 // tokens each chunk carries
	// stepPerToken: the engine (not counting tokens in its ITL histogram)
	// still times every decode step of one token, while its stream groups
	// them tokensPerChunk a chunk (vLLM's --stream-interval).
	stepPerToken   bool
	pre            time.Duration
	queue, prefill time.Duration
	step           time.Duration // engine: between chunks
	net            time.Duration // one way, client ↔ engine
	wait           time.Duration // hidden client-side wait before the request leaves (a capped transport)
	readLag        time.Duration // per-chunk delay accumulating at the client (a slow reader)
	think          time.Duration
	scrapeEvery    time.Duration
	foreign        int     // requests of another client, spread over the run
	promptSkew     int     // prompt tokens the engine counts per request beyond its usage
	preemptions    float64 // preemptions counted over the run
	kvPeak         float64 // KV usage with every user's request running
	logCadence     time.Duration
	computedOnly   bool // the engine counts only computed prompt tokens (prefix-cache hits excluded)
	origin         time.Time

	reqs    []engineReq
	records []client.Record
}

type engineReq struct {
	id                                 string
	arrival, queued, first, finish     time.Duration
	chunkAt                            []time.Duration
	prompt, output, tokensPerChunk     int
	queue, prefill                     time.Duration
	foreign                            bool
	clientSent, clientFirst, clientEnd time.Duration
}

const target = "http://engine/metrics"

// newWorld is a clean run: 4 closed-loop users, 25 requests each, 16 chunks
// of one token every 5 ms after a 2 ms queue and a 10 ms prefill, 0.3 ms of
// network each way, scraped every 100 ms.
func newWorld(dialect string) *world {
	return &world{
		dialect: dialect, users: 4, perUser: 25, prompt: 100, chunks: 16, tokensPerChunk: 1,
		pre: 500 * time.Microsecond, queue: 2 * time.Millisecond, prefill: 10 * time.Millisecond,
		step: 5 * time.Millisecond, net: 300 * time.Microsecond, think: time.Millisecond,
		scrapeEvery: 100 * time.Millisecond, kvPeak: 0.3,
		origin: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
}

func (w *world) build() {
	w.reqs, w.records = nil, nil
	mk := func(id string, sent time.Duration, foreign bool) engineReq {
		r := engineReq{id: id, prompt: w.prompt, output: w.chunks * int(w.tokensPerChunk), tokensPerChunk: int(w.tokensPerChunk),
			queue: w.queue, prefill: w.prefill, foreign: foreign, clientSent: sent}
		r.arrival = sent + w.wait + w.net
		r.queued = r.arrival + w.pre
		r.first = r.queued + w.queue + w.prefill
		for i := range w.chunks {
			r.chunkAt = append(r.chunkAt, r.first+time.Duration(i)*w.step)
		}
		r.finish = r.chunkAt[len(r.chunkAt)-1]
		r.clientFirst = r.first + w.net
		r.clientEnd = r.finish + w.net + time.Duration(w.chunks-1)*w.readLag + 200*time.Microsecond
		return r
	}
	var end time.Duration
	for u := range w.users {
		t := 10*time.Millisecond + time.Duration(u)*time.Millisecond
		for k := range w.perUser {
			r := mk(fmt.Sprintf("u%d-%d", u, k), t, false)
			w.reqs = append(w.reqs, r)
			rec := client.Record{
				ID: r.id, Index: len(w.records), Phase: "main", Sent: r.clientSent, FirstByte: r.clientFirst - time.Millisecond/2,
				FirstToken: r.clientFirst, End: r.clientEnd, PromptTokens: w.prompt, OutputTokens: r.output,
				CachedTokens: w.cached, TokenSource: client.TokensFromUsage, FinishReason: "length", Status: 200,
			}
			if w.dialect == "fastdeploy" || w.dialect == "vllm" {
				rec.ServerID = "chatcmpl-" + r.id
			} else {
				rec.ServerID = r.id
			}
			for i, at := range r.chunkAt {
				rec.Chunks = append(rec.Chunks, client.Chunk{At: at + w.net + time.Duration(i)*w.readLag, Tokens: w.tokensPerChunk})
			}
			w.records = append(w.records, rec)
			t = r.clientEnd + w.think
			end = max(end, r.clientEnd)
		}
	}
	for i := range w.foreign {
		// Spread over the run, each finishing before the last of ours.
		sent := 10*time.Millisecond + time.Duration(i)*(end-300*time.Millisecond)/time.Duration(w.foreign)
		w.reqs = append(w.reqs, mk(fmt.Sprintf("other-%d", i), sent, true))
	}
}

// bounds are the engines' default bucket lists (engine-metrics.md).
var (
	sglangTTFT = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400}
	sglangITL  = []float64{0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060, 0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1.0, 2.0, 4.0, 6.0, 8.0}
	sglangE2E  = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400}
	sglangQ    = []float64{0.0, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60}
	vllmREQ    = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	vllmTTFT   = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	vllmITL    = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	fdTTFT     = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0}
	fdTPOT     = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0}
)

// snapshotAt is the engine's /metrics at t: counters and histograms of the
// requests finished by then, gauges of those in it.
func (w *world) snapshotAt(t time.Duration) scrape.Snapshot {
	s := scrape.Snapshot{Dialect: w.dialect, Gauges: map[scrape.Concept]float64{}, Counters: map[scrape.Concept]float64{}, Histograms: map[scrape.Concept]scrape.Histogram{}}
	var ttft, itl, e2e, queue, prefill, tpot []float64
	var fin, received, prompt, gen, prefillMs, decodeMs float64
	// SGLang counts a request's tokens when it finishes; vLLM its prompt at
	// the first token and its output per step (FastDeploy likewise here);
	// llama.cpp its prompt and prefill time at the first token, its output
	// and generation time at finish, each time in whole milliseconds.
	asWorking := w.dialect != "sglang" && w.dialect != "llamacpp"
	llama := w.dialect == "llamacpp"
	wholeMs := func(d time.Duration) float64 { return float64(d / time.Millisecond) }
	for _, r := range w.reqs {
		if r.arrival <= t {
			received++
		}
		p := r.prompt + w.promptSkew
		if w.computedOnly {
			p -= w.cached
		}
		if llama && r.first <= t {
			prompt += float64(p)
			prefillMs += wholeMs(r.prefill)
		}
		if llama && r.finish <= t {
			decodeMs += wholeMs(r.finish - r.first)
		}
		if asWorking && r.finish > t {
			if r.first <= t {
				prompt += float64(p)
			}
			for _, at := range r.chunkAt {
				if at <= t {
					gen += float64(r.tokensPerChunk)
				}
			}
		}
		if r.finish > t {
			continue
		}
		fin++
		if !llama {
			prompt += float64(p)
		}
		gen += float64(r.output)
		ttft = append(ttft, (r.first - r.arrival).Seconds())
		e2e = append(e2e, (r.finish - r.arrival).Seconds())
		queue = append(queue, r.queue.Seconds())
		prefill = append(prefill, r.prefill.Seconds())
		for i := 1; i < len(r.chunkAt); i++ {
			gap := (r.chunkAt[i] - r.chunkAt[i-1]).Seconds()
			if w.dialect == "sglang" || w.stepPerToken { // per token: k samples of gap/k
				for range r.tokensPerChunk {
					itl = append(itl, gap/float64(r.tokensPerChunk))
				}
			} else {
				itl = append(itl, gap)
			}
		}
		if r.output > 1 {
			tpot = append(tpot, (r.finish-r.first).Seconds()/float64(r.output-1))
		}
	}
	s.Counters[scrape.RequestsFinished] = fin
	s.Counters[scrape.PromptTokens] = prompt
	s.Counters[scrape.GenerationTokens] = gen
	if w.preemptions > 0 {
		s.Counters[scrape.Preemptions] = w.preemptions * fin / float64(len(w.reqs))
	} else {
		s.Counters[scrape.Preemptions] = 0
	}
	switch w.dialect {
	case "sglang":
		s.Histograms[scrape.TTFT] = scrape.Bin(sglangTTFT, ttft)
		s.Histograms[scrape.ITL] = scrape.Bin(sglangITL, itl)
		s.Histograms[scrape.E2E] = scrape.Bin(sglangE2E, e2e)
		s.Histograms[scrape.Queue] = scrape.Bin(sglangQ, queue)
	case "vllm":
		s.Histograms[scrape.TTFT] = scrape.Bin(vllmTTFT, ttft)
		s.Histograms[scrape.ITL] = scrape.Bin(vllmITL, itl)
		s.Histograms[scrape.TPOT] = scrape.Bin(vllmITL, tpot)
		s.Histograms[scrape.E2E] = scrape.Bin(vllmREQ, e2e)
		s.Histograms[scrape.Queue] = scrape.Bin(vllmREQ, queue)
		s.Histograms[scrape.Prefill] = scrape.Bin(vllmREQ, prefill)
	case "llamacpp": // no histograms, no request counters
		delete(s.Counters, scrape.RequestsFinished)
		delete(s.Counters, scrape.Preemptions)
		s.Counters[scrape.PrefillSeconds] = prefillMs / 1000
		s.Counters[scrape.DecodeSeconds] = decodeMs / 1000
	case "fastdeploy":
		s.Counters[scrape.RequestsReceived] = received
		s.Histograms[scrape.TTFT] = scrape.Bin(fdTTFT, ttft)
		s.Histograms[scrape.ITL] = scrape.Bin(fdTPOT, itl)
		s.Histograms[scrape.E2E] = scrape.Bin(vllmREQ, e2e)
		s.Histograms[scrape.Queue] = scrape.Bin(vllmREQ, queue)
		s.Histograms[scrape.Prefill] = scrape.Bin(vllmREQ, prefill)
	}
	running := w.running(t)
	if w.logCadence > 0 {
		// Logged gauges: written only at log points, and only while the
		// engine runs, so they hold their last non-zero value when idle;
		// gen_throughput is the tokens since the previous log over the gap.
		running = 0
		for lt := t - t%w.logCadence; lt >= 0; lt -= w.logCadence {
			if v := w.running(lt); v > 0 {
				running = v
				// (plus a hair per log: a real engine's gap is never
				// exactly the same twice, so every log writes a new value)
				s.Gauges[scrape.GenThroughput] = w.tokensIn(lt-w.logCadence, lt)/w.logCadence.Seconds() + float64(lt/w.logCadence)*1e-6
				break
			}
		}
	}
	s.Gauges[scrape.RequestsRunning] = running
	s.Gauges[scrape.RequestsWaiting] = 0
	s.Gauges[scrape.KVCacheUsage] = w.kvPeak * running / float64(max(1, w.users))
	return s
}

// tokensIn counts the tokens the engine made in (from, to].
func (w *world) tokensIn(from, to time.Duration) float64 {
	n := 0.0
	for _, r := range w.reqs {
		for _, at := range r.chunkAt {
			if at > from && at <= to {
				n += float64(r.tokensPerChunk)
			}
		}
	}
	return n
}

func (w *world) running(t time.Duration) float64 {
	n := 0.0
	for _, r := range w.reqs {
		if r.arrival <= t && t < r.finish {
			n++
		}
	}
	return n
}

func (w *world) row(t time.Duration) scrape.Row {
	s := w.snapshotAt(t)
	return scrape.Row{Target: target, Wall: w.origin.Add(t), At: t, Duration: 2 * time.Millisecond, OK: true, Snapshot: &s, Status: 200, Format: scrape.FormatText}
}

// input builds the run's Input: periodic scrapes from 0 to a second past
// the last request, the window's snapshots just before the first request
// and just after the last one.
func (w *world) input() Input {
	if w.records == nil {
		w.build()
	}
	first, last := w.records[0].Sent, time.Duration(0)
	for _, r := range w.records {
		first, last = min(first, r.Sent), max(last, r.End)
	}
	var rows []scrape.Row
	for t := time.Duration(0); t <= last+time.Second; t += w.scrapeEvery {
		rows = append(rows, w.row(t))
	}
	before, after := w.row(first-3*time.Millisecond), w.row(last+5*time.Millisecond)
	rows = append(rows, before, after)
	slices.SortStableFunc(rows, func(a, b scrape.Row) int { return compareDur(a.At, b.At) })
	return Input{
		Records: slices.Clone(w.records),
		Windows: []Window{{Name: "main", Measured: true, Start: first, End: last, Before: &before, After: &after}},
		Rows:    rows,
		Dialect: w.dialect,
		Origin:  w.origin,
	}
}

// traces are the engine's trace events of every request, FastDeploy style
// (internal id with "_0", millisecond stamps), shifted by skew.
func (w *world) traces(skew time.Duration) []trace.Event {
	var out []trace.Event
	ev := func(id, name string, at time.Duration) {
		wall := time.UnixMilli(w.origin.Add(at + skew).UnixMilli())
		out = append(out, trace.Event{RequestID: "chatcmpl-" + id, RawID: "chatcmpl-" + id + "_0", Event: name, Wall: wall})
	}
	for _, r := range w.reqs {
		ev(r.id, "PREPROCESSING_START", r.arrival)
		ev(r.id, "PREPROCESSING_END", r.queued)
		ev(r.id, "REQUEST_QUEUE_START", r.queued)
		ev(r.id, "REQUEST_QUEUE_END", r.queued+r.queue)
		ev(r.id, "INFERENCE_START", r.queued+r.queue)
		ev(r.id, "FIRST_TOKEN_GENERATED", r.first)
		ev(r.id, "DECODE_START", r.first)
		ev(r.id, "INFERENCE_END", r.finish)
		ev(r.id, "POSTPROCESSING_START", r.finish)
		ev(r.id, "POSTPROCESSING_END", r.finish+100*time.Microsecond)
	}
	return out
}

// find returns the findings with id.
func find(fs []Finding, id string) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.ID == id {
			out = append(out, f)
		}
	}
	return out
}

// only returns the one finding with id, failing the test otherwise.
func only(t *testing.T, fs []Finding, id string) Finding {
	t.Helper()
	got := find(fs, id)
	if len(got) != 1 {
		t.Fatalf("%d findings %q, want 1; all:\n%s", len(got), id, dump(fs))
	}
	return got[0]
}

func dump(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  %-22s %-4s %s %v\n", f.ID, f.Severity, f.Verdict, f.Evidence)
	}
	return b.String()
}
