package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/reconcile"
	"github.com/llmbench-org/llmbench/scrape"
)

// Recorder owns a run directory while the run goes on. Records and scrape rows
// arrive on channels (Consume); each is appended to its JSONL file at once, so a
// crash loses nothing already finished, and folded into the live window that
// Progress reports. It is the only writer of the run directory's raw files.
type Recorder struct {
	dir   string
	start time.Time

	requests *os.File
	scrapes  *os.File
	// line is the reused encoding buffer (Consume is the only writer): a
	// record's line costs no allocation of its own (Record.AppendJSON),
	// which at hundreds of records a second is garbage the quiet collector
	// (0004) would otherwise have to hold.
	line []byte
	// torn marks a file whose last write failed part-way (a full disk):
	// the next line starts on a new line, so it is not glued to the torn one.
	torn map[*os.File]bool
	// broken is closed at the first write that failed (a full disk): the
	// run stops rather than carry on measuring what it cannot keep.
	broken     chan struct{}
	brokenOnce sync.Once

	sent  atomic.Int64           // requests handed to the client (Begin), for the in-flight count
	ended atomic.Int64           // requests the client returned (End)
	phase atomic.Pointer[string] // the phase being driven, for the live view

	mu    sync.Mutex // guards live and recon, written by Consume, read by Progress
	live  liveWindow
	recon *reconcile.Live // the live reconciliation; nil until SetDialect
	// client and clientPrev are the client's last two looks at itself
	// (SetClient): a verdict is shown once both agree on it.
	client, clientPrev ClientLive
}

// NewRecorder creates a new run directory named dir — or dir-2, dir-3, ...
// when that exists already, so two runs never mix — and opens its raw files.
// start is the run clock's origin.
func NewRecorder(dir string, start time.Time) (*Recorder, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("create runs directory: %w", err)
	}
	base := dir
	for n := 2; ; n++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || n > 1000 {
			return nil, fmt.Errorf("create run directory: %w", err)
		}
		dir = fmt.Sprintf("%s-%d", base, n)
	}
	r := &Recorder{dir: dir, start: start, live: newLiveWindow(10 * time.Second), broken: make(chan struct{})}
	var err error
	if r.requests, err = os.Create(filepath.Join(dir, RequestsFile)); err != nil {
		return nil, err
	}
	if r.scrapes, err = os.Create(filepath.Join(dir, ScrapesFile)); err != nil {
		r.requests.Close()
		return nil, err
	}
	return r, nil
}

// Broken is closed when a write of the raw files failed (a full disk): what
// is measured from then on could not be kept, so the run should stop; Consume
// returns the error.
func (r *Recorder) Broken() <-chan struct{} { return r.broken }

// Dir is the run directory.
func (r *Recorder) Dir() string { return r.dir }

// WriteFile writes a whole file into the run directory (scenario.yaml, run.json,
// summary.json, ...) atomically: a reader never sees half a file.
func (r *Recorder) WriteFile(name string, data []byte) error {
	return writeFileAtomic(filepath.Join(r.dir, name), data)
}

// WriteJSON writes v as indented JSON into the run directory. A RunMeta
// (or *RunMeta) is written redacted (RedactMeta): its URLs and notes may
// carry secrets expanded from the environment.
func (r *Recorder) WriteJSON(name string, v any) error {
	switch m := v.(type) {
	case RunMeta:
		RedactMeta(&m)
		v = m
	case *RunMeta:
		c := *m
		RedactMeta(&c)
		v = &c
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	return r.WriteFile(name, append(b, '\n'))
}

// SetDialect starts the live reconciliation of the client's records with the
// engine's scrapes, in the engine's metric dialect; call it before Consume.
func (r *Recorder) SetDialect(dialect string) {
	r.mu.Lock()
	r.recon = reconcile.NewLive(r.live.span, dialect)
	r.mu.Unlock()
}

// SetSLO makes the live view count goodput against slo; call it before
// Consume.
func (r *Recorder) SetSLO(slo SLO) {
	r.mu.Lock()
	r.live.slo = &slo
	r.mu.Unlock()
}

// SetPercentiles makes the live view read its latency quantiles at ps (the
// scenario's report.percentiles), as the final report does; call it before
// Consume.
func (r *Recorder) SetPercentiles(ps []float64) {
	if len(ps) == 0 {
		return
	}
	r.mu.Lock()
	r.live.percentiles = slices.Clone(ps)
	r.mu.Unlock()
}

// SetClient records the client's look at itself over the last second (the
// run takes one every second); safe from any goroutine.
func (r *Recorder) SetClient(c ClientLive) {
	r.mu.Lock()
	r.clientPrev, r.client = r.client, c
	r.mu.Unlock()
}

// SetPhase tells the live view which phase is being driven.
func (r *Recorder) SetPhase(name string) { r.phase.Store(&name) }

// Begin counts a request handed to the client; safe from any goroutine.
func (r *Recorder) Begin() { r.sent.Add(1) }

// End counts a request the client returned (before its record reaches
// Consume, so the in-flight count never includes a finished request).
func (r *Recorder) End() { r.ended.Add(1) }

// Consume appends every record and row to the run directory until both
// channels are closed, and returns the first write error (after draining, so
// producers never block on a failed disk).
func (r *Recorder) Consume(records <-chan client.Record, rows <-chan scrape.Row) error {
	var firstErr error
	keep := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
			r.brokenOnce.Do(func() { close(r.broken) })
		}
	}
	// One variable holds every record in turn: the encoder takes its
	// address, so a variable per record would be a heap allocation each.
	var rec client.Record
	for records != nil || rows != nil {
		select {
		case next, ok := <-records:
			if !ok {
				records = nil
				continue
			}
			rec = next
			RedactRecord(&rec) // no secret reaches the disk: an error may echo an API key or a URL
			keep(r.appendLine(r.requests, &rec))
			r.mu.Lock()
			r.live.addRecord(&rec, time.Since(r.start))
			if r.recon != nil {
				r.recon.AddRecord(rec)
			}
			r.mu.Unlock()
		case row, ok := <-rows:
			if !ok {
				rows = nil
				continue
			}
			RedactRow(&row) // a target's URL may carry a password or a token
			keep(r.appendLine(r.scrapes, &row))
			r.mu.Lock()
			r.live.addRow(&row)
			if r.recon != nil {
				r.recon.AddRow(row)
			}
			r.mu.Unlock()
		}
	}
	return firstErr
}

