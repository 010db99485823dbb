package rundir

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/inputfile"
	"github.com/llmbench-org/llmbench/report/chunkdigest"
)

// decodeRecord decodes one line of requests.jsonl: the one place a record
// is decoded, so a faster decoder or a new encoding changes only this.
// client.DecodeRecord answers as encoding/json does (held to it by a
// differential fuzz target) without its pre-scan, and reuses r.Chunks.
func decodeRecord(line []byte, r *client.Record, strs *client.StringArena) error {
	return client.DecodeRecordStrings(line, r, strs)
}

// Requests is requests.jsonl read in one pass: every record with its
// chunks dropped, what each kept of its chunks, and what the chunks add up
// to. Duplicates (a repeated ID and plan index) are dropped, the first
// kept; every record is redacted (RedactRecord); records are in plan order.
type Requests struct {
	Records []client.Record
	// Chunks[i] is what Records[i] kept of its chunks.
	Chunks []chunkdigest.Request
	Digest *chunkdigest.Digest
	// Partial counts torn lines skipped; Duplicates the records dropped.
	Partial, Duplicates int
}

// readBlockBytes is how much of the file one worker decodes at a time:
// enough to make the hand-over cheap, little enough that the blocks in
// flight (a few per worker) stay small.
const readBlockBytes = 4 << 20

// lineBatch is a run of consecutive lines of the file and, once decoded,
// what they gave.
type lineBatch struct {
	seq     int
	firstNo int      // line number of lines[0]
	lines   [][]byte // into buf
	buf     []byte

	records []client.Record // chunks dropped
	chunks  []chunkdigest.Request
	lineOf  []int   // the line (index into lines) each record came from
	glued   []bool  // the record was found after a torn line on its line
	bad     []error // per line: decoding failed (nil: fine, or empty)
	digest  *chunkdigest.Digest
	done    chan struct{}
}

// ReadRequests reads a requests.jsonl once: lines are split by one
// goroutine and decoded and digested by GOMAXPROCS workers, and the
// batches are merged in file order, so the result does not depend on how
// many workers there were. spans are passed to the digest
// (chunkdigest.New). Torn lines are handled as ReadJSONL handles them.
func ReadRequests(path string, spans []chunkdigest.Span) (*Requests, error) {
	f, err := inputfile.Open(path, inputfile.RunLines)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readRequests(f, path, spans, runtime.GOMAXPROCS(0), f.Size(), readBlockBytes)
}

