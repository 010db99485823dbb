package launch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/procfs"
)

// statLine is a /proc/PID/stat line as the kernel writes it, with the given
// command name, state and process group.
func statLine(pid int, comm, state string, pgrp int) string {
	return fmt.Sprintf("%d (%s) %s 1 %d %d 0 -1 4194304 99 0 0 0 0 0 0 0 20 0 1 0 97523 3133440 358 "+
		"18446744073709551615 94721144238080 94721144257961 140737425043264 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 "+
		"94721144273968 94721144275584 94721885863936 140737425050307 140737425050327 140737425050327 140737425051627 0\n",
		pid, comm, state, pgrp, pgrp)
}

// A group is alive while /proc lists a member that is neither a zombie nor
// dead, whatever its command name holds; lines that do not parse are no
// member. The /proc is a tree in a temporary directory, read by procfs.
func TestGroupAliveIn(t *testing.T) {
	t.Parallel()
	const pgid = 70
	cases := []struct {
		name  string
		stats map[int]string // pid → /proc/PID/stat
		want  bool
	}{
		{"a sleeping member", map[int]string{70: statLine(70, "sleep", "S", pgid)}, true},
		{"comm with spaces and parens", map[int]string{77: statLine(77, "python3 (worker) 1)", "R", pgid)}, true},
		{"a zombie", map[int]string{9: statLine(9, "sh", "Z", pgid)}, false},
		{"dead", map[int]string{9: statLine(9, "sh", "X", pgid), 10: statLine(10, "sh", "x", pgid)}, false},
		{"a zombie and a live member", map[int]string{9: statLine(9, "sh", "Z", pgid), 12: statLine(12, "vllm", "D", pgid)}, true},
		{"another group's process", map[int]string{5: statLine(5, "sleep", "S", 71)}, false},
		{"truncated", map[int]string{9: "9 (sh) S 1 70"}, false},
		{"no comm", map[int]string{9: "9 sh S 1 70 70 0"}, false},
		{"no processes", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			for pid, stat := range c.stats {
				dir := filepath.Join(root, fmt.Sprint(pid))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			fs, err := procfs.NewFS(root)
			if err != nil {
				t.Fatal(err)
			}
			if got := groupAliveIn(fs, pgid); got != c.want {
				t.Errorf("groupAliveIn = %v, want %v", got, c.want)
			}
		})
	}
}

// The test process itself is live and in a group of its own kind.
func TestGroupOfThisProcess(t *testing.T) {
	t.Parallel()
	self, err := procfs.Self()
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	st, err := self.Stat()
	if err != nil || !live(st.State) {
		t.Fatalf("/proc/self/stat = %+v, %v", st, err)
	}
	if !groupAlive(st.PGRP) {
		t.Errorf("groupAlive(%d) = false for this test's own group", st.PGRP)
	}
	if s := startTime(os.Getpid()); s != fmt.Sprint(st.Starttime) || s == "0" {
		t.Errorf("startTime = %q, want %d", s, st.Starttime)
	}
}

// processGone reports whether pid has exited: no longer in /proc, or a zombie
// (which, where PID 1 does not reap orphans, stays in /proc forever).
func processGone(t *testing.T, pid int) bool {
	t.Helper()
	p, err := procfs.NewProc(pid)
	if err != nil {
		return true
	}
	st, err := p.Stat()
	if err != nil {
		return errors.Is(err, os.ErrNotExist) // a stat line that does not parse tells nothing
	}
	return !live(st.State)
}
