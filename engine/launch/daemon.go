package launch

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/redact"
)

// logSpec is where the engine's output goes and how much of it is kept.
type logSpec struct {
	path       string
	head, tail int64 // 0: the defaults
}

// daemon looks at what listens on the API port once the launch command
// has exited while the engine answers (a command that daemonized: `sh -c
// 'server &'`, setsid, nohup … &, a double fork, a wrapper that exits 0).
// When every listener is provably this launch's (judge), the engine goes
// on and the note says so: stop ends those processes with the rest. Else
// the error names each listener that is not (pid, command, port) and why,
// and nothing of it is stopped: what is not provably ours is never killed.
func (p *process) daemon(port int) (string, error) {
	ms, unknown, err := listeners(port)
	if err != nil {
		return "", fmt.Errorf("the launch command exited %s and a server answers on port %d, but %v: llmbench does not stop it; stop it yourself if it is the engine",
			p.exitDescription(), port, err)
	}
	var foreign []string
	for i := range ms {
		judge(&ms[i], p.id, p.pgid, p.since)
		if ms[i].ours == "" && p.seen(ms[i]) {
			ms[i].ours, ms[i].whyNot = "it carried this launch's id when llmbench first saw it", ""
		}
		if ms[i].ours == "" {
			foreign = append(foreign, fmt.Sprintf("%s: %s", p.describe(ms[i]), ms[i].whyNot))
		}
	}
	foreign = append(foreign, unknown...)
	if len(ms) == 0 && len(unknown) == 0 {
		foreign = append(foreign, "no process of this system is found listening (another network namespace?)")
	}
	if len(foreign) > 0 {
		return "", fmt.Errorf("the launch command exited %s and port %d is answered by what llmbench cannot prove is the engine's — %s; llmbench does not stop it: stop it yourself if it is the engine, or run the server in the foreground (exec it)",
			p.exitDescription(), port, strings.Join(foreign, "; "))
	}
	described := make([]string, len(ms))
	for i, m := range ms {
		described[i] = p.describe(m) + ": " + m.ours
	}
	return fmt.Sprintf("the launch command exited %s and left its server running in the background on port %d (%s): llmbench stops it with the engine",
		p.exitDescription(), port, strings.Join(described, "; ")), nil
}

// describe names a process with its command line, redacted as engine.log
// is, and shortened.
func (p *process) describe(m member) string {
	args := cmdline(m.pid)
	if len(args) == 0 {
		return m.String()
	}
	cmd := redact.Known(quoteArgv(redact.Argv(args)), p.log.known...)
	if len(cmd) > tailWidth/2 {
		cmd = shorten(cmd, tailWidth/2)
	}
	return fmt.Sprintf("pid %d `%s`", m.pid, cmd)
}

// answers reports whether something accepts connections on the engine's
// API port.
func (e *Engine) answers(port int) bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort(connectHost(e.cfg.Host), strconv.Itoa(port)), time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// daemonGrace is how long a launch command that exited 0, leaving no
// process that is provably the engine's, is given for a server to answer on
// its port: one that does is named (daemon), not taken for the engine.
const daemonGrace = 10 * time.Second

// answersSoon reports whether the API port answers within daemonGrace of a
// launch command's exit with status 0 (at once for any other exit).
func (e *Engine) answersSoon(ctx context.Context, p *process, port int) bool {
	if !p.exitedOK() {
		return e.answers(port)
	}
	ctx, cancel := context.WithTimeout(ctx, daemonGrace)
	defer cancel()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for !e.answers(port) {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	return true
}

// heldBy names the processes listening on port, for a message that says
// the port is taken ("" when they cannot be told). Nothing is done to them.
func heldBy(port int) string {
	ms, unknown, err := listeners(port)
	if err != nil {
		return ""
	}
	var who []string
	for _, m := range ms {
		who = append(who, m.String())
	}
	who = append(who, unknown...)
	if len(who) == 0 {
		return ""
	}
	return " (held by " + strings.Join(who, ", ") + ")"
}

// Notes are what the run should say of the launched engine beyond what
// Start returned, as of now: what engine.log dropped or withheld of the
// engine's output, and a launch command that exited during the run while
// its server ran on. The run puts them in run.json when its load is over.
func (e *Engine) Notes() []string {
	e.mu.Lock()
	p, noted := e.proc, e.daemonNoted
	e.mu.Unlock()
	if p == nil {
		return nil
	}
	var notes []string
	if l := p.log.lost(); l.dropped > 0 || l.withheld > 0 || l.behind > 0 {
		n := fmt.Sprintf("engine.log keeps the first %s and the last %s of the engine's output", mib(p.log.head), mib(p.log.tailMax))
		if l.dropped > 0 {
			n += fmt.Sprintf("; %s between them dropped", mib(l.dropped))
		}
		if l.behind > 0 {
			n += fmt.Sprintf("; %s printed faster than engine.log could take it (it never makes the engine wait) not written", mib(l.behind))
		}
		if over := l.withheld - l.behind; over > 0 {
			n += fmt.Sprintf("; %s of lines over %d KiB, or cut by the above, withheld", mib(over), maxPending>>10)
		}
		notes = append(notes, n+" (so far; engine.log marks where)")
	}
	if !noted && p.exitedOK() && p.anyAlive() {
		notes = append(notes, fmt.Sprintf("the launch command exited %s during the run, leaving the engine running in the background: llmbench stops it with the engine", p.exitDescription()))
	}
	return notes
}
