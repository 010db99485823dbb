package launch

import (
	"context"
	"errors"
	"fmt"
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
	// id is this launch's id (launchIDEnv) and since its first process's
	// start (clock ticks after boot, Linux; 0 elsewhere or unread): what
	// proves a process outside the group is the engine's.
	id    string
	since uint64
	// strays are the launch's processes found outside its group so far,
	// followed by pid and start time once found: an exiting process's
	// environment already reads empty while it still runs.
	strayMu sync.Mutex
	strays  map[int]member

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
// Every process of the engine inherits launchIDEnv with this launch's own
// id, which tells its processes that leave the group (a daemon) from any
// other (docs/decisions/0852).
//
// known are secrets beyond those argv and env name (the API key llmbench
// sends): engine.log and the tail quoted in errors replace each of them
// verbatim, wherever the engine prints them.
func spawn(path string, argv, env []string, dir string, log logSpec, known ...string) (*process, error) {
	logPath := log.path
	sink, err := openLogSink(logPath, log.head, log.tail)
	if err != nil {
		return nil, err
	}
	sink.known = append(redact.Secrets(argv, env), known...)
	id := newLaunchID()
	if env == nil { // exec's nil: llmbench's own environment
		env = os.Environ()
	}
	env = append(env[:len(env):len(env)], launchIDEnv+"="+id)
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
	p := &process{exited: make(chan struct{}), logged: make(chan struct{}), pipe: r, log: sink, id: id}
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
	p.since = startTicks(p.pgid)
	// Should llmbench die before it stops the engine, this file is what
	// finds the group again (KillLeftover). Without it the engine still
	// runs: a run directory that cannot take it is noted, not fatal.
	p.group = groupFilePath(logPath)
	if err := writeGroupFile(p.group, p.pgid, p.id); err != nil {
		sink.note("llmbench: " + err.Error() + "\n")
		p.group = ""
	}
	go func() {
		defer close(p.logged)
		pump(r, sink)
	}()
	return p, nil
}

// stop ends the engine: SIGTERM to its process group and to every process
// of the launch that left it (escaped), and SIGKILL when ctx ends before
// they are all gone. It then drains and closes the log. The first call does
// the work; later calls wait for it and return its result.
func (p *process) stop(ctx context.Context) error {
	p.stopMu.Lock()
	defer p.stopMu.Unlock()
	if p.stopped {
		return p.stopErr
	}
	p.stopped = true

	exited := p.leaderExited()
	outside := p.outsiders()
	// A first process that exited 0 while the engine runs on is a launch
	// command that put its server in the background, not a crash.
	daemonized := exited && p.exitedOK() && (len(outside) > 0 || groupAlive(p.pgid))
	// The group may outlive its leader (children it left behind): signal it either way.
	p.signalAll(syscall.SIGTERM)
	var killed error
	gone := true
	if err := p.waitGone(ctx); err != nil {
		p.signalAll(syscall.SIGKILL)
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
	if len(outside) > 0 {
		p.log.note(fmt.Sprintf("llmbench: stopped %s: outside the engine's process group, but carrying this launch's id\n", names(outside)))
	}
	p.closeLog()
	if exited && !daemonized { // a crash during the run: the run must say so
		p.stopErr = fmt.Errorf("engine had exited on its own %s before it was stopped; %s",
			p.exitDescription(), p.tailMessage())
	}
	p.stopErr = errors.Join(p.stopErr, killed)
	return p.stopErr
}

// signalAll sends sig to the engine's group and to each process of the
// launch outside it.
func (p *process) signalAll(sig syscall.Signal) {
	_ = signalGroup(p.pgid, sig)
	for _, m := range p.outsiders() {
		m.signal(sig)
	}
}

// seen reports whether m was found carrying the launch's id earlier (same
// pid and start): it is the launch's even if it has since exec'd a program
// with that id removed from its environment.
func (p *process) seen(m member) bool {
	p.strayMu.Lock()
	defer p.strayMu.Unlock()
	s, ok := p.strays[m.pid]
	return ok && s.start == m.start
}

// outsiders are the launch's live processes outside its group: those
// found now (escaped) and those found before that still run.
func (p *process) outsiders() []member {
	found := escaped(p.id, p.pgid, p.since)
	p.strayMu.Lock()
	defer p.strayMu.Unlock()
	if p.strays == nil {
		p.strays = map[int]member{}
	}
	for _, m := range found {
		p.strays[m.pid] = m
	}
	out := make([]member, 0, len(p.strays))
	for pid, m := range p.strays {
		if !m.alive() {
			delete(p.strays, pid)
			continue
		}
		out = append(out, m)
	}
	return out
}

// anyAlive reports whether a process of the engine lives: in its group, or
// outside it with the launch's id.
func (p *process) anyAlive() bool {
	return groupAlive(p.pgid) || len(p.outsiders()) > 0
}

// leaderExited reports whether the engine's first process has exited.
func (p *process) leaderExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// exitedOK reports whether the first process has exited with status 0.
func (p *process) exitedOK() bool {
	if !p.leaderExited() {
		return false
	}
	ws, ok := p.state.Sys().(syscall.WaitStatus)
	return ok && ws.Exited() && ws.ExitStatus() == 0
}

// lifeline is closed once the engine is gone while Start waits for it: its
// first process exited with an error, or exited 0 (a launch command that
// put its server in the background) and no process of the engine is left.
// It stops watching when ctx ends.
func (p *process) lifeline(ctx context.Context) <-chan struct{} {
	gone := make(chan struct{})
	go func() {
		select {
		case <-p.exited:
		case <-ctx.Done():
			return
		}
		delay := 20 * time.Millisecond
		t := time.NewTimer(0)
		defer t.Stop()
		// Nothing left three times in a row: a process caught in the middle
		// of an exec can read as no process of the launch for an instant.
		for none := 0; p.exitedOK() && none < 3; {
			if p.anyAlive() {
				none = 0
			} else {
				none++
			}
			t.Reset(delay)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			delay = min(2*delay, 500*time.Millisecond)
		}
		close(gone)
	}()
	return gone
}

// waitGone waits until the leader is reaped and no live process of the
// engine is left, or ctx ends.
func (p *process) waitGone(ctx context.Context) error {
	delay := 5 * time.Millisecond
	t := time.NewTimer(delay)
	defer t.Stop()
	// Gone twice in a row: a process caught in the middle of an exec can
	// read as no process of the launch for an instant.
	confirmed := 0
	for {
		if p.leaderExited() && !p.anyAlive() {
			if confirmed++; confirmed == 2 {
				return nil
			}
		} else {
			confirmed = 0
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
	// Whole lines are redacted before they are shortened: a secret cut in
	// two by the shortening would no longer be recognised.
	lines := p.log.tail.Lines(tailLines, 0)
	if len(lines) == 0 {
		return "no output in " + where
	}
	for i, l := range lines {
		l = redact.Known(l, p.log.known...) // an error carries them to the screen and run.json
		if len(l) > tailWidth {
			l = shorten(l, tailWidth)
		}
		lines[i] = l
	}
	return "last lines of " + where + ":\n    " + strings.Join(lines, "\n    ")
}
