package launch

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// procRoot is where the process table is read; a test points it at a fake.
var procRoot = "/proc"

// startTicks is a process's start in clock ticks after boot; 0 when it
// cannot be read (it is gone).
func startTicks(pid int) uint64 {
	if st, ok := stat(pid); ok {
		return st.Starttime
	}
	return 0
}

// hasLaunchID reports whether an environment (/proc/PID/environ: entries
// ended by NUL) carries launchIDEnv=id.
func hasLaunchID(environ []byte, id string) bool {
	needle := []byte(launchIDEnv + "=" + id + "\x00")
	return bytes.HasPrefix(environ, needle) || bytes.Contains(environ, append([]byte{0}, needle...))
}

// pids lists the numeric entries of the process table.
func pids() []int {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	out := make([]int, 0, len(entries))
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// escaped lists the live processes outside the engine's group pgid that
// carry this launch's id and started no earlier than its leader (since):
// the engine's processes that left its group (setsid, a double fork).
func escaped(id string, pgid int, since uint64) []member {
	var out []member
	for _, pid := range pids() {
		env, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "environ"))
		if err != nil || !hasLaunchID(env, id) {
			continue
		}
		st, ok := stat(pid)
		if !ok || !live(st.State) || st.PGRP == pgid || st.Starttime < since {
			continue
		}
		out = append(out, member{pid: pid, start: st.Starttime, comm: st.Comm, pgrp: st.PGRP, ours: "it carries this launch's id"})
	}
	return out
}

// judge says whether m is provably this launch's (docs/decisions/0852): a
// member of the engine's process group (Linux never gives a new process
// the number of a group that still has members), or a process whose
// environment carries the launch's random id and that started after the
// engine's first process. Anything else — another user's process, one
// started with a cleared environment, a container runtime's proxy — is not.
func judge(m *member, id string, pgid int, since uint64) {
	if m.pgrp == pgid {
		m.ours = "it is in the engine's process group"
		return
	}
	env, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(m.pid), "environ"))
	switch {
	case err != nil:
		m.whyNot = "its environment cannot be read (another user's process?)"
	case !hasLaunchID(env, id):
		m.whyNot = "it is outside the engine's process group and does not carry this launch's id"
	case m.start < since:
		m.whyNot = "it started before the engine"
	default:
		m.ours = "it carries this launch's id"
	}
}

// tcpListen is a listening TCP socket of /proc/net/tcp{,6}.
type tcpListen struct {
	inode uint64
	uid   string
}

// listenersOn parses /proc/net/tcp or tcp6 text: the listening sockets on port.
func listenersOn(text string, port int) []tcpListen {
	var out []tcpListen
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != "0A" { // 0A: TCP_LISTEN
			continue
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		p, err := strconv.ParseUint(hexPort, 16, 16)
		if !ok || err != nil || int(p) != port {
			continue
		}
		inode, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil || inode == 0 {
			continue
		}
		out = append(out, tcpListen{inode: inode, uid: f[7]})
	}
	return out
}

// listeners are the processes holding a listening TCP socket on port in
// this network namespace; unknown names the sockets whose process could not
// be found (another user's, whose descriptors cannot be read).
func listeners(port int) (ms []member, unknown []string, err error) {
	var socks []tcpListen
	for _, f := range []string{"net/tcp", "net/tcp6"} {
		b, err := os.ReadFile(filepath.Join(procRoot, f))
		if err != nil && !os.IsNotExist(err) {
			return nil, nil, err
		}
		socks = append(socks, listenersOn(string(b), port)...)
	}
	want := map[string]tcpListen{}
	for _, s := range socks {
		want[fmt.Sprintf("socket:[%d]", s.inode)] = s
	}
	found := map[uint64]bool{}
	for _, pid := range pids() {
		dir := filepath.Join(procRoot, strconv.Itoa(pid), "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		holds := false
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join(dir, fd.Name()))
			if s, ok := want[target]; err == nil && ok {
				found[s.inode], holds = true, true
			}
		}
		if st, ok := stat(pid); holds && ok && live(st.State) {
			ms = append(ms, member{pid: pid, start: st.Starttime, comm: st.Comm, pgrp: st.PGRP})
		}
	}
	for _, s := range socks {
		if !found[s.inode] {
			unknown = append(unknown, fmt.Sprintf("a socket of uid %s whose process cannot be read", s.uid))
		}
	}
	return ms, unknown, nil
}

// alive reports whether m still runs: the same pid with the same start.
func (m member) alive() bool {
	st, ok := stat(m.pid)
	return ok && st.Starttime == m.start && live(st.State)
}

// signal sends sig to m if it is still the process it was (same start).
func (m member) signal(sig syscall.Signal) {
	if m.alive() {
		_ = syscall.Kill(m.pid, sig)
	}
}

// cmdline is a process's argv, nil when it cannot be read.
func cmdline(pid int) []string {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "cmdline"))
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}