// appendLine writes v as one JSON line with a single write call, so the file
// only ever holds whole lines plus, after a crash, at most one partial last line.
func (r *Recorder) appendLine(f *os.File, v any) error {
	r.line = r.line[:0]
	if r.torn[f] {
		r.line = append(r.line, '\n')
	}
	if a, ok := v.(interface{ AppendJSON([]byte) []byte }); ok { // a record: no reflection, no copy
		r.line = a.AppendJSON(r.line)
	} else {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode %s line: %w", filepath.Base(f.Name()), err)
		}
		r.line = append(r.line, b...)
	}
	r.line = append(r.line, '\n')
	if n, err := f.Write(r.line); err != nil {
		if n > 0 {
			if r.torn == nil {
				r.torn = map[*os.File]bool{}
			}
			r.torn[f] = true
		}
		return fmt.Errorf("append to %s: %w", f.Name(), err)
	}
	delete(r.torn, f)
	return nil
}

// Progress is a snapshot of the live window, cheap enough to call at 4 Hz.
func (r *Recorder) Progress() Progress {
	now := time.Since(r.start)
	sent := int(r.sent.Load())
	inFlight := max(0, sent-int(r.ended.Load()))
	r.mu.Lock()
	p := r.live.progress(now)
	if r.recon != nil {
		p.Findings = r.recon.Findings(now, inFlight)
	}
	p.Client = r.client
	if r.clientPrev.Delay != r.client.Delay {
		p.Client.Delay = "" // one look is not a verdict: a second must agree
	}
	r.mu.Unlock()
	p.Elapsed = now
	if ph := r.phase.Load(); ph != nil {
		p.Phase = *ph
	}
	p.Sent, p.InFlight = sent, inFlight
	return p
}

// Close syncs and closes the raw files.
func (r *Recorder) Close() error {
	var firstErr error
	for _, f := range []*os.File{r.requests, r.scrapes} {
		if err := f.Sync(); err != nil && firstErr == nil {
			firstErr = err
		}
		if err := f.Close(); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		_ = os.Remove(tmp) // a full disk leaves no half-written copy behind
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadJSONL decodes every line of a JSONL file with fn and returns how many
// torn lines it skipped. A truncated last line (a crash mid-write) is
// skipped; so is a torn line inside the file (a full disk mid-write, then
// more writes) when a whole object follows it on the same line, which is
// decoded. Any other bad line is an error naming the file and line.
func ReadJSONL[T any](path string, fn func(*T) error) (partial int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<30)
	lineNo := 0
	var pendingErr error
	for sc.Scan() {
		lineNo++
		if pendingErr != nil { // a bad line that was not the last one
			return partial, pendingErr
		}
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var v T
		if err := decodeLine(b, &v); err != nil {
			rest, ok := gluedObject[T](b)
			if !ok {
				pendingErr = fmt.Errorf("%s:%d: %w", path, lineNo, err)
				continue
			}
			partial++ // a torn line, then a whole one glued to it
			v = rest
		}
		if err := fn(&v); err != nil {
			return partial, fmt.Errorf("%s:%d: %w", path, lineNo, err)
		}
	}
	if err := sc.Err(); err != nil {
		return partial, fmt.Errorf("read %s: %w", path, err)
	}
	if pendingErr != nil {
		partial++
	}
	return partial, nil
}

// decodeLine decodes one line into a zero v. A record goes through
// client.DecodeRecord, which answers as encoding/json does but reads
// llmbench's own lines several times faster (no validating pre-scan).
func decodeLine[T any](b []byte, v *T) error {
	if r, ok := any(v).(*client.Record); ok {
		return client.DecodeRecord(b, r)
	}
	return json.Unmarshal(b, v)
}

// gluedObject finds a whole JSON object at the end of a bad line: the line
// a writer appended after a torn one that had no newline. Any '{' may start
// it (the torn line may end in "[" or ","); one inside the glued object
// cannot, as that object's own closing brace would follow it.
func gluedObject[T any](b []byte) (T, bool) {
	var v T
	for i := len(b) - 1; i > 0; i-- {
		if b[i] != '{' {
			continue
		}
		if decodeLine(b[i:], &v) == nil {
			return v, true
		}
		v = *new(T)
	}
	return v, false
}
