package launch

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/llmbench-org/llmbench/redact"
)

// Default bounds of engine.log (docs/decisions/0851): an engine that prints
// without end (a random-weight model's warnings, a debug log) must not fill
// the disk. The head keeps how the engine started (its arguments, the model
// it loaded), the tail how it ended; what lies between is dropped, counted.
const (
	DefaultLogHead = 16 << 20
	DefaultLogTail = 16 << 20
)

// Suffixes of the tail's segment files beside engine.log while the engine
// runs; they are folded into engine.log when it stops (and stay, bounded, if
// llmbench is killed first).
const (
	tailSegment    = ".tail"
	oldTailSegment = ".tail.old"
)

// maxPending is the longest incomplete line held back from the file: a
// progress bar redrawn with \r never ends its line, and a line that never
// ends must not grow without bound.
const maxPending = 64 << 10

// minCarriedOn is how much of a line must follow a carriage return, starting
// with a printing character, before the line is written up to it: a secret
// that a pattern finds only with its context (`password:` CR `value`) is then
// seen whole by the check that the cut changes nothing (cutNeutral).
const minCarriedOn = 256

// logSink is engine.log and the in-memory tail, written by the engine's
// output copy and by llmbench's own notes, one write at a time.
//
// engine.log keeps the first head bytes of what is written, then a rolling
// tail of at most tail bytes, kept in two segment files of tail/2 each (the
// older one dropped, counted, as a new one starts); closing it appends a
// note of what was dropped and then the tail. Every byte is redacted before
// it reaches either part: the bounds cut redacted text.
type logSink struct {
	mu   sync.Mutex
	path string
	file *os.File // nil: no file
	err  error    // the first failed file write; later writes go to the tail only
	tail *tailBuffer
	// pending is the engine's last line while it is incomplete: the file
	// gets whole lines, each redacted (an engine may print its own
	// arguments, an --api-key among them).
	pending []byte
	// skipping: the rest of an over-long line is being withheld; skipped
	// counts it.
	skipping bool
	skipped  int64
	// known are the secrets the engine was given (redact.Secrets of its
	// command line and environment, and the API key), replaced verbatim.
	known []string

	head, tailMax int64
	headN         int64 // bytes in engine.log's head
	headNL        bool  // the head ends a line
	seg           *os.File
	segN, oldN    int64        // bytes in the current and the older tail segment
	dropped       int64        // bytes of redacted output rotated away
	withheld      int64        // bytes never written: the rest of over-long lines, of lines cut by a gap
	behind        atomic.Int64 // of which the engine printed while the queue to the file was full
	queue         int          // bytes the queue to the file holds: pumpQueue
}

func openLogSink(path string, head, tail int64) (*logSink, error) {
	if head <= 0 {
		head = DefaultLogHead
	}
	if tail <= 0 {
		tail = DefaultLogTail
	}
	s := &logSink{path: path, tail: newTailBuffer(tailBytes), head: head, tailMax: tail, headNL: true, queue: pumpQueue}
	if path == "" {
		return s, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("engine log: %w", err)
	}
	s.file = f
	return s, nil
}

// Write never fails: a full disk must not block the engine on its pipe.
func (s *logSink) Write(b []byte) (int, error) {
	s.toFile(b)
	return s.tail.Write(b)
}

// toFile is Write's part for engine.log.
func (s *logSink) toFile(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file != nil && s.err == nil {
		s.take(b)
	}
}

// pumpQueue bounds the queue between the engine's pipe and engine.log
// (bytes): what the engine prints while it is full is dropped, counted,
// rather than left to block the engine (a benchmark must not slow the
// engine it measures because its log is being redacted).
const pumpQueue = 4 << 20

// pump reads the engine's output from r until its end, as fast as the
// engine writes it: the in-memory tail takes every byte at once, and
// engine.log is written by a goroutine of its own through a queue of at
// most s.queue bytes (and the batch it is writing, taken from the queue).
func pump(r io.Reader, s *logSink) {
	var (
		mu      sync.Mutex
		queued  []byte
		gap     int64 // bytes dropped after queued
		gapAt   int   // where in queued the gap falls
		eof     bool
		wake    = make(chan struct{}, 1)
		written = make(chan struct{})
	)
	go func() {
		defer close(written)
		var batch []byte
		for {
			<-wake
			mu.Lock()
			batch, queued = append(batch[:0], queued...), queued[:0]
			g, at, end := gap, gapAt, eof
			gap, gapAt = 0, 0
			mu.Unlock()
			s.toFile(batch[:at])
			if g > 0 {
				s.gap(g)
			}
			s.toFile(batch[at:])
			if end {
				return
			}
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			_, _ = s.tail.Write(buf[:n])
			mu.Lock()
			// Once the queue is full, output is dropped until it is
			// empty again: one gap, and one note of it, per flood.
			if gap == 0 && len(queued)+n <= s.queue {
				queued = append(queued, buf[:n]...)
			} else {
				if gap == 0 {
					gapAt = len(queued)
				}
				gap += int64(n)
				s.behind.Add(int64(n))
			}
			mu.Unlock()
		}
		if err != nil {
			mu.Lock()
			eof = true
			mu.Unlock()
		}
		select {
		case wake <- struct{}{}:
		default:
		}
		if err != nil {
			break
		}
	}
	<-written
}

