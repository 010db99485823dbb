package launch

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// groupIdentity is what tells this group from a later one with its number
// (the boot, the leader's start time and name) and who owns it (this
// process, with its start time).
func groupIdentity(pgid int) leftover {
	me := os.Getpid()
	return leftover{pgid: pgid, bootID: bootID(), start: startTime(pgid), command: command(pgid), owner: me, ownerStart: startTime(me)}
}

// bootID is read as a file: procfs does not read /proc/sys/kernel/random/boot_id.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// stat reads /proc/PID/stat; ok is false when it cannot be read (the
// process is gone).
func stat(pid int) (st procfs.ProcStat, ok bool) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return st, false
	}
	st, err = p.Stat()
	return st, err == nil
}

// startTime is field 22 of /proc/PID/stat, the process's start in clock
// ticks after boot; "" when it cannot be read (the process is gone).
func startTime(pid int) string {
	if st, ok := stat(pid); ok {
		return strconv.FormatUint(st.Starttime, 10)
	}
	return ""
}

// command is the process's name (/proc/PID/stat's comm), "" when it cannot
// be read.
func command(pid int) string {
	if st, ok := stat(pid); ok {
		return st.Comm
	}
	return ""
}

// killLeftover kills l's group when its owner is dead and it is still the
// engine's. Linux does not
// give a process an id that is still some group's id, so a group with live
// members whose leader is gone is the engine's; a leader alive under the
// number with another start time is a new process, and nothing of the
// engine's is left.
func killLeftover(l leftover) error {
	if missing := l.missing(); missing != "" {
		return fmt.Errorf("the file lacks %s, so the group cannot be told from another with its number: not acting on it; look at process group %d yourself", missing, l.pgid)
	}
	if l.bootID != bootID() {
		return errNotOurs // written before a reboot
	}
	if startTime(l.owner) == l.ownerStart {
		return errOwnerAlive
	}
	// The launch's processes that left the group (a daemonizing launch
	// command) carry its id: whatever became of the group, they are the
	// dead llmbench's engine.
	if l.launchID != "" {
		since, _ := strconv.ParseUint(l.start, 10, 64)
		for _, m := range escaped(l.launchID, l.pgid, since) {
			m.signal(syscall.SIGKILL)
		}
	}
	if !groupAlive(l.pgid) {
		return errNotOurs
	}
	// The leader's start time within one boot is its identity: no two
	// processes share a pid and a start. Its name is not compared: a
	// launcher that execs the server (sh -c 'exec vllm serve …') changes
	// it, and the group is still the engine's.
	if s := startTime(l.pgid); s != "" && s != l.start {
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
