package launch

import (
	"os"
	"strconv"
	"testing"
)

func TestParseStat(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   string
		want procStat
		ok   bool
	}{
		{"plain", "1234 (sleep) S 1 1234 1234 0 -1 4194304", procStat{'S', 1234}, true},
		{"comm with spaces and parens", "77 (python3 (worker) 1) R 70 70 70 0", procStat{'R', 70}, true},
		{"zombie", "9 (sh) Z 1 5 5 0", procStat{'Z', 5}, true},
		{"truncated", "9 (sh) Z 1", procStat{}, false},
		{"no comm", "9 sh Z 1 5", procStat{}, false},
		{"bad pgrp", "9 (sh) S 1 x 5", procStat{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, ok := parseStat([]byte(c.in))
			if got != c.want || ok != c.ok {
				t.Errorf("parseStat(%q) = %+v, %v; want %+v, %v", c.in, got, ok, c.want, c.ok)
			}
		})
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("1234 (sleep) S 1 1234 1234 0 -1 4194304"))
	f.Add([]byte("77 (a) b) c) R 70 70"))
	f.Add([]byte(")"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, ok := parseStat(b)
		if !ok && st != (procStat{}) {
			t.Fatalf("not ok but %+v", st)
		}
	})
}

// The test process itself is live and in a group of its own kind.
func TestParseStatOfThisProcess(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	st, ok := parseStat(b)
	if !ok || !st.live() {
		t.Fatalf("parseStat(/proc/self/stat) = %+v, %v", st, ok)
	}
	if !groupAlive(st.pgrp) {
		t.Errorf("groupAlive(%d) = false for this test's own group", st.pgrp)
	}
}

// processGone reports whether pid has exited: no longer in /proc, or a zombie
// (which, where PID 1 does not reap orphans, stays in /proc forever).
func processGone(t *testing.T, pid int) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	st, ok := parseStat(b)
	return ok && !st.live()
}
