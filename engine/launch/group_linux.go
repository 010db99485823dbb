package launch

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// sysProcAttr puts the engine in a process group of its own (so that one
// signal reaches all its processes, and a Ctrl-C on llmbench's terminal reaches
// llmbench alone, which then stops the engine in order) and kills it if
// llmbench dies without stopping it. SIGKILL, not SIGTERM: nothing would be
// left to escalate; the engines' own workers watch their parent's death.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// groupAlive reports whether the process group has a live member. A zombie is
// not one: where PID 1 does not reap orphans (some containers) they stay
// forever, and kill(-pgid, 0) still finds them, so /proc is read to tell.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	dir, err := os.ReadDir("/proc")
	if err != nil {
		return true // cannot tell: assume the worst
	}
	for _, d := range dir {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		if st, ok := parseStat(b); ok && st.pgrp == pgid && st.live() {
			return true
		}
	}
	return false
}

// procStat is what groupAlive needs of /proc/PID/stat.
type procStat struct {
	state byte
	pgrp  int
}

// live: neither a zombie (Z) nor dead (X, x).
func (s procStat) live() bool { return s.state != 'Z' && s.state != 'X' && s.state != 'x' }

// parseStat reads the state and process group of a /proc/PID/stat line:
// "pid (comm) state ppid pgrp ...". comm may hold spaces and parentheses, so
// the fields start after the last ')'.
func parseStat(b []byte) (procStat, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return procStat{}, false
	}
	pgrp, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return procStat{}, false
	}
	return procStat{state: f[0][0], pgrp: pgrp}, true
}

// signalGroup sends sig to every process of the group.
func signalGroup(pgid int, sig syscall.Signal) error {
	return syscall.Kill(-pgid, sig)
}
