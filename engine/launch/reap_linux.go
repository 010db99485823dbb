package launch

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// groupIdentity is what tells this group from a later one with its number:
// the boot and the leader's start time.
func groupIdentity(pgid int) leftover {
	return leftover{pgid: pgid, bootID: bootID(), start: startTime(pgid)}
}

// bootID is read as a file: procfs does not read /proc/sys/kernel/random/boot_id.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// startTime is field 22 of /proc/PID/stat, the process's start in clock
// ticks after boot; "" when it cannot be read (the process is gone).
func startTime(pid int) string {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return ""
	}
	st, err := p.Stat()
	if err != nil {
		return ""
	}
	return strconv.FormatUint(st.Starttime, 10)
}

// killLeftover kills l's group when it is still the engine's. Linux does not
// give a process an id that is still some group's id, so a group with live
// members whose leader is gone is the engine's; a leader alive under the
// number with another start time is a new process, and nothing of the
// engine's is left.
func killLeftover(l leftover) error {
	if l.bootID != "" && l.bootID != bootID() {
		return errNotOurs // written before a reboot
	}
	if !groupAlive(l.pgid) {
		return errNotOurs
	}
	if s := startTime(l.pgid); s != "" && l.start != "" && s != l.start {
		return errNotOurs
	}
	if err := signalGroup(l.pgid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), killTimeout)
	defer cancel()
	for groupAlive(l.pgid) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}
