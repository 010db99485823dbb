package selfmon

import (
	"math"
	"testing"
)

// The machine's busy CPU-seconds (user, nice, system, irq, softirq and
// steal; not idle, iowait or guest, which user already holds), this
// process's (utime + stime), both from ticks of 1/100 s, and the online
// CPUs, from /proc files as the kernel writes them.
func TestHostCPUOf(t *testing.T) {
	t.Parallel()
	const stat = `cpu  61706 49001 26294 53891 1887 7 994 857 300 11
cpu0 30993 24165 12579 28629 129 3 395 429 150 5
cpu1 30713 24836 13715 25262 1757 4 598 428 150 6
intr 4 1 2 1
ctxt 1000
btime 1764800000
processes 900
procs_running 2
procs_blocked 0
softirq 10 1 2 3 4 0 0 0 0 0 0
`
	// The command name holds a space and a parenthesis; utime 250, stime 75.
	const self = "4242 (llm bench) (x)) R 1 4242 4242 0 -1 4194304 99 0 0 0 250 75 3 1 20 0 9 0 97523 3133440 358 " +
		"18446744073709551615 94721144238080 94721144257961 140737425043264 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 " +
		"94721144273968 94721144275584 94721885863936 140737425050307 140737425050327 140737425050327 140737425051627 0\n"
	p := procWith(t, map[string]string{"stat": stat, "4242/stat": self})
	busy, own, cores, ok := hostCPUOf(p.fs, p.proc(t, 4242))
	wantBusy := (61706 + 49001 + 26294 + 7 + 994 + 857) / 100.0
	if !ok || math.Abs(busy-wantBusy) > 1e-9 || math.Abs(own-3.25) > 1e-9 || cores != 2 {
		t.Errorf("hostCPUOf = busy %v, self %v, %d cores, %v; want %v, 3.25, 2, true", busy, own, cores, ok, wantBusy)
	}

	// Unreadable: no measurement rather than a wrong one.
	for name, files := range map[string]map[string]string{
		"no /proc/stat":      {"4242/stat": self},
		"no cpu lines":       {"stat": "intr 4 1\n", "4242/stat": self},
		"a cpu line garbled": {"stat": "cpu  x y z\n", "4242/stat": self},
		"own stat cut short": {"stat": stat, "4242/stat": "4242 (llmbench) R 1 4242\n"},
	} {
		p := procWith(t, files)
		if _, _, _, ok := hostCPUOf(p.fs, p.proc(t, 4242)); ok {
			t.Errorf("%s: measured", name)
		}
	}
}
