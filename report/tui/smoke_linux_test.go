package tui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/llmbench-org/llmbench/internal/realtest"
	"github.com/llmbench-org/llmbench/live"
)

// syncBuffer collects what the view wrote to the terminal.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// smokeDeadline bounds every wait of the smoke test; on a loaded machine a
// step may be slow, but none should take this long.
const smokeDeadline = 20 * time.Second

// TestRunOnPseudoTerminal is the one test of the real program: Run drives a
// pseudo-terminal, draws the view, forwards Ctrl-C typed on the terminal to
// the interrupt callback, stops when the context ends and leaves the
// terminal as it found it.
func TestRunOnPseudoTerminal(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	t.Setenv("TERM", "xterm-256color") // a known terminal, whatever the test runner has
	ptm, pts := openPTY(t)
	defer ptm.Close()
	defer pts.Close()
	if err := pty.Setsize(pts, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		t.Fatalf("sizing the pseudo-terminal: %v", err)
	}
	before, err := unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatalf("reading terminal modes: %v", err)
	}

	var screen syncBuffer
	copied := make(chan struct{})
	go func() { defer close(copied); _, _ = io.Copy(&screen, ptm) }()

	var interrupts atomic.Int32
	interrupted := make(chan struct{}, 8)
	var samples atomic.Int32
	progress := func() live.Progress {
		n := samples.Add(1)
		return live.Progress{Phase: "steady", Elapsed: time.Duration(n) * 10 * time.Millisecond, Window: 10 * time.Second, Sent: int(n)}
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	result := make(chan error, 1)
	go func() {
		result <- Run(ctx, Header{Scenario: "smoke-scenario", RunDir: "runs/smoke", Engine: "sim"}, progress, Options{
			Input: pts, Output: pts, Rate: 10 * time.Millisecond,
			Interrupt: func() { interrupts.Add(1); interrupted <- struct{}{} },
		})
	}()

	waitUntil(t, "the first frame", func() bool { return strings.Contains(screen.String(), "smoke-scenario") })
	raw, err := unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatalf("reading terminal modes: %v", err)
	}
	if raw.Lflag&(unix.ICANON|unix.ECHO|unix.ISIG) != 0 {
		t.Errorf("terminal not in raw mode while the view runs: lflag %#x", raw.Lflag)
	}

	if _, err := ptm.Write([]byte{0x03}); err != nil { // Ctrl-C typed on the terminal
		t.Fatalf("typing Ctrl-C: %v", err)
	}
	select {
	case <-interrupted:
	case <-time.After(smokeDeadline):
		t.Fatal("Ctrl-C on the terminal did not reach the interrupt callback")
	}
	waitUntil(t, "the sampler to keep feeding the view", func() bool { return samples.Load() >= 3 })

	cancel()
	select {
	case err := <-result:
		if err != nil {
			t.Errorf("Run returned %v, want nil after the context ended", err)
		}
	case <-time.After(smokeDeadline):
		t.Fatal("Run did not return after the context ended")
	}
	if got := interrupts.Load(); got != 1 {
		t.Errorf("interrupt called %d times, want 1", got)
	}

	after, err := unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatalf("reading terminal modes: %v", err)
	}
	if after.Lflag != before.Lflag || after.Iflag != before.Iflag || after.Oflag != before.Oflag {
		t.Errorf("terminal modes not restored: lflag %#x→%#x iflag %#x→%#x oflag %#x→%#x",
			before.Lflag, after.Lflag, before.Iflag, after.Iflag, before.Oflag, after.Oflag)
	}

	// The master is read to its end before it is closed: closing it first
	// threw away what the copier had not read yet, the final frame among it
	// (0 frames after the view, once in a CI run). With the terminal side
	// closed, a read of the master returns what is left, then EIO.
	pts.Close()
	select {
	case <-copied:
	case <-time.After(smokeDeadline):
		t.Error("the terminal's output did not end after the terminal side closed")
	}
	ptm.Close()
	<-copied
	// Every frame is drawn on the alternate screen, so none reaches the
	// scrollback; after leaving it, the view prints the last frame once on
	// the normal screen, saying the run is done and where its report is.
	out := screen.String()
	enter, leave := strings.Index(out, "\x1b[?1049h"), strings.LastIndex(out, "\x1b[?1049l")
	if enter < 0 || leave < enter {
		t.Fatalf("the view did not draw on the alternate screen (enter at %d, leave at %d):\n%q", enter, leave, tail(out, 2000))
	}
	if strings.Contains(out[:enter], "smoke-scenario") {
		t.Errorf("a frame was drawn before entering the alternate screen:\n%q", out[:enter])
	}
	final := ansi.Strip(out[leave:])
	if n := strings.Count(final, "llmbench · smoke-scenario"); n != 1 {
		t.Errorf("the normal screen got %d frames after the view, want 1:\n%s", n, final)
	}
	for _, want := range []string{"phase done", "run done · report runs/smoke/report.html"} {
		if !strings.Contains(final, want) {
			t.Errorf("the final frame lacks %q:\n%s", want, final)
		}
	}
	if strings.Contains(final, "▸") || strings.Contains(final, "Ctrl-C") {
		t.Errorf("the final frame still reads as a running view:\n%s", final)
	}
}

