package sim

import (
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/llmbench-org/llmbench/engine/sim/batch"
)

// WireFaults are framings of a response that real servers, gateways and
// proxies send and a client must read as the same stream. The zero value
// frames as the engine's dialect does. Each applies to every response of
// the generation endpoints (the framings of an event stream to streamed
// responses only), and is listed in the request's RequestTruth.Faults as
// "wire_<name>"; none changes what the truth records (the flush times are
// taken after the last fragment of a chunk is flushed, the tokens are the
// same). docs/decisions/0209–0211 say what the client makes of each.
type WireFaults struct {
	// LineEnding ends every SSE line with "lf" (the default), "crlf", "cr",
	// or "mixed" (each line one of the three, drawn; never a CR followed
	// by a blank line ended by LF, which would read as one CRLF).
	LineEnding string `yaml:"line_ending"`
	// BOM starts the event stream with a UTF-8 byte order mark.
	BOM bool `yaml:"bom"`
	// MultilineData spreads each JSON payload over several data lines, cut
	// after every comma between tokens (the lines are joined with "\n",
	// which JSON allows there); the lines after the first have no space
	// after "data:".
	MultilineData bool `yaml:"multiline_data"`
	// ExtraFields puts before every event a blank line, a comment, and
	// `event: message`, `id: N`, `retry: 3000` and an unknown field.
	ExtraFields bool `yaml:"extra_fields"`
	// ContentEncoding compresses every response with "gzip", "deflate"
	// (zlib), "deflate-raw" (raw deflate, sent as Content-Encoding:
	// deflate, as some servers do) or "br", flushed with every flush of
	// the engine, although the client asked for identity.
	ContentEncoding string `yaml:"content_encoding"`
	// LingerAfterDone keeps a streamed response open this long after its
	// last event before ending it (or until the client goes away).
	LingerAfterDone time.Duration `yaml:"linger_after_done"`
	// SplitWrites cuts every write into fragments of 1 to SplitWrites
	// bytes (drawn), each written and flushed on its own, so that lines,
	// line ends and compressed blocks fall across reads (0: whole writes).
	SplitWrites int `yaml:"split_writes"`
}

// The values WireFaults accepts.
const (
	LineLF    = "lf"
	LineCRLF  = "crlf"
	LineCR    = "cr"
	LineMixed = "mixed"

	CodingGzip       = "gzip"
	CodingDeflate    = "deflate"
	CodingDeflateRaw = "deflate-raw"
	CodingBrotli     = "br"
)

// maxLinger and maxSplit bound what WireFaults accepts.
const (
	maxLinger = 10 * time.Minute
	maxSplit  = 1 << 20
)

func (w WireFaults) validate() error {
	var errs []error
	switch w.LineEnding {
	case "", LineLF, LineCRLF, LineCR, LineMixed:
	default:
		errs = append(errs, fmt.Errorf("faults.wire.line_ending %q: want lf, crlf, cr or mixed", w.LineEnding))
	}
	switch w.ContentEncoding {
	case "", CodingGzip, CodingDeflate, CodingDeflateRaw, CodingBrotli:
	default:
		errs = append(errs, fmt.Errorf("faults.wire.content_encoding %q: want gzip, deflate, deflate-raw or br", w.ContentEncoding))
	}
	if w.LingerAfterDone < 0 || w.LingerAfterDone > maxLinger {
		errs = append(errs, fmt.Errorf("faults.wire.linger_after_done must be in [0, %v], got %v", maxLinger, w.LingerAfterDone))
	}
	if w.SplitWrites < 0 || w.SplitWrites > maxSplit {
		errs = append(errs, fmt.Errorf("faults.wire.split_writes must be in [0, %d] bytes, got %d", maxSplit, w.SplitWrites))
	}
	return errors.Join(errs...)
}

// framesSSE reports whether w changes an event stream's lines.
func (w *WireFaults) framesSSE() bool {
	return w.LineEnding != "" && w.LineEnding != LineLF || w.BOM || w.MultilineData || w.ExtraFields
}

