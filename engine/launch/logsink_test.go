package launch

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// readLog closes s and returns engine.log, checking that no segment file is
// left beside it.
func readLog(t *testing.T, s *logSink) string {
	t.Helper()
	s.close()
	for _, seg := range []string{s.path + tailSegment, s.path + oldTailSegment} {
		if _, err := os.Stat(seg); !os.IsNotExist(err) {
			t.Errorf("%s left after close: %v", filepath.Base(seg), err)
		}
	}
	b, err := os.ReadFile(s.path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// engine.log keeps the first head bytes and a rolling tail of tail/2 to
// tail bytes, with a note of exactly how much was dropped between them: the
// numbered lines kept are a prefix and a suffix of what was printed.
func TestLogSinkBounds(t *testing.T) {
	t.Parallel()
	const lineLen = 12 // "line 000000\n"
	cases := []struct {
		name       string
		head, tail int64
		lines      int
		perWrite   int // lines per write
	}{
		{"under the head", 120, 240, 5, 1},
		{"head full, tail within bounds", 120, 240, 25, 3},
		{"one rotation", 120, 240, 40, 7},
		{"many rotations", 120, 240, 1000, 5},
		{"one big write", 120, 240, 1000, 1000},
		{"head cut mid-line", 125, 240, 500, 2},
		{"odd tail", 120, 99, 500, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, err := openLogSink(filepath.Join(t.TempDir(), "engine.log"), c.head, c.tail)
			if err != nil {
				t.Fatal(err)
			}
			var all strings.Builder
			for i := 0; i < c.lines; i += c.perWrite {
				var w strings.Builder
				for j := i; j < min(i+c.perWrite, c.lines); j++ {
					fmt.Fprintf(&w, "line %06d\n", j)
				}
				all.WriteString(w.String())
				if _, err := s.Write([]byte(w.String())); err != nil {
					t.Fatal(err)
				}
			}
			lost := s.lost()
			got := readLog(t, s)
			total := int64(all.Len())
			note := regexp.MustCompile(`(?m)^llmbench: engine.log keeps the first .* of the engine's output: .* \((\d+) bytes\) dropped here\n`)
			m := note.FindStringSubmatchIndex(got)
			if total <= c.head+c.tail {
				if got != all.String() || m != nil || lost.dropped != 0 {
					t.Fatalf("%d bytes within the bounds: engine.log differs from the output (dropped %d)", total, lost.dropped)
				}
				return
			}
			if m == nil {
				if lost.dropped != 0 || got != all.String() {
					t.Fatalf("no drop note, yet %d bytes dropped or engine.log differs:\n%s", lost.dropped, got)
				}
				return
			}
			dropped, _ := strconv.ParseInt(got[m[2]:m[3]], 10, 64)
			head, tail := got[:m[0]], got[m[1]:]
			if strings.HasSuffix(head, "\n\n") || (c.head%lineLen != 0 && !strings.HasSuffix(head, "\n")) {
				t.Errorf("the note does not start a line of its own: head ends %q", head[max(0, len(head)-20):])
			}
			if int64(len(head)) == c.head+1 && head[c.head] == '\n' {
				head = head[:c.head] // the newline the note added after a cut line
			}
			if int64(len(head)) != c.head || !strings.HasPrefix(all.String(), head) {
				t.Errorf("head %d bytes, want the first %d of the output", len(head), c.head)
			}
			if n := int64(len(tail)); n > c.tail || n < c.tail/2 || !strings.HasSuffix(all.String(), tail) {
				t.Errorf("tail %d bytes, want the output's last %d to %d", n, c.tail/2, c.tail)
			}
			if want := total - c.head - int64(len(tail)); dropped != want || lost.dropped != want {
				t.Errorf("note says %d bytes dropped, lost() %d, want %d", dropped, lost.dropped, want)
			}
		})
	}
}

// A secret the engine was given is redacted in engine.log however its
// output is cut: across writes, across the head's bound and the tail's
// rotations (redaction comes before every bound), and within a line too
// long to be held whole.
func TestLogSinkRedactsAcrossEveryCut(t *testing.T) {
	t.Parallel()
	const secret = "Zq9Wx7Pv3Lm2Kd8R"
	pieces := func(text string) []string { // every piece of 4 bytes or more of the secret
		var out []string
		for i := 0; i+4 <= len(text); i++ {
			out = append(out, text[i:i+4])
		}
		return out
	}
	filler := strings.Repeat("word ", 13200) // 66000 bytes
	cases := []struct {
		name       string
		head, tail int64
		writes     []string
		keep       []string // engine.log must still hold these
	}{
		{"across writes", 0, 0, []string{"args: x " + secret[:5], secret[5:] + " y\n"}, []string{"args: x REDACTED y\n"}},
		{"byte by byte", 0, 0, strings.Split("key "+secret+" end\n", ""), []string{"key REDACTED end\n"}},
		{"across the head's bound", 10, 1000, []string{"0123456 " + secret + " tail\n"}, []string{"REDACTED"}},
		{"across rotations", 10, 16, []string{strings.Repeat("abc "+secret+" def\n", 50)}, nil},
		{"a line over the pending bound, secret at the cut", 0, 0, []string{filler[:65530] + secret[:8], secret[8:] + " and more\n", "next line\n"},
			[]string{"bytes withheld up to the end of this line", "next line\n"}},
		{"a line over the bound, password pair at the cut", 0, 0, []string{filler[:65530] + "password: " + secret[:2], secret[2:] + " more\n", "after\n"},
			[]string{"withheld", "after\n"}},
		{"a line that never ends", 0, 0, []string{filler, filler, secret, filler}, []string{"withheld"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, err := openLogSink(filepath.Join(t.TempDir(), "engine.log"), c.head, c.tail)
			if err != nil {
				t.Fatal(err)
			}
			s.known = []string{secret}
			for _, w := range c.writes {
				_, _ = s.Write([]byte(w))
			}
			got := readLog(t, s)
			for _, p := range pieces(secret) {
				if strings.Contains(got, p) {
					t.Fatalf("engine.log holds %q of the secret", p)
				}
			}
			for _, k := range c.keep {
				if !strings.Contains(got, k) {
					t.Errorf("engine.log lacks %q", k)
				}
			}
		})
	}
}

// A progress bar redrawn with carriage returns past the pending bound is
// written up to a carriage return, not withheld, and its last state survives.
func TestLogSinkKeepsALongProgressBar(t *testing.T) {
	t.Parallel()
	s, err := openLogSink(filepath.Join(t.TempDir(), "engine.log"), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		fmt.Fprintf(s, "Loading safetensors shards: %3d%% |%-50s| %d/2000\r", i/20, strings.Repeat("#", i/40), i)
	}
	fmt.Fprint(s, "done\n")
	got := readLog(t, s)
	if strings.Contains(got, "withheld") || !strings.Contains(got, "1999/2000\rdone\n") {
		t.Errorf("progress bar withheld or its end lost: ...%q", got[max(0, len(got)-200):])
	}
	if strings.Count(got, "\r") != 2000 {
		t.Errorf("%d redraws kept, want all 2000", strings.Count(got, "\r"))
	}
}

// The queue between the engine's pipe and engine.log never makes the engine
// wait: with the file's writer held up, every byte still reaches the
// in-memory tail, the overflow is counted as dropped, and the line a gap
// falls in is withheld, not written in part.
func TestPumpNeverBlocksTheEngine(t *testing.T) {
	t.Parallel()
	s, err := openLogSink(filepath.Join(t.TempDir(), "engine.log"), 1<<30, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	s.known = []string{"Zq9Wx7Pv3Lm2Kd8R"}
	s.queue = 128 << 10
	var out bytes.Buffer
	for i := range 20_000 { // 600 KB
		fmt.Fprintf(&out, "line %07d Zq9Wx7Pv3Lm2Kd8R\n", i)
	}
	out.WriteString("the last line\n")
	s.mu.Lock() // the file's writer waits on this while the pump reads on
	done := make(chan struct{})
	go func() {
		defer close(done)
		pump(bytes.NewReader(out.Bytes()), s)
	}()
	deadline := time.Now().Add(time.Minute) // a bound on a hang, not a timing
	for !strings.Contains(strings.Join(s.tail.Lines(1, 0), ""), "the last line") {
		if time.Now().After(deadline) {
			s.mu.Unlock()
			t.Fatal("the pump stopped reading while engine.log's writer was held up: the engine would block")
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.mu.Unlock()
	<-done
	lost := s.lost()
	got := readLog(t, s)
	// The writer holds one batch, taken from the queue, besides the queue's.
	if lost.behind < int64(out.Len()-2*s.queue) || lost.withheld < lost.behind {
		t.Errorf("lost %+v of %d bytes with a queue of %d: want the overflow counted", lost, out.Len(), s.queue)
	}
	if !strings.Contains(got, "withheld") || strings.Contains(got, "Zq9W") {
		t.Errorf("engine.log: no gap note, or the secret in part")
	}
	for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		if !regexp.MustCompile(`^line \d{7} REDACTED$|withheld|^the last line$`).MatchString(l) {
			t.Fatalf("a line written in part around a gap: %q", l)
		}
	}
}