// readRequests reads size bytes (0: unknown) of requests.jsonl from rd, in
// blocks of blockBytes.
func readRequests(rd io.Reader, path string, spans []chunkdigest.Span, workers int, size int64, blockBytes int) (*Requests, error) {
	workers = max(workers, 1)
	todo := make(chan *lineBatch, workers)
	ordered := make(chan *lineBatch, 2*workers)
	var splitErr error
	stop := make(chan struct{})
	// Merged batches come back to be filled again: a large run would
	// otherwise allocate its whole size again in blocks and per-batch
	// arrays, garbage the collector marks the kept records to free.
	free := make(chan *lineBatch, 3*workers+2)
	go func() {
		defer close(ordered)
		defer close(todo)
		splitErr = splitLines(rd, path, blockBytes, free, func(b *lineBatch) bool {
			b.done = make(chan struct{})
			select {
			case todo <- b:
			case <-stop:
				return false
			}
			select {
			case ordered <- b:
				return true
			case <-stop:
				return false
			}
		})
	}()
	// The batches' samples refuse what the merged sample already refuses.
	bounds := chunkdigest.NewBounds()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The records' strings are kept with them: made in blocks
			// (two million strings of a million records would be as many
			// objects for the collector to mark).
			var strs client.StringArena
			for b := range todo {
				b.decode(spans, bounds, &strs)
				close(b.done)
			}
		}()
	}
	defer wg.Wait()
	defer close(stop)

	out := &Requests{Digest: chunkdigest.New(spans)}
	var seen firstSeen
	var interned interner
	var pending error
	for b := range ordered {
		<-b.done
		if b.seq == 0 && size > 0 && len(b.records) > 0 {
			// Room for every record at once, guessed from the first
			// batch's line length: growing by doubling would hold the old
			// and the new array together, half again the records' memory.
			perLine := max(len(b.buf)/len(b.lines), 1)
			guess := int(size/int64(perLine)) + len(b.lines)
			out.Records = make([]client.Record, 0, guess+guess/16)
			out.Chunks = make([]chunkdigest.Request, 0, guess+guess/16)
		}
		// A bad line followed by any other line is an error; a bad last
		// line is a torn write (ReadJSONL's rule).
		rec := 0
		dupInBatch := false
		for li := range b.lines {
			if pending != nil {
				return nil, pending
			}
			if err := b.bad[li]; err != nil {
				pending = fmt.Errorf("%s:%d: %w", path, b.firstNo+li, err)
				continue
			}
			for ; rec < len(b.records) && b.lineOf[rec] == li; rec++ {
				if b.glued[rec] {
					out.Partial++
				}
				r := &b.records[rec]
				if r.ID != "" && seen.repeated(out.Records, r) {
					dupInBatch = true
					out.Duplicates++
					r.Index = -1 << 62 // marked; dropped below
					continue
				}
				interned.fields(r)
				out.Records = append(out.Records, *r)
				out.Chunks = append(out.Chunks, b.chunks[rec])
			}
		}
		if dupInBatch {
			// Rare: the batch's digest counted a duplicate's chunks; digest
			// the batch again without it.
			b.redigest()
		}
		out.Digest.Absorb(b.digest)
		bounds.Publish(out.Digest)
		b.recycle()
		select {
		case free <- b:
		default:
		}
	}
	if splitErr != nil {
		return nil, splitErr
	}
	if pending != nil {
		out.Partial++
	}
	SortByIndex(out)
	return out, nil
}

// SortByIndex puts records (and their digests) in plan order, stably, in
// place: a large run's records are most of a report's memory, so they are
// moved along the permutation's cycles rather than copied.
func SortByIndex(r *Requests) {
	if slices.IsSortedFunc(r.Records, func(a, b client.Record) int { return a.Index - b.Index }) {
		return
	}
	// perm[j] is the position of the record that goes to j.
	perm := make([]int32, len(r.Records))
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortStableFunc(perm, func(a, b int32) int { return r.Records[a].Index - r.Records[b].Index })
	for i := range perm {
		if perm[i] < 0 || perm[i] == int32(i) {
			continue
		}
		rec, ch := r.Records[i], r.Chunks[i]
		j := i
		for {
			k := perm[j]
			perm[j] = -1
			if int(k) == i {
				r.Records[j], r.Chunks[j] = rec, ch
				break
			}
			r.Records[j], r.Chunks[j] = r.Records[k], r.Chunks[k]
			j = int(k)
		}
	}
}

// splitLines cuts the file into batches of whole lines, as bufio.Scanner's
// ScanLines cuts them (a trailing \r dropped, no empty line after the last
// newline), and hands each to emit; emit returning false stops it. Each
// batch is one block read straight into its own buffer, cut at its last
// newline (the rest starts the next block), so no line is copied twice.
func splitLines(rd io.Reader, path string, blockBytes int, free <-chan *lineBatch, emit func(*lineBatch) bool) error {
	return splitLinesWithin(rd, path, blockBytes, inputfile.RunLineBytes, free, emit)
}