// openPTY opens a pseudo-terminal pair. creack/pty opens /dev/ptmx and then
// the secondary by its path /dev/pts/N; in a container (CI runs go test as
// root with no terminal) /dev/ptmx can belong to another devpts instance
// than the /dev/pts mounted there, or be missing, so that path does not
// exist and the test used to skip. The fallback opens the multiplexer of the
// mounted instance, /dev/pts/ptmx, and gets the secondary from it with
// TIOCGPTPEER (Linux 4.13), without any path lookup. Only when both fail is
// there no pseudo-terminal: a skip, or a failure under LLMBENCH_REQUIRE_REAL=1
// (CI).
func openPTY(t *testing.T) (ptm, pts *os.File) {
	t.Helper()
	ptm, pts, err := pty.Open()
	if err == nil {
		return ptm, pts
	}
	ptm, pts, err2 := openPeer("/dev/pts/ptmx")
	if err2 != nil {
		realtest.Missing(t, fmt.Sprintf("no pseudo-terminal: creack/pty: %v; /dev/pts/ptmx: %v", err, err2))
	}
	return ptm, pts
}

// openPeer opens the multiplexer at path, unlocks it and returns its
// secondary by TIOCGPTPEER.
func openPeer(path string) (ptm, pts *os.File, err error) {
	ptm, err = os.OpenFile(path, os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		ptm.Close()
		return nil, nil, fmt.Errorf("unlock: %w", err)
	}
	fd, _, errno := unix.Syscall(unix.SYS_IOCTL, ptm.Fd(), unix.TIOCGPTPEER, uintptr(unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC))
	if errno != 0 {
		ptm.Close()
		return nil, nil, fmt.Errorf("TIOCGPTPEER: %w", errno)
	}
	return ptm, os.NewFile(fd, "/dev/pts/peer"), nil
}

// The fallback works wherever the test runs, so a CI without /dev/ptmx
// still has a terminal for the smoke test.
func TestOpenPeerFallback(t *testing.T) {
	t.Parallel()
	ptm, pts, err := openPeer("/dev/pts/ptmx")
	if err != nil {
		realtest.Missing(t, fmt.Sprintf("no /dev/pts/ptmx: %v", err))
	}
	defer ptm.Close()
	defer pts.Close()
	if _, err := unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS); err != nil {
		t.Fatalf("the peer is not a terminal: %v", err)
	}
	if _, err := ptm.Write([]byte("x\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	n, err := pts.Read(buf)
	if err != nil || string(buf[:n]) != "x\n" {
		t.Fatalf("read %q, %v through the pair", buf[:n], err)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(smokeDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
