package launch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/llmbench-org/llmbench/internal/inputfile"
	"github.com/llmbench-org/llmbench/rundir/atomicfile"
)

// GroupFile is written in the run directory (the directory of
// Config.LogPath) when the engine starts: its first line is the engine's
// process group id (so `kill -9 -$(head -1 engine.pgid)` works by hand), then
// "boot_id …" and "start …" lines that tell that group from a later one given
// the same number, "command …" (the leader's name), "owner PID START" (the
// llmbench that launched it, with its start time) and "launch_id …" (the id
// every process of the launch carries, also one that left the group). It is removed once a stop
// has seen the whole group gone; a GroupFile left behind means llmbench died
// (kill -9, a crash, a power cut) with the engine possibly still running,
// and KillLeftover ends it — only once its owner is dead, since a GroupFile
// whose llmbench still runs belongs to a live run (two CI jobs sharing one
// runs directory), and only when every identity field matches.
//
// Why it is needed: on Linux the engine's first process gets a parent-death
// signal (SIGKILL when llmbench dies) but that reaches only that process. A
// multi-process engine (a Python server with its tokenizer, scheduler and
// per-GPU workers) keeps its other processes, in the same process group,
// holding the port and the GPUs. Every normal stop path (Engine.Stop, a
// failed or canceled Start) signals the whole group, so they are covered;
// only llmbench's own sudden death is not, and the GroupFile is what is left
// to find the group by.
const GroupFile = "engine.pgid"

// leftover is a GroupFile's content.
type leftover struct {
	pgid    int
	bootID  string // Linux: /proc/sys/kernel/random/boot_id when it was written
	start   string // Linux: the leader's start time, in clock ticks after boot
	command string // Linux: the leader's name when launched (/proc/PID/stat's comm), for people: an exec changes it
	// owner and ownerStart are the llmbench process that launched the
	// engine and its start time: while that process runs, the engine is
	// its, whatever else is in the runs directory.
	owner      int
	ownerStart string
	// launchID is the launch's id (launchIDEnv), optional: with it, the
	// launch's processes that left the group (a daemon) are found too.
	launchID string
}

// missing names the identity fields a GroupFile lacks ("" when it has them
// all): a file missing one is reported and never acted on, since a group
// number alone may now be anyone's.
func (l leftover) missing() string {
	var out []string
	for _, f := range []struct {
		name string
		ok   bool
	}{{"boot_id", l.bootID != ""}, {"start", l.start != ""}, {"command", l.command != ""}, {"owner", l.owner > 0 && l.ownerStart != ""}} {
		if !f.ok {
			out = append(out, f.name)
		}
	}
	return strings.Join(out, ", ")
}

// groupFilePath is where the GroupFile of an engine logging to logPath goes,
// "" for none (no log path, no run directory).
func groupFilePath(logPath string) string {
	if logPath == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(logPath), GroupFile)
}

// writeGroupFile records the engine's group in path (when not "").
func writeGroupFile(path string, pgid int, launchID string) error {
	if path == "" {
		return nil
	}
	l := groupIdentity(pgid)
	b := fmt.Sprintf("%d\nboot_id %s\nstart %s\ncommand %s\nowner %d %s\nlaunch_id %s\n", l.pgid, l.bootID, l.start, l.command, l.owner, l.ownerStart, launchID)
	// Atomic: a reaper reading the file while it is written (another run in
	// the same runs directory) never sees half a group.
	if err := atomicfile.WriteFile(path, []byte(b)); err != nil {
		return fmt.Errorf("engine group file: %w", err)
	}
	return nil
}

// readGroupFile parses a GroupFile.
func readGroupFile(path string) (leftover, error) {
	b, err := inputfile.ReadAll(path, inputfile.RunFile) // a FIFO must not block the reaper
	if err != nil {
		return leftover{}, err
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	var l leftover
	l.pgid, err = strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || l.pgid <= 1 {
		return leftover{}, fmt.Errorf("%s: first line %q is not a process group id", path, lines[0])
	}
	for _, line := range lines[1:] {
		k, v, _ := strings.Cut(line, " ")
		switch k {
		case "boot_id":
			l.bootID = v
		case "start":
			l.start = v
		case "command":
			l.command = v
		case "launch_id":
			l.launchID = v
		case "owner":
			pid, start, _ := strings.Cut(v, " ")
			if n, err := strconv.Atoi(pid); err == nil && n > 0 {
				l.owner, l.ownerStart = n, start
			}
		}
	}
	return l, nil
}

// errNotOurs says that a GroupFile's group is gone or now someone else's.
var errNotOurs = errors.New("not the engine's group any more")

// errOwnerAlive says that the llmbench that launched the group still runs:
// the engine is a live run's, not a leftover.
var errOwnerAlive = errors.New("its llmbench still runs")

// KillLeftover ends the engine that a llmbench killed outright left running
// from the run directory runDir, found by the GroupFile there: it checks
// that the llmbench that launched it is dead and that the group is still the
// engine's (same boot, same leader and command, or the leader gone and its
// group still alive), sends SIGKILL to the whole group, waits for it to be
// gone, and removes the file. It returns the group id it killed, 0 when
// there was nothing to kill: no GroupFile; one whose llmbench still runs
// (another run's live engine: the file is kept); one whose group has ended
// or whose number now belongs to another process (the file is removed). A
// GroupFile missing an identity field is an error and is kept: it is never
// acted on. Only Linux can check a group's identity: elsewhere it kills
// nothing and says so, naming the group.
//
// A later run, or `llmbench` at start-up, calls it on each earlier run
// directory of its results root that still holds a GroupFile (a run
// directory keeps one only if its llmbench never stopped its engine).
func KillLeftover(runDir string) (int, error) {
	path := filepath.Join(runDir, GroupFile)
	l, err := readGroupFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	err = killLeftover(l)
	if errors.Is(err, errOwnerAlive) {
		return 0, nil
	}
	if errors.Is(err, errNotOurs) {
		_ = os.Remove(path)
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("leftover engine group %d (%s): %w", l.pgid, path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return l.pgid, err
	}
	return l.pgid, nil
}