// splitLinesWithin is splitLines with the bound on one line (without its
// newline) given, for tests to try it without a gigabyte.
func splitLinesWithin(rd io.Reader, path string, blockBytes, maxLine int, free <-chan *lineBatch, emit func(*lineBatch) bool) error {
	seq, lineNo := 0, 0
	var carry []byte // the start of a line the previous block cut
	for eof := false; !eof; {
		b := &lineBatch{}
		select {
		case b = <-free:
		default:
		}
		buf := b.buf[:cap(b.buf)]
		// A long line's carry doubles the block until its end is in it,
		// up to the bound on a line and its newline.
		if need := max(blockBytes, min(2*len(carry), maxLine+2)); len(buf) < need {
			buf = make([]byte, need)
		}
		n := copy(buf, carry)
		m, err := io.ReadFull(rd, buf[n:])
		n += m
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			eof = true
		case err != nil:
			return fmt.Errorf("read %s: %w", path, err)
		}
		buf = buf[:n]
		end := n
		if !eof {
			i := bytes.LastIndexByte(buf, '\n')
			if i < 0 { // a line longer than the block: read on, within the bound on one
				if len(buf) > maxLine+1 { // +1: a '\r' dropped with the newline to come
					return &inputfile.BoundError{Path: path, Line: lineNo + 1, Kind: inputfile.RunLines}
				}
				carry = buf
				continue
			}
			end = i + 1
		}
		carry = append([]byte(nil), buf[end:]...)
		b.seq, b.firstNo, b.buf = seq, lineNo+1, buf[:end]
		for data := buf[:end]; len(data) > 0; {
			line := data
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				line, data = data[:i], data[i+1:]
			} else {
				data = nil
			}
			line = bytes.TrimSuffix(line, []byte{'\r'})
			if len(line) > maxLine {
				return &inputfile.BoundError{Path: path, Line: lineNo + 1, Kind: inputfile.RunLines}
			}
			b.lines = append(b.lines, line[:len(line):len(line)])
			lineNo++
		}
		if len(b.lines) == 0 {
			continue
		}
		if !emit(b) {
			return nil
		}
		seq++
	}
	return nil
}

// recycle empties b for splitLines to fill again, keeping its arrays (and
// dropping what they point to).
func (b *lineBatch) recycle() {
	clear(b.records)
	clear(b.bad)
	clear(b.lines)
	b.records, b.chunks, b.lineOf, b.glued, b.bad, b.lines = b.records[:0], b.chunks[:0], b.lineOf[:0], b.glued[:0], b.bad[:0], b.lines[:0]
	b.digest.Reset() // for the next block's records
	b.done = nil
}

// decode decodes and digests the batch's lines.
func (b *lineBatch) decode(spans []chunkdigest.Span, bounds *chunkdigest.Bounds, strs *client.StringArena) {
	if b.digest == nil {
		b.digest = chunkdigest.NewWithin(spans, bounds)
	}
	if cap(b.bad) >= len(b.lines) {
		b.bad = b.bad[:len(b.lines)]
	} else {
		b.bad = make([]error, len(b.lines))
	}
	if cap(b.records) < len(b.lines) {
		b.records = make([]client.Record, 0, len(b.lines))
	}
	// One record is decoded into again and again: its chunks' array is
	// reused (decoding appends to it), so a run's chunks are not garbage
	// the collector must chase.
	var r client.Record
	for li, line := range b.lines {
		if len(line) == 0 {
			continue
		}
		// DecodeRecord replaces the whole record, keeping its chunks' array
		// and the strings the next record repeats (its phase, ...).
		glued := false
		if err := decodeRecord(line, &r, strs); err != nil {
			var ok bool
			if r, ok = gluedRecord(line); !ok {
				b.bad[li] = err
				continue
			}
			glued = true
		}
		RedactRecord(&r)
		b.chunks = append(b.chunks, b.digest.Add(&r))
		kept := r
		kept.Chunks = nil
		b.records = append(b.records, kept)
		b.lineOf = append(b.lineOf, li)
		b.glued = append(b.glued, glued)
	}
}

// redigest digests the batch again, leaving out the records marked as
// duplicates (decode again: their chunks were dropped).
func (b *lineBatch) redigest() {
	b.digest.Reset()
	rec := 0
	for li, line := range b.lines {
		if len(line) == 0 || b.bad[li] != nil {
			continue
		}
		r := &b.records[rec]
		rec++
		if r.Index == -1<<62 {
			continue
		}
		var full client.Record
		if err := decodeRecord(line, &full, nil); err != nil {
			full, _ = gluedRecord(line)
		}
		b.digest.Add(&full)
	}
}

// gluedRecord finds a whole record at the end of a bad line (ReadJSONL's
// gluedObject: any '{' may start it, wherever the torn line was cut).
func gluedRecord(b []byte) (client.Record, bool) { return gluedObject[client.Record](b) }