// gap is output dropped before it reached the file: the line it fell in is
// written up to a cut no secret spans (safeCut) and the rest of it, after
// the gap, is withheld up to its newline, so that no secret is written in
// part.
func (s *logSink) gap(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == nil || s.err != nil {
		return
	}
	if !s.skipping {
		cut := safeCut(s.pending, s.known)
		rest := len(s.pending) - cut
		s.flush(cut)
		s.pending = s.pending[:0]
		s.skipping, s.skipped = true, int64(rest)
	}
	s.skipped += n
}

// take adds the engine's bytes to the line being assembled and writes what
// is complete.
func (s *logSink) take(b []byte) {
	if s.skipping {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			s.skipped += int64(len(b))
			return
		}
		s.skipped += int64(i)
		s.endSkip()
		b = b[i+1:]
	}
	s.pending = append(s.pending, b...)
	if i := bytes.LastIndexByte(s.pending, '\n'); i >= 0 {
		s.flush(i + 1)
	}
	if len(s.pending) > maxPending {
		s.overflow()
	}
}

// overflow handles a line longer than maxPending. A progress bar's line is
// written up to its last carriage return when that cut provably changes no
// redaction; any other line is written up to a cut no secret spans
// (safeCut), and the rest of it is withheld, counted, up to its newline.
func (s *logSink) overflow() {
	if c := carriageCut(s.pending); c > 0 && s.cutNeutral(c) {
		s.flush(c)
		return
	}
	cut := safeCut(s.pending, s.known)
	withheld := len(s.pending) - cut
	s.flush(cut)
	s.pending = s.pending[:0]
	s.skipping, s.skipped = true, int64(withheld)
}

// carriageCut is where a line redrawn with carriage returns may be cut: just
// after the last \r that leaves at least minCarriedOn bytes after it, the
// first a printing character, and at most half of maxPending; 0 for none.
func carriageCut(line []byte) int {
	end := len(line) - minCarriedOn
	for end > 0 {
		i := bytes.LastIndexByte(line[:end], '\r')
		if i < 0 || len(line)-(i+1) > maxPending/2 {
			return 0
		}
		if !isSpace(line[i+1]) {
			return i + 1
		}
		end = i
	}
	return 0
}

// endSkip closes a withheld line with a note of its size.
func (s *logSink) endSkip() {
	s.emit(fmt.Sprintf("…[llmbench: %d bytes withheld up to the end of this line (a line over %d KiB, or output faster than engine.log could take): a line is cut only where no secret can span the cut]\n", s.skipped, maxPending>>10))
	s.withheld += s.skipped
	s.skipping, s.skipped = false, 0
}

// cutNeutral reports whether redacting pending in two parts at cut gives
// what redacting it whole does: no secret, with its context, spans the cut.
func (s *logSink) cutNeutral(cut int) bool {
	whole := redact.Known(string(s.pending), s.known...)
	return whole == redact.Known(string(s.pending[:cut]), s.known...)+redact.Known(string(s.pending[cut:]), s.known...)
}

// safeCut is the longest prefix of line that can be written, redacted, while
// the rest of the line never is: it ends just after a blank, so every
// pattern's secret value (never blank) lies wholly on one side, and no
// known secret's beginning ends it (a known secret may hold blanks). 0 when
// there is none.
func safeCut(line []byte, known []string) int {
	for c := len(line); c > 0; c-- {
		if !isSpace(line[c-1]) || endsWithPrefixOfAny(line[:c], known) {
			continue
		}
		return c
	}
	return 0
}

// endsWithPrefixOfAny: b ends with a proper, non-empty prefix of a known
// secret that redact.Known would replace.
func endsWithPrefixOfAny(b []byte, known []string) bool {
	for _, k := range known {
		if len(k) < 4 { // redact.Known leaves these: not secrets worth a cut
			continue
		}
		for j := 1; j < len(k); j++ {
			if bytes.HasSuffix(b, []byte(k[:j])) {
				return true
			}
		}
	}
	return false
}

func isSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '\v', '\f':
		return true
	}
	return false
}

// flush writes the first n bytes of pending to the file, redacted.
func (s *logSink) flush(n int) {
	if n > 0 {
		s.emit(redact.Known(string(s.pending[:n]), s.known...))
	}
	s.pending = append(s.pending[:0], s.pending[n:]...)
}

// emit writes redacted text: into the head while it has room, then into the
// tail's segments.
func (s *logSink) emit(text string) {
	if s.err != nil || text == "" {
		return
	}
	if room := s.head - s.headN; room > 0 {
		n := min(int64(len(text)), room)
		_, s.err = s.file.WriteString(text[:n])
		s.headN += n
		s.headNL = text[n-1] == '\n'
		text = text[n:]
	}
	segMax := max(s.tailMax/2, 1)
	for text != "" && s.err == nil {
		if s.segN >= segMax {
			s.rotate()
			continue
		}
		if s.seg == nil {
			s.seg, s.err = os.OpenFile(s.path+tailSegment, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
			if s.err != nil {
				return
			}
		}
		n := min(int64(len(text)), segMax-s.segN)
		_, s.err = s.seg.WriteString(text[:n])
		s.segN += n
		text = text[n:]
	}
}

// rotate makes the current segment the older one; the older one's bytes
// are dropped.
func (s *logSink) rotate() {
	if s.seg != nil {
		s.err = s.seg.Close()
		s.seg = nil
	}
	if s.err == nil {
		s.err = os.Rename(s.path+tailSegment, s.path+oldTailSegment)
	}
	s.dropped += s.oldN
	s.oldN, s.segN = s.segN, 0
}

// note writes llmbench's own line to the file only: the tail quoted in errors
// is the engine's.
func (s *logSink) note(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file != nil && s.err == nil {
		s.finishLine()
		s.emit(redact.Known(line, s.known...))
	}
}

// finishLine writes the engine's unfinished line (or closes a withheld one)
// before a note of llmbench's.
func (s *logSink) finishLine() {
	if s.skipping {
		s.endSkip()
	}
	s.flush(len(s.pending))
}

// logLoss is what engine.log did not keep of the engine's output.
type logLoss struct {
	dropped  int64 // redacted output rotated away between the head and the tail
	withheld int64 // never written: over-long lines' rests, lines cut by a gap
	behind   int64 // of withheld, printed while the queue to the file was full
}

// lost is what engine.log has not kept of the engine's output so far.
func (s *logSink) lost() logLoss {
	s.mu.Lock()
	defer s.mu.Unlock()
	return logLoss{dropped: s.dropped, withheld: s.withheld + s.skipped, behind: s.behind.Load()}
}

// close writes what is pending, then, after the head, the note of what was
// dropped and the kept tail, and removes the segment files.
func (s *logSink) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == nil {
		return
	}
	s.finishLine()
	if s.seg != nil {
		_ = s.seg.Close()
		s.seg = nil
	}
	if s.err == nil && s.segN+s.oldN > 0 {
		s.err = s.foldTail()
	}
	_ = s.file.Close()
	s.file = nil
}

// foldTail appends the drop note and the tail's segments to engine.log.
func (s *logSink) foldTail() error {
	if s.dropped > 0 {
		sep := ""
		if !s.headNL {
			sep = "\n"
		}
		if _, err := fmt.Fprintf(s.file, "%sllmbench: engine.log keeps the first %s and the last %s of the engine's output: %s (%d bytes) dropped here\n",
			sep, mib(s.head), mib(s.tailMax), mib(s.dropped), s.dropped); err != nil {
			return err
		}
	}
	for _, seg := range []string{s.path + oldTailSegment, s.path + tailSegment} {
		f, err := os.Open(seg)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return err
		}
		_, err = io.Copy(s.file, f)
		f.Close()
		if err != nil {
			return err
		}
		if err := os.Remove(seg); err != nil {
			return err
		}
	}
	return nil
}

// mib renders a byte count for people: "16 MiB", "1.5 MiB", "300 KiB", "12 bytes".
func mib(n int64) string {
	switch {
	case n >= 1<<20:
		return trimFloat(float64(n)/(1<<20)) + " MiB"
	case n >= 1<<10:
		return trimFloat(float64(n)/(1<<10)) + " KiB"
	}
	return fmt.Sprintf("%d bytes", n)
}

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		s = s[:len(s)-2]
	}
	return s
}
