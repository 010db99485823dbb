//go:build unix && !linux

package launch

import (
	"errors"
	"syscall"
)

// sysProcAttr puts the engine in a process group of its own (so that one
// signal reaches all its processes, and a Ctrl-C on llmbench's terminal
// reaches llmbench alone, which then stops the engine in order). There is no
// parent-death signal here: an engine outlives a llmbench that is killed.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// groupAlive reports whether the process group has a member; unreaped
// zombies count here, there being no portable way to tell them apart.
func groupAlive(pgid int) bool {
	return !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

// signalGroup sends sig to every process of the group.
func signalGroup(pgid int, sig syscall.Signal) error {
	return syscall.Kill(-pgid, sig)
}