// names lists the wire faults applied to a response, as RequestTruth.Faults
// says them.
func (w *WireFaults) names(sse bool) []string {
	var out []string
	add := func(on bool, name string) {
		if on {
			out = append(out, "wire_"+name)
		}
	}
	add(sse && w.LineEnding != "" && w.LineEnding != LineLF, w.LineEnding)
	add(sse && w.BOM, "bom")
	add(sse && w.MultilineData, "multiline_data")
	add(sse && w.ExtraFields, "extra_fields")
	add(w.ContentEncoding != "", w.ContentEncoding)
	add(sse && w.LingerAfterDone > 0, "linger")
	add(w.SplitWrites > 0, "split_writes")
	return out
}

// wireFrame puts the wire faults between a generation handler and w; the
// handler defers finish. With none it returns w itself and a nil writer.
func (e *Engine) wireFrame(w http.ResponseWriter, r *http.Request, t *RequestTruth) (http.ResponseWriter, *wireWriter) {
	f := &e.cfg.Faults.Wire
	if *f == (WireFaults{}) {
		return w, nil
	}
	seed := e.cfg.Faults.Seed
	if seed == 0 {
		seed = e.cfg.Params.Seed
	}
	ww := &wireWriter{w: w, rc: http.NewResponseController(w), r: r, f: f, t: t, eventStart: true,
		rng: uint64(seed) ^ batch.HashString("wire\x00"+r.Header.Get("X-Request-Id"))}
	return ww, ww
}

// flushWriter is a compressor: each has Flush, which ends a block so that
// everything written so far can be decoded.
type flushWriter interface {
	io.WriteCloser
	Flush() error
}

// wireWriter is the response writer of a request under wire faults: the
// handler's bytes are reframed line by line (event streams), compressed,
// then cut into fragments, in that order, as a server, a compressing proxy
// and the network would.
type wireWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	r       *http.Request
	f       *WireFaults
	t       *RequestTruth
	rng     uint64
	started bool // the header was written
	sse     bool // the response is an event stream: its lines are reframed
	z       flushWriter

	line       []byte // a line not yet ended, carried to the next write
	out        []byte // reframed bytes
	eventStart bool   // the next line starts an event
	lastCR     bool   // the last line end written was a lone CR
	events     int
}

func (ww *wireWriter) Header() http.Header { return ww.w.Header() }

func (ww *wireWriter) WriteHeader(status int) {
	if ww.started {
		return
	}
	ww.started = true
	f, h := ww.f, ww.w.Header()
	ww.sse = strings.HasPrefix(h.Get("Content-Type"), "text/event-stream")
	ww.t.Faults = append(ww.t.Faults, f.names(ww.sse)...)
	if f.ContentEncoding != "" {
		h.Del("Content-Length")
		name := f.ContentEncoding
		if name == CodingDeflateRaw {
			name = CodingDeflate
		}
		h.Set("Content-Encoding", name)
		ww.z = newCompressor(f.ContentEncoding, splitter{ww})
	}
	ww.w.WriteHeader(status)
	if ww.sse && f.BOM {
		_, _ = ww.sink().Write([]byte("\xef\xbb\xbf"))
	}
}

func newCompressor(coding string, w io.Writer) flushWriter {
	switch coding {
	case CodingGzip:
		return gzip.NewWriter(w)
	case CodingDeflate:
		return zlib.NewWriter(w)
	case CodingDeflateRaw:
		z, _ := flate.NewWriter(w, flate.DefaultCompression) // the level is valid
		return z
	default:
		return brotli.NewWriter(w)
	}
}

// sink is where reframed bytes go: the compressor, or the fragments.
func (ww *wireWriter) sink() io.Writer {
	if ww.z != nil {
		return ww.z
	}
	return splitter{ww}
}

func (ww *wireWriter) Write(p []byte) (int, error) {
	if !ww.started {
		ww.WriteHeader(http.StatusOK)
	}
	if !ww.sse || !ww.f.framesSSE() {
		return ww.sink().Write(p)
	}
	n := len(p)
	ww.out = ww.out[:0]
	for len(p) > 0 {
		i := slices.Index(p, '\n')
		if i < 0 {
			ww.line = append(ww.line, p...)
			break
		}
		ww.line = append(ww.line, p[:i]...)
		ww.frame(ww.line)
		ww.line = ww.line[:0]
		p = p[i+1:]
	}
	if _, err := ww.sink().Write(ww.out); err != nil {
		return 0, err
	}
	return n, nil
}

