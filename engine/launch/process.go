package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/llmbench-org/llmbench/redact"
)

// Bounds of the in-memory tail and of what an error message quotes of it.
const (
	tailBytes    = 64 << 10
	tailLines    = 20
	tailWidth    = 400
	drainTimeout = 2 * time.Second // for output held open by a process outside the group
	killTimeout  = 5 * time.Second // for the kernel to end a SIGKILLed group
)

// process is one launched engine: the leader of its own process group, whose
// stdout and stderr go through one pipe into engine.log and the tail.
type process struct {
	pgid   int
	exited chan struct{} // closed once the leader has exited and been reaped
	state  *os.ProcessState
	logged chan struct{} // closed once the pipe is drained
	pipe   *os.File      // read end
	log    *logSink
	group  string // the GroupFile, "" for none

	stopMu  sync.Mutex
	stopped bool
	stopErr error
}

// spawn starts argv as the leader of a new process group, with stdin from
// /dev/null and stdout and stderr into logPath ("" = the tail only), and
// records the group in GroupFile beside logPath.
//
// What ends the engine's processes: every stop path (stop, called by
// Engine.Stop and by a failed or canceled Start) signals the whole group, so
// a multi-process engine's grandchildren go with its first process. If
// llmbench itself is killed (kill -9), Linux's parent-death signal
// (sysProcAttr) kills the first process only; its children stay in the
// group, and the GroupFile left in the run directory lets KillLeftover end
// them later. Elsewhere nothing ends the engine then.
//
// known are secrets beyond those argv and env name (the API key llmbench
// sends): engine.log and the tail quoted in errors replace each of them
// verbatim, wherever the engine prints them.
func spawn(path string, argv, env []string, dir, logPath string, known ...string) (*process, error) {
	sink, err := openLogSink(logPath)
	if err != nil {
		return nil, err
	}
	sink.known = append(redact.Secrets(argv, env), known...)
	// One pipe the engine's group writes and a goroutine of ours reads: exec
	// copies nothing itself (the child gets the pipe's file), so waiting for
	// the leader never waits for a grandchild that still holds the output.
	r, w, err := os.Pipe()
	if err != nil {
		sink.close()
		return nil, fmt.Errorf("output pipe: %w", err)
	}
	sink.note("llmbench: launching " + quoteArgv(redact.Argv(argv)) + "\n")
	cmd := &exec.Cmd{
		Path: path, Args: argv, Env: env, Dir: dir,
		Stdout: w, Stderr: w,
		SysProcAttr: sysProcAttr(),
	}
	p := &process{exited: make(chan struct{}), logged: make(chan struct{}), pipe: r, log: sink}
	started := make(chan error, 1)
	go func() {
		// The parent-death signal (Linux) fires when the thread that forked
		// the child ends, not the process: keep this thread for the child's
		// whole life so that only llmbench's death sends it.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait() // its error is the exit status, kept in ProcessState
		p.state = cmd.ProcessState
		close(p.exited)
	}()
	err = <-started
	w.Close() // the engine's group holds the write end now
	if err != nil {
		r.Close()
		sink.close()
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	p.pgid = cmd.Process.Pid
	// Should llmbench die before it stops the engine, this file is what
	// finds the group again (KillLeftover). Without it the engine still
	// runs: a run directory that cannot take it is noted, not fatal.
	p.group = groupFilePath(logPath)
	if err := writeGroupFile(p.group, p.pgid); err != nil {
		sink.note("llmbench: " + err.Error() + "\n")
		p.group = ""
	}
	go func() {
		defer close(p.logged)
		_, _ = io.Copy(sink, r)
	}()
	return p, nil
}

// stop ends the process group: SIGTERM, and SIGKILL when ctx ends before the
// group is gone. It then drains and closes the log. The first call does the
// work; later calls wait for it and return its result.
func (p *process) stop(ctx context.Context) error {
	p.stopMu.Lock()
	defer p.stopMu.Unlock()
	if p.stopped {
		return p.stopErr
	}
	p.stopped = true

	crashed := false
	select {
	case <-p.exited:
		crashed = true
	default:
	}
	// The group may outlive its leader (children it left behind): signal it either way.
	_ = signalGroup(p.pgid, syscall.SIGTERM)
	var killed error
	gone := true
	if err := p.waitGone(ctx); err != nil {
		_ = signalGroup(p.pgid, syscall.SIGKILL)
		killed = fmt.Errorf("engine did not exit within the stop deadline after SIGTERM (%w): killed its process group", err)
		kctx, cancel := context.WithTimeout(context.Background(), killTimeout)
		if err := p.waitGone(kctx); err != nil {
			killed = fmt.Errorf("%w; its group still had processes %v later", killed, killTimeout)
			gone = false // the GroupFile stays, for KillLeftover
		}
		cancel()
	}
	if gone && p.group != "" {
		_ = os.Remove(p.group)
	}
	p.closeLog()
	if crashed { // a crash during the run: the run must say so
		p.stopErr = fmt.Errorf("engine had exited on its own %s before it was stopped; %s",
			p.exitDescription(), p.tailMessage())
	}
	p.stopErr = errors.Join(p.stopErr, killed)
	return p.stopErr
}

// waitGone waits until the leader is reaped and no live process is left in
// the group, or ctx ends.
func (p *process) waitGone(ctx context.Context) error {
	delay := 5 * time.Millisecond
	t := time.NewTimer(delay)
	defer t.Stop()
	for {
		select {
		case <-p.exited:
			if !groupAlive(p.pgid) {
				return nil
			}
		default:
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, 200*time.Millisecond)
		t.Reset(delay)
	}
}

// closeLog waits for the engine's output to be read to its end, then closes
// the log. A process that left the group may still hold the pipe: after
// drainTimeout its output is no longer read.
func (p *process) closeLog() {
	t := time.NewTimer(drainTimeout)
	defer t.Stop()
	select {
	case <-p.logged:
	case <-t.C:
		p.pipe.Close() // ends the copy
		<-p.logged
	}
	p.pipe.Close()
	p.log.note(fmt.Sprintf("llmbench: engine stopped (%s)\n", p.exitDescription()))
	p.log.close()
}

// exitDescription says how the leader ended: "with status 1", "on signal
// killed", or "(still running)".
func (p *process) exitDescription() string {
	select {
	case <-p.exited:
	default:
		return "(still running)"
	}
	ws, ok := p.state.Sys().(syscall.WaitStatus)
	switch {
	case ok && ws.Signaled():
		return "on signal " + ws.Signal().String()
	case ok && ws.Exited():
		return fmt.Sprintf("with status %d", ws.ExitStatus())
	default:
		return p.state.String()
	}
}

// tailMessage quotes the last lines of the engine's output.
func (p *process) tailMessage() string {
	where := "its output"
	if p.log.path != "" {
		where = p.log.path
	}
	lines := p.log.tail.Lines(tailLines, tailWidth)
	if len(lines) == 0 {
		return "no output in " + where
	}
	for i, l := range lines {
		lines[i] = redact.Known(l, p.log.known...) // an error carries them to the screen and run.json
	}
	return "last lines of " + where + ":\n    " + strings.Join(lines, "\n    ")
}

// logSink is engine.log and the in-memory tail, written by the engine's
// output copy and by llmbench's own notes, one write at a time.
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
	// known are the secrets the engine was given (redact.Secrets of its
	// command line and environment, and the API key), replaced verbatim.
	known []string
}

