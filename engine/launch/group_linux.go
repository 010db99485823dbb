package launch

import (
	"errors"
	"syscall"

	"github.com/prometheus/procfs"
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
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return true // cannot tell: assume the worst
	}
	return groupAliveIn(fs, pgid)
}

// groupAliveIn reports whether the /proc that fs reads lists a live member
// of the group.
func groupAliveIn(fs procfs.FS, pgid int) bool {
	procs, err := fs.AllProcs()
	if err != nil {
		return true // cannot tell: assume the worst
	}
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil {
			continue // exited meanwhile (or a stat line procfs cannot read)
		}
		if st.PGRP == pgid && live(st.State) {
			return true
		}
	}
	return false
}

// live: a process state (/proc/PID/stat's third field) that is neither a
// zombie (Z) nor dead (X, x).
func live(state string) bool { return state != "Z" && state != "X" && state != "x" }

// signalGroup sends sig to every process of the group.
func signalGroup(pgid int, sig syscall.Signal) error {
	return syscall.Kill(-pgid, sig)
}