// FlushError flushes the compressor's block and the connection (through
// http.ResponseController, as the handlers flush).
func (ww *wireWriter) FlushError() error {
	if !ww.started {
		ww.WriteHeader(http.StatusOK)
	}
	if ww.z != nil {
		if err := ww.z.Flush(); err != nil {
			return err
		}
	}
	return ww.rc.Flush()
}

func (ww *wireWriter) Flush() { _ = ww.FlushError() }

// finish ends the response (deferred by the handler): after the linger,
// the compressed stream's end. A handler that panicked (a cut connection)
// is let go as it is: no end is written.
func (ww *wireWriter) finish() {
	if ww == nil {
		return
	}
	if p := recover(); p != nil {
		panic(p)
	}
	if !ww.started {
		return
	}
	if ww.sse && ww.f.LingerAfterDone > 0 {
		sleepCtx(ww.r, ww.f.LingerAfterDone)
	}
	if ww.z != nil {
		_ = ww.z.Close()
	}
	_ = ww.rc.Flush()
}

// draw is the next of the writer's random numbers.
func (ww *wireWriter) draw() uint64 {
	ww.rng = batch.Mix64(ww.rng + 0x9e3779b97f4a7c15)
	return ww.rng
}

// frame appends one line of the handler's stream (without its "\n"),
// reframed, to ww.out.
func (ww *wireWriter) frame(line []byte) {
	f := ww.f
	if len(line) == 0 {
		ww.end(true)
		ww.eventStart = true
		return
	}
	if ww.eventStart && line[0] != ':' && f.ExtraFields {
		ww.events++
		ww.end(true) // a blank line before the event: it dispatches nothing
		for _, l := range []string{": wire fault", "event: message", fmt.Sprintf("id: %d", ww.events), "retry: 3000", "x-unknown: field"} {
			ww.out = append(ww.out, l...)
			ww.end(false)
		}
	}
	ww.eventStart = false
	payload, isData := strings.CutPrefix(string(line), "data: ")
	if !isData || !f.MultilineData || !strings.HasPrefix(payload, "{") {
		ww.out = append(ww.out, line...)
		ww.end(false)
		return
	}
	for i, piece := range splitJSON(payload) {
		if i == 0 {
			ww.out = append(ww.out, "data: "...)
		} else {
			ww.out = append(ww.out, "data:"...)
		}
		ww.out = append(ww.out, piece...)
		ww.end(false)
	}
}

// end appends a line end; blank says the line it ends is empty.
func (ww *wireWriter) end(blank bool) {
	kind := ww.f.LineEnding
	if kind == LineMixed {
		choices := []string{LineLF, LineCRLF, LineCR}
		if blank && ww.lastCR {
			choices = choices[1:] // an LF right after a CR would join it
		}
		kind = choices[ww.draw()%uint64(len(choices))]
	}
	switch kind {
	case LineCRLF:
		ww.out = append(ww.out, '\r', '\n')
	case LineCR:
		ww.out = append(ww.out, '\r')
	default:
		ww.out = append(ww.out, '\n')
	}
	ww.lastCR = kind == LineCR
}

// splitJSON cuts a JSON text after every comma outside its strings.
func splitJSON(s string) []string {
	var out []string
	start, inString, escaped := 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case c == ',' && !inString:
			out = append(out, s[start:i+1])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// splitter writes to the connection, in fragments when SplitWrites asks,
// each flushed.
type splitter struct{ ww *wireWriter }

func (s splitter) Write(p []byte) (int, error) {
	ww := s.ww
	limit := ww.f.SplitWrites
	if limit <= 0 {
		return ww.w.Write(p)
	}
	written := 0
	for len(p) > 0 {
		n := min(len(p), 1+int(ww.draw()%uint64(limit)))
		m, err := ww.w.Write(p[:n])
		written += m
		if err != nil {
			return written, err
		}
		if err := ww.rc.Flush(); err != nil {
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}