// maxPending is the longest incomplete line held back from the file: a
// progress bar redrawn with \r never ends its line.
const maxPending = 64 << 10

func openLogSink(path string) (*logSink, error) {
	s := &logSink{path: path, tail: newTailBuffer(tailBytes)}
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
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file != nil && s.err == nil {
		s.pending = append(s.pending, b...)
		if i := bytes.LastIndexByte(s.pending, '\n'); i >= 0 {
			s.flush(i + 1)
		} else if len(s.pending) > maxPending {
			s.flush(len(s.pending))
		}
	}
	return s.tail.Write(b)
}

// flush writes the first n bytes of pending to the file, redacted.
func (s *logSink) flush(n int) {
	if s.err == nil && n > 0 {
		_, s.err = s.file.WriteString(redact.Known(string(s.pending[:n]), s.known...))
	}
	s.pending = append(s.pending[:0], s.pending[n:]...)
}

// note writes llmbench's own line to the file only: the tail quoted in errors
// is the engine's.
func (s *logSink) note(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file != nil && s.err == nil {
		s.flush(len(s.pending)) // the engine's unfinished line, then ours
		_, s.err = s.file.WriteString(redact.Known(line, s.known...))
	}
}

func (s *logSink) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file != nil {
		s.flush(len(s.pending))
		_ = s.file.Close()
		s.file = nil
	}
}
